package access

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
)

// Redis key lifetimes. The window only matters for one second; the day counter must outlive its
// day in every time zone a client or operator might reason in, and then go.
const (
	redisWindowTTL = 2 * time.Second
	redisDayTTL    = 48 * time.Hour
)

// redisSeedAttempts bounds the rounds of seeding a missing day counter: a second round is only
// needed when the UTC day changed between the seed and the decision.
const redisSeedAttempts = 3

// Statuses of one decision of admitScript.
const (
	redisRefusedSecond = 0
	redisAdmitted      = 1
	redisRefusedDay    = 2
	// redisRefusedDayForNow is a per-day refusal that only the calls live leases took from the
	// day make: its RetryAfter is until they are settled, not midnight.
	redisRefusedDayForNow = 3
	redisNeedSeed         = -1
)

// admitScript decides a batch of calls atomically, in order, on the Redis server's clock, so that
// every replica shares one clock and one count (see RedisLimiter for why a batch).
//
// KEYS name each subscription of the batch once: KEYS[3k-2] is the k-th one's window, KEYS[3k-1]
// its day counter's key without the day, which the script appends from TIME, and KEYS[3k] its
// leases (see RedisLimiter). ARGV[1] is the windows' lifetime in ms, ARGV[2] the batch's nonce,
// ARGV[3] a lease's life in µs and ARGV[4] the number of settled leases; then each settled lease
// has four: its subscription's k, its field, the places its calls took and the calls it did not
// use, against the day in its field; then each call has six: its subscription's k, the per-second
// limit, the per-day limit, the calls the call costs against the day, the places it takes in the
// window (see Limiter) and the places of the lease it asks for (0 for none).
//
// A lease is a field of the subscription's lease hash, "<nonce>:<call>:<day>" (the batch's nonce,
// the call's place in it from 1, and the day it took its calls from), whose value is
// "<places>:<expiry µs>": its places count
// in every decision of the subscription, as if its calls were all made, until it is settled or
// until its expiry, a second past the end of its life on Redis's clock. A settled lease's calls
// join the batch's member, on a time after every one of them, while the lease was live, and the
// calls it did not use leave its day's count. A lease is granted only to a call admitted with
// room to spare: the window's places with the leases' and the lease's own at most seven eighths of
// the per-second limit, and likewise the day's count of the per-day limit, which it takes at once.
//
// A window is a sorted set of the places admitted in the last second, scored by their time in
// microseconds. The places one batch admits for a subscription share the batch's time, so they
// are one member, "t<time>:<nonce>:<k>:<lifetime set>:<cumulative>:<places>": its places, and the
// count of places the window has admitted up to and including it (it restarts when the window
// expires), so that the window's count is the newest member's cumulative count less what
// preceded the oldest. A batch thus costs Redis one write to a window however many of its calls
// it admits, and a handful of reads of the window's ends, not one sorted-set insert per call. A
// window's times grow strictly with its members (when Redis's clock is at or behind the newest
// member, the window's time is just past it), so that its cumulative counts grow with their
// ranks: what the count, the expiry at the head and a refusal's RetryAfter (found by halves in a
// long window) rely on.
//
// A batch makes few calls per subscription: five in the common case (the day's count, the
// window's head and newest member, the write, and the day's increment), and what it does between
// them is kept cheap (see the script's first comment). Members that left the window stay until eight have
// left, and are then removed in one call (the count and RetryAfter skip them by their cumulative
// counts). The window's lifetime is set again only when the time it was last set, which each
// member carries on from the newest, is half a second old or more in the window's time (or
// unknown, as in a new window or a member of the versions before it was kept): the window then
// outlives each member it holds by half a second or more, however far the window's time runs
// ahead of Redis's clock. Members of those versions, "<time>:<nonce>:<k>:<cumulative>:<places>",
// end in the same cumulative count and places, so replicas of both kinds read each other's
// windows; but their leading time is Redis's clock, which is behind their score when the clock
// stepped back, so their time is read from their score (ZSCORE: a rolling deploy's cost only).
//
// It returns {TIME seconds, TIME microseconds, day}, then six integers a call: status, second
// used, day used, retry after µs, second reset µs, and the places of the lease granted (0 for
// none). A missing day counter is reported as status -1
// instead of being started from 0, so that the caller seeds it from durable storage.
var admitScript = `
local function civil(days)
  -- Howard Hinnant's days_from_civil inverse: the proleptic Gregorian date of a day number.
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02d', y, m, d)
end

local t = redis.call('TIME')
local sec = tonumber(t[1])
local usec = tonumber(t[2])
local now = sec * 1000000 + usec
local day = civil(math.floor(sec / 86400))

-- What a batch costs Redis is mostly this script's own work, not its commands' (a GET is a
-- quarter of a microsecond): reading a score WITHSCORES costs a C library float printing, a
-- pattern not anchored at the start is tried at every character. So times are whole
-- microseconds in decimals of our own, a member's time is read from its start, and its other
-- fields with one pattern anchored at both ends.
local function decimal(us)
  return string.format('%d%06d', math.floor(us / 1000000), us % 1000000)
end

-- A member's cumulative places, its own places, and when its window's lifetime was set:
-- "t<time>:<nonce>:<sub>:<lifetime set>:<cumulative>:<places>"; set is nil in a member of the
-- versions before it was kept, "<time>:<nonce>:<sub>:<cumulative>:<places>".
local function parse(member)
  local set, cum, places = string.match(member, '^t%d+:%d+:%d+:(%d+):(%d+):(%d+)$')
  if not cum then cum, places = string.match(member, ':(%d+):(%d+)$') end
  return tonumber(cum), tonumber(places), tonumber(set)
end

-- A member's time, its score: the decimal after the t it starts with, or for a member of the
-- versions before, whose leading time is Redis's clock when written, its score.
local function timeOf(window, member)
  if string.byte(member, 1) == 116 then
    return tonumber(string.sub(member, 2, string.find(member, ':', 2, true) - 1))
  end
  return tonumber(redis.call('ZSCORE', window, member))
end

-- The window's lifetime is set again when it was set this long ago (µs) in the window's time,
-- which is at or ahead of Redis's clock: then the window outlives by half a second or more each
-- member it holds, which leaves it a second after its time (ARGV[1] is two seconds).
local lifetimeAgain = 500000

` + leaseLua + `
-- How long a lease's hash is kept past its last lease's expiry and leaseGrace (ms).
local leaseKeyLife = string.format('%d', math.floor((tonumber(ARGV[3]) + 1000000 + leaseGrace) / 1000) + 1000)

-- What the batch knows of subscription k: the time of its window (now, below), its window's
-- places (n), the time its oldest call leaves (oldest), its newest member's cumulative count
-- (cum), how many places its live members hold (stored), how many members that left it are still
-- at its head (gone), when its lifetime was last set (set, false when unknown), its day's count
-- (used, false when Redis does not hold it), the places its live leases hold (reserved) and
-- those of today's among them (today), and what the batch adds.
local subs = {}
local function load(k)
  local window = KEYS[3 * k - 2]
  local s = {window = window, dayKey = KEYS[3 * k - 1] .. day, leaseKey = KEYS[3 * k], now = now, n = 0, cum = 0, stored = 0, gone = 0, set = false, added = 0, placed = 0, reserved = 0, today = 0, leased = false}
  local used = redis.call('GET', s.dayKey)
  s.used = used and tonumber(used) or false
  -- A missing day counter leaves the calls undecided (status -1), not the window and the leases:
  -- a lease is still settled (as at midnight, before the new day's counter is seeded).
  -- The live leases' places count as made. A lease past its expiry is kept for leaseGrace, so
  -- that a late settling still gives its unused calls back to the day, and then dropped.
  local leases = redis.call('HGETALL', s.leaseKey)
  s.leases = {}
  for i = 1, #leases, 2 do
    local places, expiry, leaseDay = leaseOf(leases[i], leases[i + 1])
    if places and expiry > now then
      s.reserved = s.reserved + places
      if leaseDay == day then s.today = s.today + places end
      s.leases[leases[i]] = {places = places, live = true, expiry = expiry, day = leaseDay}
    elseif places and expiry + leaseGrace > now then
      s.leases[leases[i]] = {places = places, live = false, day = leaseDay}
    else
      redis.call('HDEL', s.leaseKey, leases[i])
    end
  end
  local head = redis.call('ZRANGE', window, '0', '7')
  if #head == 0 then return s end
  local newest = head[#head]
  if #head == 8 then newest = redis.call('ZRANGE', window, '-1', '-1')[1] end
  local top = timeOf(window, newest)
  if top >= now then
    -- Redis's clock went back (a step, a failover to a replica behind it), or stands at the
    -- newest member's microsecond: the count reads the members in the order of their times, so
    -- this window's time stands just past its newest member until the clock passes it. A
    -- window more than a second ahead is dropped, as the in-process limiter drops its own
    -- (MemoryLimiter.windowNow): else it would hold the caller shut until the clock caught up.
    if top - now >= 1000000 then
      redis.call('DEL', window)
      return s
    end
    s.now = top + 1
  end
  -- A call exactly one second old has left the window.
  local cutoff = s.now - 1000000
  local expired = 0
  for i = 1, #head do
    if timeOf(window, head[i]) > cutoff then break end
    expired = i
  end
  -- The count goes on from the newest member, left or not; so does the time the window's
  -- lifetime was set, while the window is there.
  local cum, _, set = parse(newest)
  s.cum = cum
  if set and set <= s.now and s.now - set < lifetimeAgain then s.set = set end
  if expired == 8 then
    -- Eight or more members left: remove them all, then read the head again. A window they
    -- all left is gone with them: the next write makes a new one, whose lifetime is unset.
    redis.call('ZREMRANGEBYSCORE', window, '-inf', decimal(cutoff))
    head = redis.call('ZRANGE', window, '0', '7')
    expired = 0
    if #head == 0 then s.set = false end
  end
  s.gone = expired
  local first = expired + 1
  if first <= #head then
    local cum, places = parse(head[first])
    s.oldest = timeOf(window, head[first])
    s.n = s.cum - (cum - places)
    s.stored = s.n
  end
  return s
end

local function leaves(at)
  if not at then return 0 end
  local d = at + 1000000 - now
  if d < 0 then return 0 end
  -- Up to 2 s: a window's time may be up to a second ahead of Redis's clock (see load).
  if d > 2000000 then return 2000000 end
  return d
end

-- The time the call at rank (from 0, oldest first) of the window's live calls leaves it: the
-- time of the first member whose cumulative count passes it. A member holds one place or more,
-- so it is among the first rank+1 members: read at once when few, else found by halves (the
-- cumulative counts grow with the times), so that a refusal reads a few members, not a window of
-- thousands.
local function leavesAt(s, rank)
  if rank >= s.stored then return leaves(s.now) end
  local before = s.cum - s.stored
  -- The members that left the window, still at its head, are below the live ones: a cumulative
  -- count of theirs never passes before.
  if rank < 16 then
    local members = redis.call('ZRANGE', s.window, '0', string.format('%d', rank + s.gone))
    for i = 1, #members do
      if parse(members[i]) - before > rank then return leaves(timeOf(s.window, members[i])) end
    end
    return leaves(s.now)
  end
  local lo, hi, at = 0, rank + s.gone, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local i = string.format('%d', mid)
    local m = redis.call('ZRANGE', s.window, i, i)
    if #m == 0 or parse(m[1]) - before > rank then
      if #m > 0 then at = timeOf(s.window, m[1]) end
      hi = mid - 1
    else
      lo = mid + 1
    end
  end
  return leaves(at or s.now)
end

-- The live leases of s in the order of their expiries, sorted once a batch: the decisions neither
-- settle leases (settlings come before them) nor grant any (grants come after).
local function byExpiry(s)
  if not s.byExpiry then
    local live = {}
    for _, l in pairs(s.leases) do
      if l.live then live[#live + 1] = l end
    end
    table.sort(live, function(a, b) return a.expiry < b.expiry end)
    s.byExpiry = live
  end
  return s.byExpiry
end

-- When (µs from now) the window and the live leases have room for places more under perSecond:
-- the earliest of, for each number of leases gone in the order of their expiries, the time the
-- last of them has expired (its places have left by then, its calls used or not, settled or not:
-- a settled lease's calls leave the window a second after its settling, before its expiry) and
-- the window's calls that must leave besides have left it. A number of leases gone whose
-- remaining ones hold too many places for the call on their own is no answer, however empty the
-- window (the third review: a lease of 250 under 256 a second had a call of 10 told to retry
-- when the window had emptied, before the lease's expiry). Kept for the batch per number of
-- places and limit (a batch may carry a subscription's calls under two limits, across a plan
-- change) until a call is admitted: a batch of refusals costs one walk, not one each.
local function secondRoom(s, places, perSecond)
  s.rooms = s.rooms or {}
  local key = places .. ':' .. perSecond
  if s.rooms[key] then return s.rooms[key] end
  local live = byExpiry(s)
  local reserved, after, best = s.reserved, 0, nil
  for j = 0, #live do
    if j > 0 then
      reserved = reserved - live[j].places
      after = live[j].expiry - now
    end
    -- The expiries only grow: no later number of leases gone comes sooner.
    if best and after >= best then break end
    if reserved + places <= perSecond then
      local rank = s.n + reserved + places - perSecond - 1
      local t = after
      if rank >= 0 then t = math.max(t, leavesAt(s, rank)) end
      if not best or t < best then best = t end
      if rank < 0 then break end
    end
  end
  -- None: the call holds more places than the limit, and is never admitted.
  s.rooms[key] = best or 1000000
  return s.rooms[key]
end

local function sub(k)
  local s = subs[k]
  if not s then
    s = load(k)
    subs[k] = s
  end
  return s
end

local leaseLife = tonumber(ARGV[3])
local settled = tonumber(ARGV[4])
for i = 0, settled - 1 do
  local a = 5 + 4 * i
  local k, field, placed, unused = tonumber(ARGV[a]), ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local s = sub(k)
  local lease = s.leases and s.leases[field]
  -- Only a lease Redis holds is settled, once: a settling sent again (a retried run) or one of a
  -- lease Redis lost (with its day's count, since seeded again from durable usage) changes
  -- nothing.
  if lease then
    redis.call('HDEL', s.leaseKey, field)
    s.leases[field] = nil
  end
  -- A live lease's calls join the window now, in place of its places; an expired one's have left
  -- it, as its places did.
  if lease and lease.live then
    s.reserved = s.reserved - lease.places
    if lease.day == day then s.today = s.today - lease.places end
    if placed > 0 then
      s.n = s.n + placed
      s.placed = s.placed + placed
      if not s.oldest then s.oldest = s.now end
    end
  end
  -- The calls it did not use leave its day's count, while Redis holds that.
  if lease and unused > 0 then
    local leaseDay = lease.day
    if s.used and leaseDay == day then
      s.used = s.used - unused
      s.added = s.added - unused
    elseif leaseDay and redis.call('EXISTS', KEYS[3 * k - 1] .. leaseDay) == 1 then
      redis.call('DECRBY', KEYS[3 * k - 1] .. leaseDay, string.format('%d', unused))
    end
  end
end

local out = {sec, usec, day}
local asks = {}
local first = 5 + 4 * settled
for c = 0, (#ARGV - first + 1) / 6 - 1 do
  local a = first + 6 * c
  local k = tonumber(ARGV[a])
  local s = sub(k)
  local o = 4 + 6 * c
  if not s.used then
    out[o], out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = -1, 0, 0, 0, 0, 0
  else
    local perSecond = tonumber(ARGV[a + 1])
    local perDay = tonumber(ARGV[a + 2])
    local calls = tonumber(ARGV[a + 3])
    local places = tonumber(ARGV[a + 4])
    local want = tonumber(ARGV[a + 5])
    local status, retry = 1, 0
    if s.used + calls > perDay then
      status = 2
      -- Refused only for the calls live leases took from the day and may give back: per day,
      -- until they are settled.
      -- Only today's leases give back to today: one of yesterday, live just after midnight,
      -- took its places from yesterday's count (the fourth review).
      if s.today > 0 and s.used - s.today + calls <= perDay then
        local first
        for _, l in ipairs(byExpiry(s)) do
          if l.day == day then
            first = l.expiry
            break
          end
        end
        status, retry = 3, math.min(first - now, leaseLife)
      end
    elseif s.n + s.reserved + places > perSecond then
      status, retry = 0, 1000000
      if perSecond > 0 then
        retry = secondRoom(s, places, perSecond)
      end
    else
      s.n = s.n + places
      s.rooms = nil
      s.placed = s.placed + places
      if not s.oldest then s.oldest = s.now end
      s.used = s.used + calls
      s.added = s.added + calls
    end
    out[o], out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = status, s.n, s.used, retry, leaves(s.oldest), 0
    if status == 1 and want > 0 then
      asks[#asks + 1] = {c = c, s = s, want = want, perSecond = perSecond, perDay = perDay}
    end
  end
end
-- Leases are granted once the batch's calls are decided, from the room they left.
for _, ask in ipairs(asks) do
  local s, want = ask.s, ask.want
  -- The window's places with the leases' stay within seven eighths of the limit, and so does the
  -- day's count; the live leases take at most an eighth of what the day has left.
  if 8 * (s.n + s.reserved + want) <= 7 * ask.perSecond and 8 * (s.used + want) <= 7 * ask.perDay and 8 * (s.reserved + want) <= ask.perDay - s.used then
    local expiry = now + leaseLife + 1000000
    local field = string.format('%s:%d:%s', ARGV[2], ask.c + 1, day)
    redis.call('HSET', s.leaseKey, field, string.format('%d:%d', want, expiry))
    s.leases[field] = {places = want, live = true, expiry = expiry, day = day}
    s.reserved = s.reserved + want
    s.today = s.today + want
    s.used = s.used + want
    s.added = s.added + want
    s.leased = true
    out[9 + 6 * ask.c] = want
  end
end
for k, s in pairs(subs) do
  if s.placed > 0 then
    local at = decimal(s.now)
    redis.call('ZADD', s.window, at, string.format('t%s:%s:%d:%d:%d:%d', at, ARGV[2], k, s.set or now, s.cum + s.placed, s.placed))
    -- After the ZADD: a window without members has no key to set a lifetime on.
    if not s.set then redis.call('PEXPIRE', s.window, ARGV[1]) end
  end
  if s.added ~= 0 then
    redis.call('INCRBY', s.dayKey, string.format('%d', s.added))
  end
  if s.leased then
    -- The hash outlives each lease it holds, and its grace.
    redis.call('PEXPIRE', s.leaseKey, leaseKeyLife)
  end
end
return out
`

