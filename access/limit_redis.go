package access

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
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

// Statuses returned by admitScript.
const (
	redisRefusedSecond = 0
	redisAdmitted      = 1
	redisRefusedDay    = 2
	redisNeedSeed      = -1
)

// admitScript decides one call atomically on the Redis server's clock, so that every replica
// shares one clock and one count.
//
// KEYS[1] is the window: a sorted set of the calls admitted in the last second, scored by their
// time in microseconds; members add a nonce to the time so that two calls in one microsecond stay
// two. KEYS[2] is the day counter's key without the day, which the script appends from TIME.
// ARGV is the per-second limit, the per-day limit, the nonce, the window's lifetime in ms, the
// calls the call costs against the day and the places it takes in the window (see Limiter).
//
// It returns {status, second used, day used, retry after µs, second reset µs, TIME seconds, TIME
// microseconds, day}. A missing day counter is reported as status -1 instead of being started
// from 0, so that the caller seeds it from durable storage.
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
local dayKey = KEYS[2] .. day

local used = redis.call('GET', dayKey)
if not used then
  return {-1, 0, 0, 0, 0, sec, usec, day}
end
used = tonumber(used)
local perSecond = tonumber(ARGV[1])
local perDay = tonumber(ARGV[2])
local calls = tonumber(ARGV[5])
local places = tonumber(ARGV[6])

-- A call exactly one second old has left the window.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 1000000)
local n = redis.call('ZCARD', KEYS[1])

local function leaves(rank)
  local e = redis.call('ZRANGE', KEYS[1], rank, rank, 'WITHSCORES')
  if #e == 0 then return 0 end
  local d = tonumber(e[2]) + 1000000 - now
  if d < 0 then return 0 end
  if d > 1000000 then return 1000000 end
  return d
end

if used + calls > perDay then
  return {2, n, used, 0, leaves(0), sec, usec, day}
end
if n + places > perSecond then
  local retry = 1000000
  if perSecond > 0 then
    -- The window has room for the call's places once all but perSecond-places of its calls
    -- have left it.
    retry = leaves(n + places - perSecond - 1)
  end
  return {0, n, used, retry, leaves(0), sec, usec, day}
end
for i = 1, places do
  redis.call('ZADD', KEYS[1], now, t[1] .. string.format('%06d', usec) .. ':' .. ARGV[3] .. ':' .. i)
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
used = redis.call('INCRBY', dayKey, calls)
return {1, n + places, used, 0, leaves(0), sec, usec, day}
`

// RedisLimiter is a Limiter whose counts live in Redis, shared by every replica. Each decision is
// one Lua script (EVALSHA, falling back to EVAL when Redis lost its script cache) that reads the
// Redis server's clock, so the replicas' clocks need not agree. It needs Redis 5 or later, whose
// scripts replicate their effects rather than their non-deterministic TIME call.
//
// The keys of one subscription are prefix + "{subscription}:w" (the window) and prefix +
// "{subscription}:d:2026-11-22" (the day counter); the hash tag keeps them in one Redis Cluster
// slot, which a script touching both requires.
type RedisLimiter struct {
	client *redis.Client
	prefix string
	usage  DayUsage
	script *redis.Script
}

// NewRedisLimiter returns a RedisLimiter storing its keys under prefix in client's database and
// seeding day counters Redis does not hold from usage; a nil usage seeds them with 0.
func NewRedisLimiter(client *redis.Client, prefix string, usage DayUsage) *RedisLimiter {
	return &RedisLimiter{client: client, prefix: prefix, usage: usage, script: redis.NewScript(admitScript)}
}

// Admit decides one call with one script run, or three when the day counter must first be
// seeded from DayUsage. Redis failures are ECodeCache.
func (r *RedisLimiter) Admit(ctx context.Context, subscription string, limits flightgraph.Limits, calls int) (Decision, error) {
	calls, places := callsAndPlaces(calls, limits)
	base := r.prefix + "{" + subscription + "}:"
	keys := []string{base + "w", base + "d:"}
	for range redisSeedAttempts {
		res, err := r.script.Run(ctx, r.client, keys, limits.PerSecond, limits.PerDay, rand.Uint64(), redisWindowTTL.Milliseconds(), calls, places).Slice()
		if err != nil {
			return Decision{}, limiterStoreError(err)
		}
		status, d, day, err := parseAdmit(res, limits)
		if err != nil {
			return Decision{}, limiterStoreError(err)
		}
		if status != redisNeedSeed {
			return d, nil
		}
		var used int64
		if r.usage != nil {
			if used, err = r.usage(ctx, subscription, day); err != nil {
				return Decision{}, fmt.Errorf("access: usage of subscription %s on %s: %w", subscription, day, err)
			}
		}
		// NX because another replica may have seeded it, and counted calls on top, meanwhile.
		if err := r.client.SetNX(ctx, keys[1]+day, used, redisDayTTL).Err(); err != nil {
			return Decision{}, limiterStoreError(err)
		}
	}
	return Decision{}, limiterStoreError(fmt.Errorf("the day counter of %s is still missing after %d seeds", subscription, redisSeedAttempts))
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

// parseAdmit turns admitScript's reply into a Decision, also returning the status and the day.
func parseAdmit(res []any, limits flightgraph.Limits) (int64, Decision, string, error) {
	if len(res) != 8 {
		return 0, Decision{}, "", fmt.Errorf("the limiter script returned %d values, want 8", len(res))
	}
	var n [7]int64
	for i := range n {
		v, ok := res[i].(int64)
		if !ok {
			return 0, Decision{}, "", fmt.Errorf("the limiter script returned %T at %d, want an integer", res[i], i)
		}
		n[i] = v
	}
	day, ok := res[7].(string)
	if !ok {
		return 0, Decision{}, "", fmt.Errorf("the limiter script returned %T for the day, want a string", res[7])
	}
	at := time.Unix(n[5], n[6]*int64(time.Microsecond)).UTC()
	d := Decision{
		Allowed:     n[0] == redisAdmitted,
		Limits:      limits,
		SecondUsed:  int(n[1]),
		DayUsed:     n[2],
		RetryAfter:  time.Duration(n[3]) * time.Microsecond,
		SecondReset: time.Duration(n[4]) * time.Microsecond,
		DayReset:    time.Unix((limitFloorDiv(n[5], 86400)+1)*86400, 0).UTC(),
		At:          at,
	}
	switch n[0] {
	case redisRefusedSecond:
		d.Code = flightgraph.ECodePerSecondLimit
	case redisRefusedDay:
		d.Code, d.RetryAfter = flightgraph.ECodePerDayLimit, d.DayReset.Sub(at)
	case redisAdmitted, redisNeedSeed:
	default:
		return 0, Decision{}, "", errors.New("the limiter script returned status " + strconv.FormatInt(n[0], 10))
	}
	return n[0], d, day, nil
}

// limiterStoreError is the error of a failed Redis call: ECodeCache, with the cause for the logs.
func limiterStoreError(err error) error {
	return &flightgraph.Error{Code: flightgraph.ECodeCache, Message: "The limiter store is not available.", Err: err}
}
