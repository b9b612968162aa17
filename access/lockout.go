package access

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/flightgraph/flightgraph"
)

// The sign-in lockout, after OWASP's authentication cheat sheet: once MaxSignInAttempts attempts
// for one identifier were counted within SignInWindow, the next ones are refused, whatever the
// password, until the window ends. A successful sign-in clears the count.
const (
	MaxSignInAttempts = 10
	SignInWindow      = 15 * time.Minute
)

// Namespaces of sign-in identifiers: a portal account's e-mail and a loyalty customer's user name
// are counted apart, so that one never locks the other.
const (
	SignInPortal   = "portal"
	SignInCustomer = "customer"
)

// SignInKey names an identifier's attempt counter without the identifier: the hex SHA-256 of its
// namespace and itself, so that neither Redis nor a log ever holds an e-mail or a user name. The
// identifier must be in the form the account is looked up by (NormalizeEmail for e-mails), or
// spelling variants of one account would each get their own attempts.
func SignInKey(namespace, identifier string) string {
	sum := sha256.Sum256([]byte(namespace + "\x00" + identifier))
	return hex.EncodeToString(sum[:])
}

// LockoutDecision is a Lockout's answer for one sign-in attempt, or for one Take.
type LockoutDecision struct {
	Allowed bool
	// Attempts is how many attempts the window counts, this one included when it is allowed: of
	// a Take, the first quota's when allowed, the full one's when refused.
	Attempts int
	// RetryAfter is, for a refused attempt, the time until the window ends and attempts are
	// allowed again: of a Take, until every full quota has room.
	RetryAfter time.Duration
	// Full is, for a Take refused, the index of the first quota that had no room.
	Full int
}

// A Quota is one fixed-window counter of a Take: at most Max events counted within Window of the
// first (a Max of 0 or less counts without ever refusing). Key names the counter and must hold no
// identifier in the clear (SignInKey); N is how many events one Take counts (1 when 0).
type Quota struct {
	Key    string
	Max    int
	Window time.Duration
	N      int
}

func (q Quota) n() int { return max(q.N, 1) }

// Lockout counts sign-in attempts per identifier (a SignInKey). An attempt is counted before its
// password is verified, so that concurrent attempts cannot all pass the check before any of them
// is counted: of any number of attempts at once, at most MaxSignInAttempts get to a password.
//
// Take is the same count over several windows at once, all or none, which the mail budget counts
// with (MailBudget): the one machinery for "counted in Redis, per replica while Redis fails".
type Lockout interface {
	// Attempt counts one attempt for key and allows it, or refuses it without counting it when
	// the window counts MaxSignInAttempts already. Errors are ECodeCache when the lockout's store
	// fails.
	Attempt(ctx context.Context, key string) (LockoutDecision, error)
	// Take counts N events in each quota's counter and allows them, or, when any quota that has
	// a Max would pass it, counts nothing and refuses; atomically, so that takers racing on one
	// counter never pass its Max between them. Errors are ECodeCache when the store fails.
	Take(ctx context.Context, quotas []Quota) (LockoutDecision, error)
	// Clear forgets key's attempts: its sign-in succeeded.
	Clear(ctx context.Context, key string) error
}

// attemptQuota is the quota of one sign-in attempt.
func attemptQuota(key string) []Quota {
	return []Quota{{Key: key, Max: MaxSignInAttempts, Window: SignInWindow}}
}

var (
	_ Lockout = (*MemoryLockout)(nil)
	_ Lockout = (*RedisLockout)(nil)
	_ Lockout = (*LockoutFallback)(nil)
)

// signInRefusal is the error of a refused attempt: the same for every identifier, known or not,
// so that it tells nothing about whether an account exists.
func signInRefusal(d LockoutDecision) error {
	return &flightgraph.Error{Code: flightgraph.ECodeTooManySignIns, Message: "Too many failed sign-ins; try again later.", RetryAfter: d.RetryAfter}
}