// Batching of the decisions (see RedisLimiter).
const (
	// redisBatchMax is the most decisions one script run takes.
	redisBatchMax = 128
	// redisInFlight is how many batches a RedisLimiter has at Redis at once.
	redisInFlight = 2
)

// Leases (see RedisLimiter).
const (
	// redisLeaseMinPerSecond is the least per-second limit a subscription is leased places under:
	// its leases then hold redisLeaseFirst places or more.
	redisLeaseMinPerSecond = 256
	// redisLeaseLife is how long a replica admits calls from a lease, on its own clock from
	// before it asked for it.
	redisLeaseLife = 50 * time.Millisecond
	// redisLeaseFirst is the places of a subscription's first lease; each lease used up within
	// its life doubles the next, up to a 32nd of the per-second limit, each that lives out its life
	// half used or more keeps it, and each used less halves it.
	redisLeaseFirst = 8
)

// RedisLimiter is a Limiter whose counts live in Redis, shared by every replica. Decisions are
// made by a Lua script (EVALSHA, falling back to EVAL when Redis lost its script cache) that reads
// the Redis server's clock, so the replicas' clocks need not agree. It needs Redis 5 or later,
// whose scripts replicate their effects rather than their non-deterministic TIME call.
//
// The decisions of concurrent calls are batched: a call whose decision finds fewer than
// redisInFlight batches at Redis sends one at once, with every decision waiting then (up to
// redisBatchMax); the others wait for the next, which the sender of the latest sends as soon as it
// has its answer. One script run thus decides as many calls as arrived during a round trip, in
// the order they arrived, atomically, so the limits stay exact across replicas and a call alone
// waits for nothing: one round trip, one script run, and one reading of the clock and the day for
// the whole batch instead of one each, which is most of what a decision cost Redis and this
// process. A failed run fails every decision of its batch (ECodeCache), as each call's own run
// would have failed, and every decision queued behind it: a Redis that hangs costs a call one
// client timeout at most, not one per batch queued before its own.
//
// The keys of one subscription are prefix + "{subscription}:win" (the window, a member for each
// batch that admitted calls of it in the last second) and prefix + "{subscription}:d:2026-11-22"
// (the day counter). The window is not the ":w" of the versions before its members were
// weighted: in a rolling deploy the two kinds of replica count in windows of their own for a
// second or two rather than misread each other's members. A batch names each subscription's keys
// once, however many of its calls it decides, and the keys of several subscriptions, so the
// limiter needs one Redis server (a redis.Client, as cmd/flightgraph builds), not a Redis Cluster.
//
// A subscription whose per-second limit is redisLeaseMinPerSecond or more is leased places: a
// call decided by Redis with room to spare (see admitScript) takes, with its own place, a lease of
// a few more (redisLeaseFirst, then as many as the replica used in a lease's life, up to a 32nd of
// the limit), which the replica admits its next calls of the same limits from, in process, for
// redisLeaseLife on its own clock from before it asked. A lease's places count in Redis, as if
// its calls were made, until the replica settles it (when its places are used up, its life ends,
// or the limits change), and its calls then count from the time it is settled, after every one of
// them; one never settled expires a second after its life ended on Redis's clock. So no sliding
// second of Redis's clock holds more calls than the limit, across replicas, as without leases.
// Leases are granted only while the window's places with the leases' stay within seven eighths of
// the limit, and the places a replica's leases hold unused are a 16th of the limit at most (one
// lease's, or two's for the round trip in which one is settled as the next is granted): so a call
// is not refused below about 1 - replicas/16 of the limit (seven eighths with two replicas;
// about, since a leased call counts from its lease's grant until a second after the lease is
// settled, up to redisLeaseLife and a round trip more than its own second), and places left
// unused are given back within a lease's life. The live leases take at most an eighth of what
// the day has left, and a call refused only for their calls is refused per day until they are
// settled, not until midnight. A call admitted from a lease reports the
// window's and the day's counts as its lease's grant did, plus the lease's calls since.
// Subscriptions with a lower limit, such as the Default plan's 5 a second, are decided by Redis
// call by call.
type RedisLimiter struct {
	client *redis.Client
	prefix string
	usage  DayUsage
	script *redis.Script
	now    func() time.Time // the lease clock: time.Now (monotonic)
	// leaseMin is the least per-second limit leased places: redisLeaseMinPerSecond, or none
	// (NoLeases).
	leaseMin int64

	mu      sync.Mutex
	queue   []*redisCall  // decisions waiting for a batch, oldest first
	settles []redisSettle // leases to settle with the next batch
	// unsettled are settlings whose batch failed, sent again with the next call's.
	unsettled []redisSettle
	sending   int // batches at Redis
	leases    map[string]*redisLeases
}

