package access

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
)

// TestGuardCacheSweeps: entries past their time leave the cache, so tokens used once do not stay
// in memory for ever.
func TestGuardCacheSweeps(t *testing.T) {
	g := &Guard{}
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	tok := &flightgraph.Token{KeyID: "k"}
	for i := 0; i < sweepEvery-1; i++ {
		g.remember(&g.tokens, "old"+strconv.Itoa(i), &cached{token: tok, expires: now.Add(-time.Second)}, now, 0)
	}
	g.remember(&g.tokens, "fresh", &cached{token: tok, expires: now.Add(time.Minute)}, now, 0)
	if n := size(&g.tokens); n != 1 {
		t.Fatalf("%d entries after the sweep, want the 1 fresh one", n)
	}
}

// TestGuardCachesNothingReadBeforeAForget: what was read from the store before a change was
// forgotten (a notification from another replica, say) may predate the change, and must not be
// cached after it, where it would stay for the cache's whole lifetime.
func TestGuardCachesNothingReadBeforeAForget(t *testing.T) {
	g := &Guard{}
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	stale := &cached{token: &flightgraph.Token{KeyID: "k", FamilyID: "f"}, expires: now.Add(time.Hour)}
	for name, forget := range map[string]func(){"Forget": func() { g.Forget("k") }, "ForgetFamily": func() { g.ForgetFamily("f") }} {
		_, epoch := g.lookup(&g.tokens, "t", now) // a miss: the store is read now ...
		forget()                                  // ... the change is heard ...
		g.remember(&g.tokens, "t", stale, now, epoch)
		if c, _ := g.lookup(&g.tokens, "t", now); c != nil {
			t.Errorf("a token read before %s is cached after it", name)
		}
	}
}

// guardFeed is an AccessFeed that tells nothing: the guard's feed stays down.
type guardFeed struct{}

func (guardFeed) Watch(ctx context.Context, w flightgraph.AccessWatcher) error { return nil }

// TestGuardCacheOnlyWhileTheFeedListens: a guard that follows an access feed serves nothing from
// its cache before the feed listens nor after it went down, and drops what it cached when the
// feed listens again.
func TestGuardCacheOnlyWhileTheFeedListens(t *testing.T) {
	g := &Guard{Changes: guardFeed{}}
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	entry := &cached{token: &flightgraph.Token{KeyID: "k"}, expires: now.Add(time.Hour)}
	fill := func() *cached {
		_, epoch := g.lookup(&g.tokens, "t", now)
		g.remember(&g.tokens, "t", entry, now, epoch)
		c, _ := g.lookup(&g.tokens, "t", now)
		return c
	}
	if fill() != nil {
		t.Error("cached before the feed listened")
	}
	w := cacheWatcher{g}
	w.AccessFeedUp()
	if fill() == nil {
		t.Fatal("not cached while the feed listens")
	}
	w.AccessFeedDown(nil)
	if c, _ := g.lookup(&g.tokens, "t", now); c != nil {
		t.Error("served from the cache while the feed is down")
	}
	if fill() != nil {
		t.Error("cached while the feed is down")
	}
	g.tokens.Store("t", entry) // as if it had been cached before the feed went down
	w.AccessFeedUp()
	if size(&g.tokens) != 0 {
		t.Error("the feed listens again and the entries of before are still cached")
	}
}

func size(m *sync.Map) int {
	n := 0
	m.Range(func(any, any) bool { n++; return true })
	return n
}