// signIn runs check, which looks an account up by its identifier and verifies its password, under
// the lockout l: the attempt is counted for key first and refused with ECodeTooManySignIns when
// the window is full; a success clears the count. Without a lockout it refuses to sign anyone in,
// since signing in without one is exactly what it exists to prevent.
func signIn[T any](ctx context.Context, l Lockout, log *slog.Logger, key string, check func() (T, error)) (T, error) {
	var zero T
	if l == nil {
		return zero, errors.New("access: no sign-in lockout is configured")
	}
	d, err := l.Attempt(ctx, key)
	if err != nil {
		return zero, err
	}
	if !d.Allowed {
		return zero, signInRefusal(d)
	}
	v, err := check()
	if err != nil {
		return zero, err
	}
	if err := l.Clear(ctx, key); err != nil && log != nil {
		log.WarnContext(ctx, "access: could not clear the attempts of a successful sign-in; they run out with their window", "err", err)
	}
	return v, nil
}

// lockoutSweepEvery is how often a MemoryLockout drops the windows that ended, so that attempts
// at many identifiers (an enumeration) hold memory for one window at most.
const lockoutSweepEvery = time.Minute

// MemoryLockout is an in-process Lockout. Each replica counts only the attempts it saw itself;
// it serves alone in development and as the LockoutFallback's stand-in while Redis fails.
type MemoryLockout struct {
	now func() time.Time

	mu      sync.Mutex
	windows map[string]lockoutWindow
	sweepAt time.Time
}

// lockoutWindow is one identifier's count and the end of its window, which starts at the first
// attempt counted.
type lockoutWindow struct {
	n    int
	ends time.Time
}

// NewMemoryLockout returns a MemoryLockout on the clock now; nil means time.Now.
func NewMemoryLockout(now func() time.Time) *MemoryLockout {
	if now == nil {
		now = time.Now
	}
	return &MemoryLockout{now: now, windows: map[string]lockoutWindow{}}
}

// Attempt implements Lockout.
func (l *MemoryLockout) Attempt(ctx context.Context, key string) (LockoutDecision, error) {
	return l.Take(ctx, attemptQuota(key))
}

// Take implements Lockout.
func (l *MemoryLockout) Take(ctx context.Context, quotas []Quota) (LockoutDecision, error) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !now.Before(l.sweepAt) {
		for k, w := range l.windows {
			if !now.Before(w.ends) {
				delete(l.windows, k)
			}
		}
		l.sweepAt = now.Add(lockoutSweepEvery)
	}
	d := LockoutDecision{Allowed: true}
	for i, q := range quotas {
		if w := l.window(q, now); q.Max > 0 && w.n+q.n() > q.Max {
			if d.Allowed {
				d = LockoutDecision{Attempts: w.n, Full: i}
			}
			// A clock stepped back would otherwise promise a wait longer than the window.
			d.RetryAfter = max(d.RetryAfter, min(w.ends.Sub(now), q.Window))
		}
	}
	if !d.Allowed {
		return d, nil
	}
	for i, q := range quotas {
		w := l.window(q, now)
		w.n += q.n()
		l.windows[q.Key] = w
		if i == 0 {
			d.Attempts = w.n
		}
	}
	return d, nil
}

// window is q's current window: the one counted, or a new one when it ended or there is none.
func (l *MemoryLockout) window(q Quota, now time.Time) lockoutWindow {
	w, ok := l.windows[q.Key]
	if !ok || !now.Before(w.ends) {
		w = lockoutWindow{ends: now.Add(q.Window)}
	}
	return w
}

// untake gives back what a Take of quotas counted, in the windows that still run: the mail
// budget takes this replica's minute first, and gives it back when the shared counts refuse.
func (l *MemoryLockout) untake(quotas []Quota) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range quotas {
		if w, ok := l.windows[q.Key]; ok && now.Before(w.ends) {
			w.n = max(w.n-q.n(), 0)
			l.windows[q.Key] = w
		}
	}
}

// Clear implements Lockout.
func (l *MemoryLockout) Clear(ctx context.Context, key string) error {
	l.mu.Lock()
	delete(l.windows, key)
	l.mu.Unlock()
	return nil
}

