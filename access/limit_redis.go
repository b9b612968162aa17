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
// For the i-th call (from 1), KEYS[2i-1] is its window: a sorted set of the calls admitted in the
// last second, scored by their time in microseconds; members add a nonce and the place's rank to
// the time so that two calls in one microsecond stay two. KEYS[2i] is its day counter's key
// without the day, which the script appends from TIME. ARGV[1] is the windows' lifetime in ms;
// then each call has five: the per-second limit, the per-day limit, the nonce, the calls the call
// costs against the day and the places it takes in the window (see Limiter).
//
// It returns {TIME seconds, TIME microseconds, day}, then five integers a call: status, second
// used, day used, retry after µs, second reset µs. A missing day counter is reported as status -1
// instead of being started from 0, so that the caller seeds it from durable storage. The calls of
// one subscription in a batch read its window and day counter once, and write its day counter and
// the window's lifetime once.
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
local stamp = t[1] .. string.format('%06d', usec) .. ':'
local out = {sec, usec, day}

-- What the batch learnt of each window and day counter, so that the calls of one subscription
-- in a batch cost one read of each: a window's count and oldest time, a day's count (false when
-- Redis does not hold it), the day's calls to add and the windows to keep alive once at the end.
local windows = {}
local days = {}
local added = {}
local touched = {}

for c = 1, #KEYS / 2 do
  local window = KEYS[2 * c - 1]
  local dayKey = KEYS[2 * c] .. day
  local a = 1 + 5 * (c - 1)
  local used = days[dayKey]
  if used == nil then
    used = redis.call('GET', dayKey)
    used = used and tonumber(used) or false
    days[dayKey] = used
  end
  if not used then
    out[#out + 1] = -1; out[#out + 1] = 0; out[#out + 1] = 0; out[#out + 1] = 0; out[#out + 1] = 0
  else
    local perSecond = tonumber(ARGV[a + 1])
    local perDay = tonumber(ARGV[a + 2])
    local calls = tonumber(ARGV[a + 4])
    local places = tonumber(ARGV[a + 5])

    local w = windows[window]
    if not w then
      -- A call exactly one second old has left the window.
      redis.call('ZREMRANGEBYSCORE', window, '-inf', now - 1000000)
      w = {n = redis.call('ZCARD', window)}
      if w.n > 0 then
        w.oldest = tonumber(redis.call('ZRANGE', window, 0, 0, 'WITHSCORES')[2])
      end
      windows[window] = w
    end
    local function leaves(at)
      if not at then return 0 end
      local d = at + 1000000 - now
      if d < 0 then return 0 end
      if d > 1000000 then return 1000000 end
      return d
    end

    local status, retry = 1, 0
    if used + calls > perDay then
      status = 2
    elseif w.n + places > perSecond then
      status, retry = 0, 1000000
      if perSecond > 0 then
        -- The window has room for the call's places once all but perSecond-places of its
        -- calls have left it.
        local rank = w.n + places - perSecond - 1
        local e = redis.call('ZRANGE', window, rank, rank, 'WITHSCORES')
        retry = leaves(e[2] and tonumber(e[2]))
      end
    else
      local member = stamp .. ARGV[a + 3] .. ':'
      for i = 1, places do
        redis.call('ZADD', window, now, member .. i)
      end
      w.n = w.n + places
      if not w.oldest then w.oldest = now end
      touched[window] = true
      used = used + calls
      days[dayKey] = used
      added[dayKey] = (added[dayKey] or 0) + calls
    end
    out[#out + 1] = status; out[#out + 1] = w.n; out[#out + 1] = used; out[#out + 1] = retry
    out[#out + 1] = leaves(w.oldest)
  end
end
for window in pairs(touched) do
  redis.call('PEXPIRE', window, ARGV[1])
end
for dayKey, n in pairs(added) do
  redis.call('INCRBY', dayKey, n)
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
// The keys of one subscription are prefix + "{subscription}:w" (the window) and prefix +
// "{subscription}:d:2026-11-22" (the day counter). A batch names the keys of several
// subscriptions, so the limiter needs one Redis server (a redis.Client, as cmd/flightgraph
// builds), not a Redis Cluster.
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
	window, day string // keys: the window's, and the day counter's without its day
	args        [5]any // per-second and per-day limits, nonce, calls, places

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
	base := r.prefix + "{" + subscription + "}:"
	c := &redisCall{window: base + "w", day: base + "d:"}
	for range redisSeedAttempts {
		c.args = [5]any{limits.PerSecond, limits.PerDay, rand.Uint64(), calls, places}
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
		if err := r.client.SetNX(ctx, c.day+day, used, redisDayTTL).Err(); err != nil {
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

// run decides a batch with one script run and hands each call its answer.
func (r *RedisLimiter) run(batch []*redisCall) {
	keys := make([]string, 0, 2*len(batch))
	args := make([]any, 1, 1+5*len(batch))
	args[0] = redisWindowTTL.Milliseconds()
	for _, c := range batch {
		keys = append(keys, c.window, c.day)
		args = append(args, c.args[:]...)
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
			err = raiseDay.Run(ctx, r.client, []string{r.prefix + "{" + d.Subscription + "}:d:" + d.Day}, used).Err()
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