// TestGuardCountsOnlyWhollyAdmittedCalls: a call touching two APIs, the second over its limit, is
// refused and counts in neither API's usage.
func TestGuardCountsOnlyWhollyAdmittedCalls(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	usage := &UsageRecorder{}
	g := &Guard{Limiter: NewMemoryLimiter(nil, func() time.Time { return now }), Usage: usage, Now: func() time.Time { return now }}
	caller := &flightgraph.Caller{Kind: flightgraph.CallerKey, Products: map[string]*flightgraph.Entitlement{
		"flightstatus": {SubscriptionID: "sub-fs", Plan: &flightgraph.Plan{Limits: flightgraph.DefaultLimits}},
		"opendata":     {SubscriptionID: "sub-od", Plan: &flightgraph.Plan{Limits: flightgraph.Limits{}}}, // admits nothing
	}}
	ctx := WithPass(context.Background(), NewPass(caller, nil, nil))
	err := g.Admit(ctx, Light("flightstatus", "opendata"))
	if code := flightgraph.ErrorCode(err); code != flightgraph.ECodePerDayLimit {
		t.Fatalf("a call over opendata's limit: %v, want %s", err, flightgraph.ECodePerDayLimit)
	}
	if n := usage.pending["2026-11-22"]["sub-fs"]; n != 0 {
		t.Errorf("the refused call counts %d in flightstatus's usage", n)
	}
	if err := Require(ctx, "flightstatus"); flightgraph.ErrorCode(err) != flightgraph.ECodeNotApproved {
		t.Errorf("after a refused call, flightstatus is required: %v, want %s", err, flightgraph.ECodeNotApproved)
	}
	if err := g.Admit(ctx, Light("flightstatus")); err != nil {
		t.Fatal(err)
	}
	if n := usage.pending["2026-11-22"]["sub-fs"]; n != 1 {
		t.Errorf("an admitted call counts %d in flightstatus's usage, want 1", n)
	}
}

// TestRequireFailsClosed: the second line refuses every product its request's pass did not admit,
// with the first line's code for the caller: 401 without a credential or with a bad one, 403 for
// a key not approved, 404 for a hidden API, and a refusal when no guard made a pass at all.
func TestRequireFailsClosed(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	g := &Guard{Limiter: NewMemoryLimiter(nil, func() time.Time { return now }), Now: func() time.Time { return now }}
	key := &flightgraph.Caller{Kind: flightgraph.CallerKey, Products: map[string]*flightgraph.Entitlement{
		"flightstatus": {SubscriptionID: "sub-fs", Plan: &flightgraph.Plan{Limits: flightgraph.DefaultLimits}}}}
	anonymous := &flightgraph.Caller{Kind: flightgraph.CallerAnonymous}
	badKey := flightgraph.Errorf(flightgraph.ECodeInvalidKey, "the api-key is malformed, unknown or revoked")
	// A pair: the key approved for flightstatus and offers, its token scoped to baggage alone.
	pairKey := &flightgraph.Caller{Kind: flightgraph.CallerKey, Products: map[string]*flightgraph.Entitlement{
		"flightstatus": {SubscriptionID: "sub-fs", Plan: &flightgraph.Plan{Limits: flightgraph.DefaultLimits}},
		"offers":       {SubscriptionID: "sub-of", Plan: &flightgraph.Plan{Limits: flightgraph.DefaultLimits}}}}
	pairToken := &flightgraph.Caller{Kind: flightgraph.CallerToken, Grant: flightgraph.GrantClientCredentials, Products: map[string]*flightgraph.Entitlement{
		"baggage": {SubscriptionID: "sub-bg", Plan: &flightgraph.Plan{Limits: flightgraph.DefaultLimits}}}}
	paired := func() context.Context {
		p := NewPass(pairKey, nil, nil)
		p.bearer = pairToken
		return WithPass(context.Background(), p)
	}
	for _, c := range []struct {
		name    string
		ctx     context.Context
		product string
		admit   []string
		want    string
	}{
		{"no pass", context.Background(), "flightstatus", nil, flightgraph.ECodeNotApproved},
		{"anonymous", WithPass(context.Background(), NewPass(anonymous, nil, nil)), "opendata", nil, flightgraph.ECodeMissingCredentials},
		{"bad key", WithPass(context.Background(), NewPass(anonymous, badKey, nil)), "opendata", nil, flightgraph.ECodeInvalidKey},
		{"not approved", WithPass(context.Background(), NewPass(key, nil, nil)), "opendata", nil, flightgraph.ECodeNotApproved},
		{"approved but not admitted", WithPass(context.Background(), NewPass(key, nil, nil)), "flightstatus", nil, flightgraph.ECodeNotApproved},
		{"admitted another", WithPass(context.Background(), NewPass(key, nil, nil)), "opendata", []string{"flightstatus"}, flightgraph.ECodeNotApproved},
		{"hidden", WithPass(context.Background(), NewPass(key, nil, nil)), "cargo", nil, flightgraph.ECodeUnknownPath},
		{"admitted", WithPass(context.Background(), NewPass(key, nil, nil)), "flightstatus", []string{"flightstatus"}, ""},
		// A pair: an OAuth API takes the token's entitlements, never the key's.
		{"paired, the token does not cover it", paired(), "offers", nil, flightgraph.ECodeNotApproved},
		{"paired, covered but not admitted", paired(), "baggage", nil, flightgraph.ECodeNotApproved},
		{"paired, admitted another", paired(), "baggage", []string{"flightstatus"}, flightgraph.ECodeNotApproved},
		{"paired, admitted", paired(), "baggage", []string{"flightstatus", "baggage"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.admit != nil {
				if err := g.Admit(c.ctx, Light(c.admit...)); err != nil {
					t.Fatal(err)
				}
			}
			if got := flightgraph.ErrorCode(Require(c.ctx, c.product)); got != c.want {
				t.Fatalf("Require(%s) = %q, want %q", c.product, got, c.want)
			}
		})
	}
	if err := g.Admit(context.Background(), Light("flightstatus")); flightgraph.ErrorCode(err) != flightgraph.ECodeNotApproved {
		t.Errorf("Admit without a pass: %v", err)
	}
}