// redisCall is one decision waiting in a RedisLimiter's queue, and then its answer.
type redisCall struct {
	subscription string
	args         [5]int64 // per-second and per-day limits, calls, places, the lease's places asked for

	done    chan struct{} // closed once the answer is in
	status  int64
	d       Decision
	dayOf   string
	granted int64 // the places of the lease granted
	err     error
}

// redisLeases is what a RedisLimiter knows of one subscription's leases.
type redisLeases struct {
	current *redisLease // the lease calls are admitted from, or nil
	asking  bool        // a call in a batch asks for a lease
	next    int64       // the places the next lease asks for
}

// redisLease is a lease a replica admits calls from (see RedisLimiter).
type redisLease struct {
	limits flightgraph.Limits
	field  string    // its field in the subscription's lease hash
	size   int64     // the places and calls it was granted
	places int64     // the places left
	calls  int64     // the calls left against the day
	grant  Decision  // the decision of the call it was granted with
	sent   time.Time // when the grant was asked for, on the lease clock
	timer  *time.Timer
}

// until is the end of the lease's life, on the lease clock.
func (l *redisLease) until() time.Time { return l.sent.Add(redisLeaseLife) }

// redisSettle is a lease to settle: its calls' places, and the calls it did not use.
type redisSettle struct {
	subscription, field string
	placed, unused      int64
	until               time.Time // the end of the lease's life
}

