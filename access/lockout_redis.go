package access

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// takeScript counts one Take atomically, all its counters or none, so that replicas racing on one
// counter never let more than its limit through between them.
//
// KEYS are the counters; ARGV holds three values for each: its limit (0 or less: never full), its
// window in milliseconds and how many events to count. A window starts with the first event
// counted (PEXPIRE then) and is never extended, so a refusal neither counts nor delays the end of
// the window. It returns {allowed (1 or 0), the count of the first counter when allowed or of the
// first full one when refused, milliseconds until every full counter has room, the index (from 1)
// of the first full counter}.
const takeScript = `
local full, first, wait = 0, 0, 0
for i, key in ipairs(KEYS) do
  local limit, n = tonumber(ARGV[3*i-2]), tonumber(ARGV[3*i])
  if limit > 0 then
    local count = tonumber(redis.call('GET', key) or '0')
    local ttl = redis.call('PTTL', key)
    if ttl > 0 and count + n > limit then
      if full == 0 then full, first = i, count end
      if ttl > wait then wait = ttl end
    elseif ttl <= 0 and n > limit then
      if full == 0 then full, first = i, 0 end
      if tonumber(ARGV[3*i-1]) > wait then wait = tonumber(ARGV[3*i-1]) end
    end
  end
end
if full > 0 then
  return {0, first, wait, full}
end
for i, key in ipairs(KEYS) do
  if redis.call('PTTL', key) <= 0 then
    -- A first event, or a counter that lost its lifetime: either way the window starts now.
    redis.call('SET', key, 0, 'PX', ARGV[3*i-1])
  end
  local count = redis.call('INCRBY', key, ARGV[3*i])
  if i == 1 then first = count end
end
return {1, first, 0, 0}
`

// RedisLockout is a Lockout whose counts live in Redis, shared by every replica: one script run
// per attempt (or Take) and one DEL per success. Its keys are prefix + SignInKey, under a prefix
// of their own (serve uses "fg:login:" for sign-ins, "fg:mail:" for the mail budget), so they
// hold no e-mail or user name.
type RedisLockout struct {
	client *redis.Client
	prefix string
	script *redis.Script
}

// NewRedisLockout returns a RedisLockout storing its keys under prefix in client's database.
func NewRedisLockout(client *redis.Client, prefix string) *RedisLockout {
	return &RedisLockout{client: client, prefix: prefix, script: redis.NewScript(takeScript)}
}

// Attempt implements Lockout; Redis failures are ECodeCache.
func (r *RedisLockout) Attempt(ctx context.Context, key string) (LockoutDecision, error) {
	return r.Take(ctx, attemptQuota(key))
}

// Take implements Lockout with one script run; Redis failures are ECodeCache.
func (r *RedisLockout) Take(ctx context.Context, quotas []Quota) (LockoutDecision, error) {
	keys, args := make([]string, len(quotas)), make([]any, 0, 3*len(quotas))
	for i, q := range quotas {
		keys[i] = r.prefix + q.Key
		args = append(args, q.Max, q.Window.Milliseconds(), q.n())
	}
	res, err := r.script.Run(ctx, r.client, keys, args...).Int64Slice()
	if err != nil {
		return LockoutDecision{}, limiterStoreError(err)
	}
	if len(res) != 4 {
		return LockoutDecision{}, limiterStoreError(fmt.Errorf("the lockout script returned %d values, want 4", len(res)))
	}
	d := LockoutDecision{Allowed: res[0] == 1, Attempts: int(res[1])}
	if !d.Allowed {
		d.RetryAfter, d.Full = time.Duration(res[2])*time.Millisecond, int(res[3])-1
	}
	return d, nil
}

// Clear implements Lockout; Redis failures are ECodeCache.
func (r *RedisLockout) Clear(ctx context.Context, key string) error {
	if err := r.client.Del(ctx, r.prefix+key).Err(); err != nil {
		return limiterStoreError(err)
	}
	return nil
}