// TestMemoryLimiterForgetsIdleNames: the limiter keeps no state for a name that made no call in
// the last second once a sweep has passed, so that every address that ever called does not stay
// in memory; a subscription's day count comes back from DayUsage, exact.
func TestMemoryLimiterForgetsIdleNames(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	used := map[string]int64{"sub": 41}
	l := NewMemoryLimiter(func(_ context.Context, sub, _ string) (int64, error) { return used[sub], nil }, func() time.Time { return now })
	limits := flightgraph.Limits{PerSecond: 5, PerDay: 1000}
	for i := range 1000 {
		if _, err := l.Admit(context.Background(), "uncharged:address:10.0.0."+strconv.Itoa(i), limits, 1); err != nil {
			t.Fatal(err)
		}
	}
	if d, _ := l.Admit(context.Background(), "sub", limits, 1); d.DayUsed != 42 {
		t.Fatalf("day used %d, want 42", d.DayUsed)
	}
	used["sub"] = 42 // the usage recorder holds the admitted call
	now = now.Add(memorySweepEvery + time.Second)
	swept := func() bool { // every shard has seen a new name since the clock moved, and swept
		for i := range l.shards {
			if l.shards[i].swept != now.UnixNano() {
				return false
			}
		}
		return true
	}
	fresh := 0
	for ; !swept() && fresh < 100_000; fresh++ {
		l.Admit(context.Background(), "new:"+strconv.Itoa(fresh), limits, 1)
	}
	states := 0
	for i := range l.shards {
		states += len(l.shards[i].subs)
	}
	if states != fresh {
		t.Errorf("%d states after the sweeps, want the %d new names' only", states, fresh)
	}
	if d, _ := l.Admit(context.Background(), "sub", limits, 1); !d.Allowed || d.DayUsed != 43 {
		t.Errorf("after the sweep: %+v, want the day count read again (43)", d)
	}
}

// trialStore is a store of one trial key, which it reads as the store does: not at or after its
// expiry.
type trialStore struct {
	flightgraph.AccessStore
	ka *flightgraph.KeyAccess
}