// redisSettleFor is how long after a lease's life a settling that failed is sent again, and how
// long Redis keeps a lease past its expiry, which is a second past its life, for that settling to
// give its unused calls back to the day (the scripts' leaseGrace).
const redisSettleFor = 10 * time.Second

// leaseLua is how both scripts read a lease in a subscription's hash: its field is
// "<nonce>:<call>:<day>" and its value "<places>:<expiry µs>"; leaseOf returns its places, its
// expiry and its day, nil for an entry it cannot read. A lease is kept leaseGrace (µs) past its
// expiry for a late settling.
var leaseLua = `
local leaseGrace = ` + strconv.FormatInt(redisSettleFor.Microseconds(), 10) + `
local function leaseOf(field, value)
  local places, expiry = string.match(value, '^(%d+):(%d+)$')
  return tonumber(places), tonumber(expiry), string.match(field, '^[^:]*:[^:]*:(.*)$')
end
`

// NewRedisLimiter returns a RedisLimiter storing its keys under prefix in client's database and
// seeding day counters Redis does not hold from usage; a nil usage seeds them with 0.
func NewRedisLimiter(client *redis.Client, prefix string, usage DayUsage) *RedisLimiter {
	return &RedisLimiter{client: client, prefix: prefix, usage: usage, script: redis.NewScript(admitScript), now: time.Now,
		leaseMin: redisLeaseMinPerSecond, leases: make(map[string]*redisLeases)}
}

