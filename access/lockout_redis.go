package access

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// attemptScript counts one sign-in attempt atomically, so that replicas racing on one identifier
// never let more than the limit through between them.
//
// KEYS[1] is the identifier's counter; ARGV is the limit and the window in milliseconds. The
// window starts with the first attempt counted (PEXPIRE then) and is never extended, so a refused
// attempt neither counts nor delays the end of the lock. It returns {allowed (1 or 0), attempts,
// milliseconds until the window ends}.
const attemptScript = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if n >= tonumber(ARGV[1]) and ttl > 0 then
  return {0, n, ttl}
end
if ttl <= 0 then
  -- A first attempt, or a counter that lost its lifetime: either way the window starts now.
  n = 0
  redis.call('SET', KEYS[1], 0, 'PX', ARGV[2])
  ttl = tonumber(ARGV[2])
end
n = redis.call('INCR', KEYS[1])
return {1, n, ttl}
`

// RedisLockout is a Lockout whose counts live in Redis, shared by every replica: one script run
// per attempt and one DEL per success. Its keys are prefix + SignInKey, under a prefix of their
// own (serve uses "fg:login:"), so they hold no e-mail or user name.
type RedisLockout struct {
	client *redis.Client
	prefix string
	script *redis.Script
}

// NewRedisLockout returns a RedisLockout storing its keys under prefix in client's database.
func NewRedisLockout(client *redis.Client, prefix string) *RedisLockout {
	return &RedisLockout{client: client, prefix: prefix, script: redis.NewScript(attemptScript)}
}

// Attempt implements Lockout; Redis failures are ECodeCache.
func (r *RedisLockout) Attempt(ctx context.Context, key string) (LockoutDecision, error) {
	res, err := r.script.Run(ctx, r.client, []string{r.prefix + key}, MaxSignInAttempts, SignInWindow.Milliseconds()).Int64Slice()
	if err != nil {
		return LockoutDecision{}, limiterStoreError(err)
	}
	if len(res) != 3 {
		return LockoutDecision{}, limiterStoreError(fmt.Errorf("the lockout script returned %d values, want 3", len(res)))
	}
	d := LockoutDecision{Allowed: res[0] == 1, Attempts: int(res[1])}
	if !d.Allowed {
		d.RetryAfter = time.Duration(res[2]) * time.Millisecond
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