func (s trialStore) TrialKeyAccess(ctx context.Context, keyHash string, now time.Time) (*flightgraph.KeyAccess, error) {
	if keyHash != s.ka.TrialHash || !now.Before(s.ka.TrialExpiresAt) {
		return nil, flightgraph.Errorf(flightgraph.ECodeNotFound, "key not found")
	}
	return s.ka, nil
}

// TestGuardCachesATrialNoLongerThanItLasts: the guard's entry of a trial key, whose refusal at its
// end comes from the store, ends with the trial however long the cache lives; a change to its
// key drops it, as it drops the key's.
func TestGuardCachesATrialNoLongerThanItLasts(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	trial := NewCredential(KindTrialKey)
	ka := &flightgraph.KeyAccess{Key: &flightgraph.Key{ID: "k", Status: flightgraph.KeyActive}, Application: &flightgraph.Application{ID: "a"},
		Account: &flightgraph.Account{ID: "acc"}, TrialHash: HashCredential(trial), TrialExpiresAt: now.Add(time.Minute)}
	clock := now
	g := &Guard{Store: trialStore{ka: ka}, CacheTTL: time.Hour, Now: func() time.Time { return clock }}
	call := func() error {
		_, err := g.keyCaller(context.Background(), trial)
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	if c, _ := g.lookup(&g.keys, ka.TrialHash, now.Add(time.Minute-time.Nanosecond)); c == nil {
		t.Fatal("the trial is not cached while it lasts")
	}
	if c, _ := g.lookup(&g.keys, ka.TrialHash, now.Add(time.Minute)); c != nil {
		t.Errorf("the trial's entry outlives the trial: it expires at %s, the trial at %s", c.expires, ka.TrialExpiresAt)
	}
	clock = now.Add(time.Minute)
	if err := call(); flightgraph.ErrorCode(err) != flightgraph.ECodeInvalidKey {
		t.Errorf("the trial at its end: %v, want %s", err, flightgraph.ECodeInvalidKey)
	}
	clock = now
	if err := call(); err != nil {
		t.Fatal(err)
	}
	g.Forget("k")
	if c, _ := g.lookup(&g.keys, ka.TrialHash, now); c != nil {
		t.Error("a change to the key leaves its trial cached")
	}
}

// TestLimitHeaders holds setLimitHeaders, built without fmt and Header.Set, to what those build:
// the same names on the wire and the same values, across days and limits.
func TestLimitHeaders(t *testing.T) {
	at := time.Date(2026, 11, 22, 13, 4, 5, 0, time.UTC)
	for i, d := range []Decision{
		{Limits: flightgraph.Limits{PerSecond: 5, PerDay: 5000}, SecondUsed: 2, DayUsed: 17, SecondReset: 300 * time.Millisecond, At: at, DayReset: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{Limits: flightgraph.Limits{PerSecond: 10000, PerDay: 100000000}, SecondUsed: 10001, DayUsed: 100000001, At: at, DayReset: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{Limits: flightgraph.Limits{PerSecond: 0, PerDay: 0}, At: at.AddDate(0, 1, 0), DayReset: time.Date(2026, 12, 23, 0, 0, 0, 0, time.UTC)},
		{Limits: flightgraph.Limits{PerSecond: 5, PerDay: 5000}, SecondUsed: 5, DayUsed: 5000, SecondReset: time.Second, At: at, DayReset: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
	} {
		want := http.Header{}
		want.Set("RateLimit-Policy", fmt.Sprintf(`"second";q=%d;w=1, "day";q=%d;w=86400`, d.Limits.PerSecond, d.Limits.PerDay))
		want.Set("RateLimit", fmt.Sprintf(`"second";r=%d;t=%d, "day";r=%d;t=%d`, max(d.Limits.PerSecond-d.SecondUsed, 0),
			flightgraph.Seconds(d.SecondReset), max(int64(d.Limits.PerDay)-d.DayUsed, 0), int(d.DayReset.Sub(d.At).Seconds()+0.999)))
		want.Set("X-Packagekey-Qps-Allotted", fmt.Sprint(d.Limits.PerSecond))
		want.Set("X-Packagekey-Qps-Current", fmt.Sprint(d.SecondUsed))
		want.Set("X-Packagekey-Quota-Allotted", fmt.Sprint(d.Limits.PerDay))
		want.Set("X-Packagekey-Quota-Current", fmt.Sprint(d.DayUsed))
		want.Set("X-Plan-Quota-Reset", d.DayReset.Format("Monday, January 2, 2006 3:04:05 PM GMT"))
		got := http.Header{}
		setLimitHeaders(got, d)
		if !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("decision %d: headers\n%v\nwant\n%v", i, got, want)
		}
	}
}

// TestAccessFeedDownLogs: the feed stopped with the server (its context canceled) is no outage
// and is not logged as a warning; any other end is.
func TestAccessFeedDownLogs(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("the access feed stopped: %w", context.Canceled), "level=INFO"},
		{errors.New("the access feed's connection is lost"), "level=WARN"},
	} {
		var logs bytes.Buffer
		g := &Guard{Log: slog.New(slog.NewTextHandler(&logs, nil))}
		g.feedUp.Store(true)
		cacheWatcher{g}.AccessFeedDown(c.err)
		if !strings.Contains(logs.String(), c.want) || g.feedUp.Load() {
			t.Errorf("%v: logged %q, feed up %v; want %s and the feed down", c.err, logs.String(), g.feedUp.Load(), c.want)
		}
	}
}

// TestLimitedDayRefusalForNow: a per-day refusal until leases settle names no midnight, while one
// for the day's calls made does, and each says when to retry in its header.
func TestLimitedDayRefusalForNow(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	reset := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		retry        time.Duration
		header, want string
	}{
		{40 * time.Millisecond, "1", "for now"},
		{reset.Sub(at), "50400", "resets at 2026-11-30T00:00:00Z"},
	} {
		h := http.Header{}
		err := limited(h, Decision{Code: flightgraph.ECodePerDayLimit, Limits: flightgraph.Limits{PerSecond: 256, PerDay: 100}, RetryAfter: c.retry, DayReset: reset, At: at})
		var e *flightgraph.Error
		if !errors.As(err, &e) || e.Code != flightgraph.ECodePerDayLimit {
			t.Fatalf("retry %v: %v, want %s", c.retry, err, flightgraph.ECodePerDayLimit)
		}
		if !strings.Contains(e.Message, c.want) || h.Get("Retry-After") != c.header {
			t.Errorf("retry %v: %q with Retry-After %q, want %q in it and %s", c.retry, e.Message, h.Get("Retry-After"), c.want, c.header)
		}
	}
}