// NoLeases makes r decide every call in Redis, as the versions before leases did: for a rolling
// deploy from one of them, whose replicas do not count leases (see RedisLimiter).
func (r *RedisLimiter) NoLeases() *RedisLimiter {
	r.leaseMin = math.MaxInt64
	return r
}

// Admit decides one call in one batch, or three when the day counter must first be seeded from
// DayUsage. Redis failures are ECodeCache; a ctx done before the answer is its error, although the
// decision may still be made (and the call counted), as when a round trip of its own is cut.
func (r *RedisLimiter) Admit(ctx context.Context, subscription string, limits flightgraph.Limits, calls int) (Decision, error) {
	calls, places := callsAndPlaces(calls, limits)
	if int64(limits.PerSecond) >= r.leaseMin {
		if d, ok := r.fromLease(subscription, limits, int64(calls), int64(places)); ok {
			return d, nil
		}
	}
	c := &redisCall{subscription: subscription, args: [5]int64{int64(limits.PerSecond), int64(limits.PerDay), int64(calls), int64(places)}}
	for range redisSeedAttempts {
		c.done = make(chan struct{})
		r.decide(c)
		select {
		case <-c.done:
		case <-ctx.Done():
			return Decision{}, limiterStoreError(ctx.Err())
		}
		if c.err != nil {
			return Decision{}, c.err
		}
		if c.status != redisNeedSeed {
			c.d.Limits = limits
			return c.d, nil
		}
		day := c.dayOf
		var used int64
		if r.usage != nil {
			var err error
			if used, err = r.usage(ctx, subscription, day); err != nil {
				return Decision{}, fmt.Errorf("access: usage of subscription %s on %s: %w", subscription, day, err)
			}
		}
		// NX because another replica may have seeded it, and counted calls on top, meanwhile.
		if err := r.client.SetNX(ctx, r.dayKey(subscription)+day, used, redisDayTTL).Err(); err != nil {
			return Decision{}, limiterStoreError(err)
		}
	}
	return Decision{}, limiterStoreError(fmt.Errorf("the day counter of %s is still missing after %d seeds", subscription, redisSeedAttempts))
}

