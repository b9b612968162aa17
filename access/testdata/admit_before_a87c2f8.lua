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