// TestCredentialChecksum pins the checksum of credentials as issued: a change to how it is
// computed would refuse every credential already held by a client. The values were computed by
// the first implementation (big.Int division of the CRC-32).
func TestCredentialChecksum(t *testing.T) {
	for _, c := range []struct{ kind, body, sum string }{
		{KindAPIKey, "0000000000000000000000000000000000000000000", "3t89Xw"},
		{KindAccessToken, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "3pZfx3"},
		{KindSecret, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg", "0eZ62Q"},
	} {
		if got := checksum(c.kind, c.body); string(got[:]) != c.sum {
			t.Errorf("checksum of %s%s is %s, want %s", c.kind, c.body, got, c.sum)
		}
		if CredentialKind(c.kind+c.body+c.sum) != c.kind {
			t.Errorf("%s%s%s is refused", c.kind, c.body, c.sum)
		}
	}
	for range 100 {
		k := NewCredential(KindSession)
		wrong := "x" // another last digit: a checksum that is not k's
		if k[len(k)-1] == 'x' {
			wrong = "y"
		}
		if CredentialKind(k) != KindSession || CredentialKind(k[:len(k)-1]+wrong) != "" {
			t.Fatalf("%s: a fresh credential is refused, or one with a wrong checksum accepted", k)
		}
	}
}