// fromLease admits a call from the subscription's lease, when it has one of these limits, live,
// with room for the call; else it settles the lease it has, if any, and the call goes to Redis.
func (r *RedisLimiter) fromLease(subscription string, limits flightgraph.Limits, calls, places int64) (Decision, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.leases[subscription]
	if st == nil || st.current == nil {
		return Decision{}, false
	}
	l, now := st.current, r.now()
	// Since before Redis's clock read grant.At: a call's time is never behind Redis's, so that
	// none past midnight counts in the day before.
	elapsed := now.Sub(l.sent)
	at := l.grant.At.Add(elapsed)
	if l.limits != limits || !now.Before(l.until()) || !at.Before(l.grant.DayReset) || l.places < places || l.calls < calls {
		r.retire(subscription, st, l, now)
		return Decision{}, false
	}
	l.places -= places
	l.calls -= calls
	d := l.grant
	d.SecondUsed += int(l.size - l.places)
	d.DayUsed += l.size - l.calls
	d.At = at
	// The window's oldest call leaves when it did at the grant; after it, the lease's first.
	if d.SecondReset -= elapsed; d.SecondReset <= 0 {
		d.SecondReset = max(time.Second-elapsed, 0)
	}
	return d, true
}

// retire stops admitting calls from l, the subscription's current lease, and queues it to be
// settled; the caller holds r.mu. The next lease is sized by how much of l was used.
func (r *RedisLimiter) retire(subscription string, st *redisLeases, l *redisLease, now time.Time) {
	st.current = nil
	l.timer.Stop()
	switch {
	case now.Before(l.until()):
		// Used up within its life (or the limits changed).
		st.next = max(min(2*l.size, int64(l.limits.PerSecond/32)), redisLeaseFirst)
	case 2*l.places > l.size:
		st.next = max(l.size/2, redisLeaseFirst)
	}
	if !st.asking && st.next == redisLeaseFirst {
		// Nothing to remember: the next lease starts from the first size anyway. A subscription
		// is remembered only while its leases are busy (half used or more in their life), one
		// entry each.
		delete(r.leases, subscription)
	}
	placed := l.size - l.places
	if !now.Before(l.until().Add(time.Second)) {
		// Its calls have left the window, as its places have in Redis.
		placed = 0
	}
	r.settles = append(r.settles, redisSettle{subscription: subscription, field: l.field, placed: placed, unused: l.calls, until: l.until()})
	if r.sending < redisInFlight {
		r.sending++
		go r.send(false)
	}
}