// LockoutFallback is a Lockout that counts in a shared store (the RedisLockout) and, while that
// store fails, in process (a MemoryLockout), like the limiter's Fallback and for the same reason:
// refusing every sign-in would turn a cache outage into a portal outage, and allowing every one
// would lift the lockout exactly when nobody watches. Counting per replica still bounds the
// guesses: during an outage at most MaxSignInAttempts per replica and window, and the counts of
// the outage are not carried to Redis when it answers again.
//
// The store is retried at most once a second; the switch is logged at most once a minute and
// counted by Fallbacks (served at /metrics as flightgraph_signin_lockout_fallbacks_total).
type LockoutFallback struct {
	failover
	primary, secondary Lockout
	// Now is the clock of the retries; time.Now unless set before first use.
	Now func() time.Time
}

// NewLockoutFallback returns a LockoutFallback over primary and secondary that logs to log; a
// nil log discards.
func NewLockoutFallback(primary, secondary Lockout, log *slog.Logger) *LockoutFallback {
	return &LockoutFallback{primary: primary, secondary: secondary, Now: time.Now,
		failover: newFailover(log, "access: the shared sign-in lockout failed; failed sign-ins are counted per replica",
			"access: the shared sign-in lockout answers again; failed sign-ins are counted across replicas again")}
}

// NewMailCountsFallback is NewLockoutFallback for the mail budget's counts (MailBudget), whose
// switches it logs in the mail budget's words.
func NewMailCountsFallback(primary, secondary Lockout, log *slog.Logger) *LockoutFallback {
	return &LockoutFallback{primary: primary, secondary: secondary, Now: time.Now,
		failover: newFailover(log, "access: the shared mail budget failed; mail is counted per replica",
			"access: the shared mail budget answers again; mail is counted across replicas again")}
}

// Attempt implements Lockout: with the primary, or with the secondary while the primary fails.
func (f *LockoutFallback) Attempt(ctx context.Context, key string) (LockoutDecision, error) {
	return f.Take(ctx, attemptQuota(key))
}

// Take implements Lockout: with the primary, or with the secondary while the primary fails.
func (f *LockoutFallback) Take(ctx context.Context, quotas []Quota) (LockoutDecision, error) {
	d, ok, err := withPrimary(ctx, &f.failover, f.Now, func() (LockoutDecision, error) { return f.primary.Take(ctx, quotas) })
	if ok || err != nil {
		return d, err
	}
	return f.secondary.Take(ctx, quotas)
}

// Clear implements Lockout. The secondary is always cleared, so that the failures it counted in
// an earlier outage do not lock out an account that has signed in since; the primary is cleared
// unless it is known to fail, and its failure then only leaves the count to run out with its
// window.
func (f *LockoutFallback) Clear(ctx context.Context, key string) error {
	f.secondary.Clear(ctx, key)
	if !f.healthy() {
		return nil
	}
	return f.primary.Clear(ctx, key)
}

// verify looks a name up with find, which returns what it found and its password hash, and
// checks password against that hash, spending one password hash whether or not the name exists
// (an unknown one is checked against a decoy), so that neither the answer nor its time tells
// which names exist. A name that cannot be looked up at all (lookupable) is an unknown one. A
// password that does not match is the error wrong; its other errors are find's, other than
// not-found, or the hash gate's.
func verify[T any](ctx context.Context, gate *HashGate, h PasswordHasher, name, password string, wrong error, find func(name string) (T, string, error)) (T, error) {
	var (
		found  T
		stored string
		err    = error(errNobody)
	)
	if lookupable(name) {
		found, stored, err = find(name)
	}
	if err != nil && !errIsNotFound(err) {
		return found, err
	}
	ok, err := gate.Matches(ctx, h, password, stored)
	if err == nil && !ok {
		err = wrong
	}
	return found, err
}

// lookupable reports whether a name a caller typed (an e-mail, a user name) can be looked up at
// all: text a database can hold, no longer than any address (RFC 5321 allows 254 characters; a
// user name is shorter). Anything else names nobody, and is answered as an unknown name, after
// the same work, rather than sent to the database to fail there.
func lookupable(s string) bool {
	return len(s) <= 320 && utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// errNobody is the not-found answer for a name that cannot be looked up (see lookupable).
var errNobody = flightgraph.Errorf(flightgraph.ECodeNotFound, "not found")
