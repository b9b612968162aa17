package access

import (
	"context"
	"errors"
	"fmt"
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
	redisNeedSeed      = -1
)

// admitScript decides a batch of calls atomically, in order, on the Redis server's clock, so that
// every replica shares one clock and one count (see RedisLimiter for why a batch).
//
// KEYS name each subscription of the batch once: KEYS[2k-1] is the k-th one's window, KEYS[2k]
// its day counter's key without the day, which the script appends from TIME. ARGV[1] is the
// windows' lifetime in ms, ARGV[2] the batch's nonce; then each call has five: its subscription's
// k, the per-second limit, the per-day limit, the calls the call costs against the day and the
// places it takes in the window (see Limiter).
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
// It returns {TIME seconds, TIME microseconds, day}, then five integers a call: status, second
// used, day used, retry after µs, second reset µs. A missing day counter is reported as status -1
// instead of being started from 0, so that the caller seeds it from durable storage.
const admitScript = `
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

-- What the batch knows of subscription k: the time of its window (now, below), its window's
-- places (n), the time its oldest call leaves (oldest), its newest member's cumulative count
-- (cum), how many places its live members hold (stored), how many members that left it are still
-- at its head (gone), when its lifetime was last set (set, false when unknown), its day's count
-- (used, false when Redis does not hold it), and what the batch adds.
local subs = {}
local function load(k)
  local window = KEYS[2 * k - 1]
  local s = {window = window, dayKey = KEYS[2 * k] .. day, now = now, n = 0, cum = 0, stored = 0, gone = 0, set = false, added = 0, placed = 0}
  local used = redis.call('GET', s.dayKey)
  s.used = used and tonumber(used) or false
  if not s.used then return s end
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
  if d > 1000000 then return 1000000 end
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

local out = {sec, usec, day}
for c = 0, (#ARGV - 2) / 5 - 1 do
  local a = 3 + 5 * c
  local k = tonumber(ARGV[a])
  local s = subs[k]
  if not s then
    s = load(k)
    subs[k] = s
  end
  local o = 4 + 5 * c
  if not s.used then
    out[o], out[o + 1], out[o + 2], out[o + 3], out[o + 4] = -1, 0, 0, 0, 0
  else
    local perSecond = tonumber(ARGV[a + 1])
    local perDay = tonumber(ARGV[a + 2])
    local calls = tonumber(ARGV[a + 3])
    local places = tonumber(ARGV[a + 4])
    local status, retry = 1, 0
    if s.used + calls > perDay then
      status = 2
    elseif s.n + places > perSecond then
      status, retry = 0, 1000000
      if perSecond > 0 then
        -- The window has room for the call's places once all but perSecond-places of its
        -- calls have left it.
        retry = leavesAt(s, s.n + places - perSecond - 1)
      end
    else
      s.n = s.n + places
      s.placed = s.placed + places
      if not s.oldest then s.oldest = s.now end
      s.used = s.used + calls
      s.added = s.added + calls
    end
    out[o], out[o + 1], out[o + 2], out[o + 3], out[o + 4] = status, s.n, s.used, retry, leaves(s.oldest)
  end
end
for k, s in pairs(subs) do
  if s.placed > 0 then
    local at = decimal(s.now)
    redis.call('ZADD', s.window, at, string.format('t%s:%s:%d:%d:%d:%d', at, ARGV[2], k, s.set or now, s.cum + s.placed, s.placed))
    -- After the ZADD: a window without members has no key to set a lifetime on.
    if not s.set then redis.call('PEXPIRE', s.window, ARGV[1]) end
  end
  if s.added > 0 then
    redis.call('INCRBY', s.dayKey, string.format('%d', s.added))
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
type RedisLimiter struct {
	client *redis.Client
	prefix string
	usage  DayUsage
	script *redis.Script

	mu      sync.Mutex
	queue   []*redisCall // decisions waiting for a batch, oldest first
	sending int          // batches at Redis
}

// redisCall is one decision waiting in a RedisLimiter's queue, and then its answer.
type redisCall struct {
	subscription string
	args         [4]int64 // per-second and per-day limits, calls, places

	done   chan struct{} // closed once the answer is in
	status int64
	d      Decision
	dayOf  string
	err    error
}

// NewRedisLimiter returns a RedisLimiter storing its keys under prefix in client's database and
// seeding day counters Redis does not hold from usage; a nil usage seeds them with 0.
func NewRedisLimiter(client *redis.Client, prefix string, usage DayUsage) *RedisLimiter {
	return &RedisLimiter{client: client, prefix: prefix, usage: usage, script: redis.NewScript(admitScript)}
}

// Admit decides one call in one batch, or three when the day counter must first be seeded from
// DayUsage. Redis failures are ECodeCache; a ctx done before the answer is its error, although the
// decision may still be made (and the call counted), as when a round trip of its own is cut.
func (r *RedisLimiter) Admit(ctx context.Context, subscription string, limits flightgraph.Limits, calls int) (Decision, error) {
	calls, places := callsAndPlaces(calls, limits)
	c := &redisCall{subscription: subscription, args: [4]int64{int64(limits.PerSecond), int64(limits.PerDay), int64(calls), int64(places)}}
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

// decide queues c, and sends batches while fewer than redisInFlight are at Redis: the caller's
// goroutine sends the batch its decision is in, and hands any left to another.
func (r *RedisLimiter) decide(c *redisCall) {
	r.mu.Lock()
	r.queue = append(r.queue, c)
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
		if n == 0 {
			r.sending--
			r.mu.Unlock()
			return
		}
		batch := make([]*redisCall, n)
		copy(batch, r.queue)
		rest := copy(r.queue, r.queue[n:])
		clear(r.queue[rest:])
		r.queue = r.queue[:rest]
		r.mu.Unlock()

		r.run(batch)
		if first {
			r.mu.Lock()
			more := len(r.queue) > 0
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

// windowKey and dayKey are a subscription's keys: its window, and its day counter's without the
// day.
func (r *RedisLimiter) windowKey(subscription string) string {
	return r.prefix + "{" + subscription + "}:win"
}

func (r *RedisLimiter) dayKey(subscription string) string {
	return r.prefix + "{" + subscription + "}:d:"
}

// run decides a batch with one script run and hands each call its answer.
func (r *RedisLimiter) run(batch []*redisCall) {
	index := make(map[string]int64, len(batch))
	var keys []string
	args := make([]any, 2, 2+5*len(batch))
	args[0], args[1] = redisWindowTTL.Milliseconds(), rand.Uint64()
	for _, c := range batch {
		k, ok := index[c.subscription]
		if !ok {
			keys = append(keys, r.windowKey(c.subscription), r.dayKey(c.subscription))
			k = int64(len(keys) / 2)
			index[c.subscription] = k
		}
		args = append(args, k, c.args[0], c.args[1], c.args[2], c.args[3])
	}
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
		r.mu.Unlock()
		batch = append(batch, waiting...)
	} else {
		err = parseAdmit(res, batch)
	}
	for _, c := range batch {
		if err != nil {
			c.err = limiterStoreError(err)
		}
		close(c.done)
	}
}

// raiseDayScript raises the day counter KEYS[1] to ARGV[1] if Redis holds it and it is lower,
// keeping its lifetime. A counter Redis does not hold is seeded from durable storage when next
// needed.
const raiseDayScript = `
local v = redis.call('GET', KEYS[1])
if not v then return -1 end
local n = tonumber(ARGV[1])
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
			err = raiseDay.Run(ctx, r.client, []string{r.dayKey(d.Subscription) + d.Day}, used).Err()
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
	if len(res) != 3+5*len(batch) {
		return fmt.Errorf("the limiter script returned %d values for %d calls, want %d", len(res), len(batch), 3+5*len(batch))
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
		n := ints[3+5*i : 8+5*i]
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
		case redisAdmitted, redisNeedSeed:
		default:
			return errors.New("the limiter script returned status " + strconv.FormatInt(n[0], 10))
		}
		c.status, c.d, c.dayOf = n[0], d, day
	}
	return nil
}

// limiterStoreError is the error of a failed Redis call: ECodeCache, with the cause for the logs.
func limiterStoreError(err error) error {
	return &flightgraph.Error{Code: flightgraph.ECodeCache, Message: "The limiter store is not available.", Err: err}
}