// decide queues c, and sends batches while fewer than redisInFlight are at Redis: the caller's
// goroutine sends the batch its decision is in, and hands any left to another. A call of a
// subscription leased places asks for a lease when none is asked for.
func (r *RedisLimiter) decide(c *redisCall) {
	r.mu.Lock()
	c.args[4] = 0
	if c.args[0] >= r.leaseMin {
		st := r.leases[c.subscription]
		if st == nil {
			st = &redisLeases{next: redisLeaseFirst}
			r.leases[c.subscription] = st
		}
		if !st.asking && st.current == nil {
			st.asking = true
			c.args[4] = max(min(st.next, c.args[0]/32), redisLeaseFirst)
		}
	}
	r.queue = append(r.queue, c)
	if len(r.unsettled) > 0 {
		r.settles = append(r.settles, r.unsettled...)
		r.unsettled = nil
	}
	send := r.sending < redisInFlight
	if send {
		r.sending++
	}
	r.mu.Unlock()
	if send {
		r.send(true)
	}
}

// send sends the queue's oldest decisions, redisBatchMax at most, then the next, until the queue is
// empty; the caller counted it in sending. The caller's own decision is in the first batch, or
// in a later one when the queue was long: once the first is answered, a goroutine of its own
// sends the rest, so that the caller waits for one round trip only.
func (r *RedisLimiter) send(first bool) {
	for {
		r.mu.Lock()
		n := min(len(r.queue), redisBatchMax)
		settles := r.settles
		if n == 0 && len(settles) == 0 {
			r.sending--
			r.mu.Unlock()
			return
		}
		r.settles = nil
		batch := make([]*redisCall, n)
		copy(batch, r.queue)
		rest := copy(r.queue, r.queue[n:])
		clear(r.queue[rest:])
		r.queue = r.queue[:rest]
		r.mu.Unlock()

		r.run(settles, batch)
		if first {
			r.mu.Lock()
			more := len(r.queue) > 0 || len(r.settles) > 0
			if !more {
				r.sending--
			}
			r.mu.Unlock()
			if more {
				go r.send(false)
			}
			return
		}
	}
}

// windowKey, dayKey and leaseKey are a subscription's keys: its window, its day counter's
// without the day, and its leases.
func (r *RedisLimiter) windowKey(subscription string) string {
	return r.prefix + "{" + subscription + "}:win"
}

func (r *RedisLimiter) dayKey(subscription string) string {
	return r.prefix + "{" + subscription + "}:d:"
}

func (r *RedisLimiter) leaseKey(subscription string) string {
	return r.prefix + "{" + subscription + "}:lease"
}

// run settles leases and decides a batch with one script run, and hands each call its answer.
func (r *RedisLimiter) run(settles []redisSettle, batch []*redisCall) {
	index := make(map[string]int64, len(batch)+len(settles))
	var keys []string
	subscription := func(s string) int64 {
		k, ok := index[s]
		if !ok {
			keys = append(keys, r.windowKey(s), r.dayKey(s), r.leaseKey(s))
			k = int64(len(keys) / 3)
			index[s] = k
		}
		return k
	}
	nonce := rand.Uint64()
	args := make([]any, 4, 4+4*len(settles)+6*len(batch))
	args[0], args[1], args[2], args[3] = redisWindowTTL.Milliseconds(), nonce, redisLeaseLife.Microseconds(), len(settles)
	for _, s := range settles {
		args = append(args, subscription(s.subscription), s.field, s.placed, s.unused)
	}
	for _, c := range batch {
		args = append(args, subscription(c.subscription), c.args[0], c.args[1], c.args[2], c.args[3], c.args[4])
	}
	// A lease is admitted from for its life from now, before Redis's clock starts it.
	sent := r.now()
	// The batch is everyone's: no one caller's context may cut it. The client's read and write
	// timeouts bound it.
	res, err := r.script.Run(context.Background(), r.client, keys, args...).Slice()
	if err != nil {
		// Redis failed (or hung until the client's timeout) while these decisions waited: the
		// ones queued meanwhile fail with the batch rather than each paying for Redis's failure
		// again in a batch of their own; the Fallback decides them at once in-process.
		r.mu.Lock()
		waiting := r.queue
		r.queue = nil
		// The settlings go with the next call's batch, while Redis may still hold their leases.
		for _, st := range settles {
			if sent.Before(st.until.Add(redisSettleFor)) {
				r.unsettled = append(r.unsettled, st)
			}
		}
		r.mu.Unlock()
		batch = append(batch, waiting...)
	} else {
		err = parseAdmit(res, batch)
	}
	r.lease(batch, nonce, sent, err == nil)
	for _, c := range batch {
		if err != nil {
			c.err = limiterStoreError(err)
		}
		close(c.done)
	}
}

// lease takes the leases a batch was granted, and lets the subscriptions whose calls asked for
// one and got none ask again.
func (r *RedisLimiter) lease(batch []*redisCall, nonce uint64, sent time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range batch {
		if c.args[4] == 0 {
			continue
		}
		st := r.leases[c.subscription]
		if st == nil {
			continue
		}
		st.asking = false
		if !ok || c.granted == 0 {
			if st.current == nil {
				// Nothing held: the next ask starts from the first size.
				delete(r.leases, c.subscription)
			}
			continue
		}
		l := &redisLease{
			limits: flightgraph.Limits{PerSecond: int(c.args[0]), PerDay: int(c.args[1])},
			size:   c.granted, places: c.granted, calls: c.granted,
			field: strconv.FormatUint(nonce, 10) + ":" + strconv.Itoa(i+1) + ":" + c.dayOf,
			grant: c.d, sent: sent,
		}
		l.grant.Limits = l.limits
		st.current = l
		sub := c.subscription
		l.timer = time.AfterFunc(redisLeaseLife, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if st := r.leases[sub]; st != nil && st.current == l {
				r.retire(sub, st, l, r.now())
			}
		})
	}
}

// raiseDayScript raises the day counter KEYS[1] of day ARGV[2] to durable usage ARGV[1] and the
// places of that day's leases in KEYS[2] still to be settled, if Redis holds the counter and it
// is lower, keeping its lifetime. A lease took its places from the count when granted, and its
// settling gives back those it did not use; usage holds none of them, so a raise to usage alone
// would be undercut by that settling (the second review: a raise to 20 after a call and a lease
// of 8 left 12 once the lease was settled unused). Calls a lease made that usage already holds
// count twice until midnight: the count errs high, which refuses, never admits. A counter Redis
// does not hold is seeded from durable storage when next needed.
var raiseDayScript = leaseLua + `
local v = redis.call('GET', KEYS[1])
if not v then return -1 end
local n = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local leases = redis.call('HGETALL', KEYS[2])
for i = 1, #leases, 2 do
  local places, expiry, leaseDay = leaseOf(leases[i], leases[i + 1])
  if places and leaseDay == ARGV[2] and expiry + leaseGrace > now then
    n = n + places
  end
end
if tonumber(v) >= n then return tonumber(v) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('SET', KEYS[1], n, 'PX', ttl)
else
  redis.call('SET', KEYS[1], n)
end
return n
`

var raiseDay = redis.NewScript(raiseDayScript)

var _ DayCatchUp = (*RedisLimiter)(nil)

// CatchUp implements DayCatchUp: one DayUsage read and one script run per day.
func (r *RedisLimiter) CatchUp(ctx context.Context, days []SubscriptionDay) ([]SubscriptionDay, error) {
	if r.usage == nil {
		return nil, nil
	}
	var (
		failed []SubscriptionDay
		first  error
	)
	for i, d := range days {
		used, err := r.usage(ctx, d.Subscription, d.Day)
		if err == nil {
			err = raiseDay.Run(ctx, r.client, []string{r.dayKey(d.Subscription) + d.Day, r.leaseKey(d.Subscription)}, used, d.Day).Err()
		}
		if err != nil {
			if ctx.Err() != nil {
				return append(failed, days[i:]...), ctx.Err()
			}
			failed = append(failed, d)
			if first == nil {
				first = err
			}
		}
	}
	return failed, first
}

// parseAdmit turns admitScript's reply into the calls' decisions, statuses and day, all or none.
func parseAdmit(res []any, batch []*redisCall) error {
	if len(res) != 3+6*len(batch) {
		return fmt.Errorf("the limiter script returned %d values for %d calls, want %d", len(res), len(batch), 3+6*len(batch))
	}
	ints := make([]int64, len(res))
	for i, v := range res {
		if i == 2 {
			continue
		}
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("the limiter script returned %T at %d, want an integer", v, i)
		}
		ints[i] = n
	}
	day, ok := res[2].(string)
	if !ok {
		return fmt.Errorf("the limiter script returned %T for the day, want a string", res[2])
	}
	at := time.Unix(ints[0], ints[1]*int64(time.Microsecond)).UTC()
	dayReset := time.Unix((limitFloorDiv(ints[0], 86400)+1)*86400, 0).UTC()
	for i, c := range batch {
		n := ints[3+6*i : 9+6*i]
		d := Decision{
			Allowed:     n[0] == redisAdmitted,
			SecondUsed:  int(n[1]),
			DayUsed:     n[2],
			RetryAfter:  time.Duration(n[3]) * time.Microsecond,
			SecondReset: time.Duration(n[4]) * time.Microsecond,
			DayReset:    dayReset,
			At:          at,
		}
		switch n[0] {
		case redisRefusedSecond:
			d.Code = flightgraph.ECodePerSecondLimit
		case redisRefusedDay:
			d.Code, d.RetryAfter = flightgraph.ECodePerDayLimit, d.DayReset.Sub(at)
		case redisRefusedDayForNow:
			d.Code = flightgraph.ECodePerDayLimit
		case redisAdmitted, redisNeedSeed:
		default:
			return errors.New("the limiter script returned status " + strconv.FormatInt(n[0], 10))
		}
		c.status, c.d, c.dayOf, c.granted = n[0], d, day, n[5]
	}
	return nil
}

// limiterStoreError is the error of a failed Redis call: ECodeCache, with the cause for the logs.
func limiterStoreError(err error) error {
	return &flightgraph.Error{Code: flightgraph.ECodeCache, Message: "The limiter store is not available.", Err: err}
}
