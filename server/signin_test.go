package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

const signInMutation = `mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { token } }`

// signInClock is a server clock that moves only when told.
type signInClock struct{ ns atomic.Int64 }

func newSignInClock(t time.Time) *signInClock {
	c := &signInClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *signInClock) Now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *signInClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// trySignIn signs in over GraphQL and returns the code of the first error, "" on success.
func (s *testServer) trySignIn(t *testing.T, email, password string) (string, gqlResponse) {
	t.Helper()
	r := s.portalAs(t, nil, signInMutation, map[string]any{"e": email, "p": password})
	if len(r.Errors) == 0 {
		return "", r
	}
	code, _ := r.Errors[0].Extensions["code"].(string)
	return code, r
}

// lockOutPortal makes 10 sign-ins with wrong passwords, each answered PORTAL_401.001, then one
// with password, which must be refused with PORTAL_429.000 and the whole window to wait, before
// any SQL or password hash; it returns that refusal.
func (s *testServer) lockOutPortal(t *testing.T, email, password string) gqlResponse {
	t.Helper()
	for i := 1; i <= access.MaxSignInAttempts; i++ {
		if code, r := s.trySignIn(t, email, fmt.Sprintf("wrong password %d", i)); code != flightgraph.ECodeBadLogin {
			t.Fatalf("wrong password %d for %s: %s %+v, want %s", i, email, code, r.Errors, flightgraph.ECodeBadLogin)
		}
	}
	hashes := s.srv.Hashes.Computed()
	code, r := s.trySignIn(t, email, password)
	if code != flightgraph.ECodeTooManySignIns {
		t.Fatalf("attempt 11 for %s: %s %s %+v, want %s", email, code, r.Data, r.Errors, flightgraph.ECodeTooManySignIns)
	}
	ext := r.Errors[0].Extensions
	if ext["retryAfter"] != float64(access.SignInWindow/time.Second) || ext["status"] != float64(http.StatusTooManyRequests) {
		t.Fatalf("refusal extensions %v, want retryAfter %d and status 429", ext, access.SignInWindow/time.Second)
	}
	if n := s.srv.Hashes.Computed() - hashes; n != 0 {
		t.Fatalf("the refused attempt computed %d password hashes", n)
	}
	if n := s.queries.Load(); n != 0 {
		t.Fatalf("the refused attempt made %d SQL round trips, want none", n)
	}
	body, _ := json.Marshal(map[string]any{"query": signInMutation, "variables": map[string]any{"e": email, "p": password}})
	if status, h, _ := s.call(t, http.MethodPost, "/portal/graphql", nil, string(body)); status != http.StatusTooManyRequests ||
		h.Get("Retry-After") != fmt.Sprint(int(access.SignInWindow/time.Second)) {
		t.Fatalf("the refusal over HTTP: %d, Retry-After %q", status, h.Get("Retry-After"))
	}
	return r
}

// TestSignInLockout: after 10 failed sign-ins on one e-mail, the 11th is refused even with the
// right password, the same way for an e-mail without an account; the refusal lasts until the
// window ends, and a success clears the count.
func TestSignInLockout(t *testing.T) {
	clock := newSignInClock(storetest.Now)
	s := newServerWith(t, storetest.Open(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Now = clock.Now })
	email, password := s.demo.DeveloperEmail, s.demo.DeveloperPassword

	known := s.lockOutPortal(t, email, password)
	unknown := s.lockOutPortal(t, "nobody@demo.flightgraph.local", "any password at all")
	kb, _ := json.Marshal(known.Errors)
	ub, _ := json.Marshal(unknown.Errors)
	if !bytes.Equal(kb, ub) {
		t.Fatalf("the refusal tells accounts apart:\nknown   %s\nunknown %s", kb, ub)
	}
	// The count is per account, not per spelling of its e-mail.
	if code, _ := s.trySignIn(t, "  "+strings.ToUpper(email)+" ", password); code != flightgraph.ECodeTooManySignIns {
		t.Fatalf("the e-mail in capitals: %q, want %s", code, flightgraph.ECodeTooManySignIns)
	}

	clock.Add(10 * time.Minute)
	if code, r := s.trySignIn(t, email, password); code != flightgraph.ECodeTooManySignIns || r.Errors[0].Extensions["retryAfter"] != float64(300) {
		t.Fatalf("10 minutes later: %s %+v, want %s with retryAfter 300", code, r.Errors, flightgraph.ECodeTooManySignIns)
	}
	clock.Add(5 * time.Minute)
	if code, r := s.trySignIn(t, email, password); code != "" {
		t.Fatalf("once the window ended: %s %+v, want signed in", code, r.Errors)
	}

	// A success clears the count: 9 failures, a success and 10 more failures are all answered.
	for i := range access.MaxSignInAttempts - 1 {
		if code, _ := s.trySignIn(t, email, fmt.Sprintf("wrong again %d", i)); code != flightgraph.ECodeBadLogin {
			t.Fatalf("failure %d after the window: %s", i+1, code)
		}
	}
	if code, r := s.trySignIn(t, email, password); code != "" {
		t.Fatalf("the right password after 9 failures: %s %+v, want signed in", code, r.Errors)
	}
	s.lockOutPortal(t, email, password)
}

// TestPasswordGrantLockout: the OAuth password grant counts attempts per customer user name, apart
// from the portal's e-mails, and refuses the 11th with 429, Retry-After and an RFC 6749 body.
func TestPasswordGrantLockout(t *testing.T) {
	clock := newSignInClock(storetest.Now)
	s := newServerWith(t, storetest.Open(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Now = clock.Now })
	client := s.oaDemoClient()
	grant := func(user, password string) oaReply {
		return s.oaToken(t, oaCall{auth: client.basic(), form: url.Values{"grant_type": {"password"}, "username": {user}, "password": {password}}})
	}
	user, password := s.demo.CustomerUsername, s.demo.CustomerPassword

	// A portal lockout of the same name leaves the customer alone.
	s.lockOutPortal(t, user, password)
	if r := grant(user, password); r.status != http.StatusOK {
		t.Fatalf("password grant with the portal's %q locked: %s", user, r)
	}

	// Refused attempts reach no further than the client's authentication: measure what that
	// costs on its own with a request refused right after it.
	s.oaToken(t, oaCall{auth: client.basic(), form: url.Values{"grant_type": {"password"}, "username": {user}}})
	clientOnly := s.queries.Load()
	lockOut := func(user, password string) oaReply {
		t.Helper()
		for i := 1; i <= access.MaxSignInAttempts; i++ {
			oaCheckError(t, grant(user, fmt.Sprintf("wrong password %d", i)), http.StatusBadRequest, "invalid_grant")
		}
		hashes := s.srv.Hashes.Computed()
		r := grant(user, password)
		oaCheckError(t, r, http.StatusTooManyRequests, "invalid_grant")
		if ra := r.header.Get("Retry-After"); ra != "900" {
			t.Errorf("Retry-After %q, want 900", ra)
		}
		if n := s.srv.Hashes.Computed() - hashes; n != 0 {
			t.Errorf("the refused grant computed %d password hashes", n)
		}
		if n := s.queries.Load(); n != clientOnly {
			t.Errorf("the refused grant made %d SQL round trips, want the client authentication's %d", n, clientOnly)
		}
		return r
	}
	known, unknown := lockOut(user, password), lockOut("nobody", "any password at all")
	if !bytes.Equal(known.body, unknown.body) || known.header.Get("Retry-After") != unknown.header.Get("Retry-After") {
		t.Fatalf("the refusal tells customers apart:\nknown   %s\nunknown %s", known, unknown)
	}

	clock.Add(access.SignInWindow)
	for i := range access.MaxSignInAttempts - 1 {
		oaCheckError(t, grant(user, fmt.Sprintf("wrong again %d", i)), http.StatusBadRequest, "invalid_grant")
	}
	if r := grant(user, password); r.status != http.StatusOK {
		t.Fatalf("the right password after the window and 9 failures: %s", r)
	}
	lockOut(user, password) // the success cleared the count: 10 more failures are answered
}

// TestSignInBurst: 50 concurrent wrong sign-ins on one account, with the real 19 MiB argon2id,
// verify at most 10 passwords and refuse the rest, and so do 50 password grants for one customer;
// 50 concurrent sign-ins on 50 accounts each verify one, but no more than the bound at once, so
// the server's memory stays under 200 MB throughout. The runtime is tuned as serve tunes it (GOGC 400, 1 GiB soft limit), under which
// garbage argon2id blocks accumulate the most.
func TestSignInBurst(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(server.GCPercent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(server.MemoryLimit))
	s := newServerWith(t, storetest.Open(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Hasher = access.DefaultPasswordHasher })
	client := s.oaDemoClient()

	runtime.GC()
	debug.FreeOSMemory()
	sampler := sampleMemory()
	base := sampler.peak()

	// burst sends n requests at once and counts the answers by code.
	burst := func(n int, request func(i int) (string, error)) map[string]int {
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			counts = map[string]int{}
			start  = make(chan struct{})
		)
		for i := range n {
			wg.Go(func() {
				<-start
				code, err := request(i)
				if err != nil {
					code = err.Error()
				}
				mu.Lock()
				counts[code]++
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		return counts
	}
	signIn := func(email string) (string, error) {
		status, body, err := post(s.URL+"/portal/graphql", "application/json", nil, fmt.Sprintf(`{"query":%q,"variables":{"e":%q,"p":"wrong password"}}`, signInMutation, email))
		if err != nil {
			return "", err
		}
		var r gqlResponse
		if err := json.Unmarshal(body, &r); err != nil || len(r.Errors) == 0 {
			return "", fmt.Errorf("status %d, body %s", status, body)
		}
		code, _ := r.Errors[0].Extensions["code"].(string)
		return code, nil
	}

	hashes := s.srv.Hashes.Computed()
	counts := burst(50, func(int) (string, error) { return signIn(s.demo.DeveloperEmail) })
	verified := s.srv.Hashes.Computed() - hashes
	t.Logf("50 wrong sign-ins on one account: %v; %d passwords verified", counts, verified)
	if verified > access.MaxSignInAttempts || counts[flightgraph.ECodeBadLogin] != access.MaxSignInAttempts || counts[flightgraph.ECodeTooManySignIns] != 50-access.MaxSignInAttempts {
		t.Errorf("want %d %s and %d %s, at most %d hashes", access.MaxSignInAttempts, flightgraph.ECodeBadLogin, 50-access.MaxSignInAttempts, flightgraph.ECodeTooManySignIns, access.MaxSignInAttempts)
	}

	hashes = s.srv.Hashes.Computed()
	counts = burst(50, func(int) (string, error) {
		status, body, err := post(s.URL+oaTokenPath, "application/x-www-form-urlencoded", map[string]string{"Authorization": client.basic()},
			url.Values{"grant_type": {"password"}, "username": {s.demo.CustomerUsername}, "password": {"wrong password"}}.Encode())
		var e struct{ Error string }
		json.Unmarshal(body, &e)
		return fmt.Sprintf("%d %s", status, e.Error), err
	})
	verified = s.srv.Hashes.Computed() - hashes
	t.Logf("50 wrong password grants for one customer: %v; %d passwords verified", counts, verified)
	if verified > access.MaxSignInAttempts || counts["400 invalid_grant"] != access.MaxSignInAttempts || counts["429 invalid_grant"] != 50-access.MaxSignInAttempts {
		t.Errorf("want %d answered 400 and %d refused 429, at most %d hashes", access.MaxSignInAttempts, 50-access.MaxSignInAttempts, access.MaxSignInAttempts)
	}

	// Under the race detector, where a hash takes four to five times as long, the last of 50
	// sign-ins queued behind two slots would come near the 20 s request timeout; 25 unbounded
	// hashes would still take 475 MiB.
	accounts := 50
	if raceDetector {
		accounts = 25
	}
	hashes = s.srv.Hashes.Computed()
	counts = burst(accounts, func(i int) (string, error) { return signIn(fmt.Sprintf("user%d@example.com", i)) })
	verified = s.srv.Hashes.Computed() - hashes
	peak := sampler.stop()
	t.Logf("%d wrong sign-ins on %[1]d accounts: %v; %d passwords verified", accounts, counts, verified)
	if counts[flightgraph.ECodeBadLogin] != accounts || verified != int64(accounts) {
		t.Errorf("want %d %s and as many hashes", accounts, flightgraph.ECodeBadLogin)
	}
	t.Logf("Go runtime memory in use: %.1f MB before the bursts, %.1f MB at their peak (%d hashes at once)", mb(base), mb(peak), access.DefaultHashConcurrency)
	if peak >= 200e6 {
		t.Errorf("memory peaked at %.1f MB, want under 200 MB", mb(peak))
	}
}

func mb(b uint64) float64 { return float64(b) / 1e6 }

// memorySampler records the peak of the Go runtime's memory in use, what it mapped less what it
// returned to the operating system, sampled every millisecond.
type memorySampler struct {
	max  atomic.Uint64
	done chan struct{}
	wg   sync.WaitGroup
}

func sampleMemory() *memorySampler {
	m := &memorySampler{done: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	read := func() {
		metrics.Read(samples)
		if v := samples[0].Value.Uint64() - samples[1].Value.Uint64(); v > m.max.Load() {
			m.max.Store(v)
		}
	}
	read()
	m.wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-m.done:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	})
	return m
}

func (m *memorySampler) peak() uint64 { return m.max.Load() }

func (m *memorySampler) stop() uint64 {
	close(m.done)
	m.wg.Wait()
	return m.max.Load()
}

// post sends a body and returns the status and body; safe in any goroutine.
func post(target, contentType string, headers map[string]string, body string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// lockoutReplica is a server on db, like one replica of several: its lockout counts in the Redis
// at opts (through a client of its own, as a separate process would have) under prefix, and in
// process while that Redis fails. demo is the store's demo accounts, seeded by the first replica.
// It returns the server and its metrics registry.
func lockoutReplica(t *testing.T, db *store.DB, opts *redis.Options, prefix string, demo *access.DemoCredentials) (*testServer, *prometheus.Registry) {
	t.Helper()
	logs := &lockedBuffer{}
	cfg := testConfig(db, logs)
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	cfg.Lockout = access.NewLockoutFallback(access.NewRedisLockout(rdb, prefix), access.NewMemoryLockout(cfg.Now), cfg.Log)
	s := &testServer{db: db, demo: demo, log: logs}
	if demo == nil {
		s.srv, s.demo = startServer(t, cfg)
	} else {
		s.srv = cfg.build()
	}
	s.Server = httptest.NewServer(s.srv)
	t.Cleanup(s.Close)
	return s, cfg.Server.Registry
}

// TestSignInLockoutReplicas: two replicas on one database and one Redis share the count, so the
// 11th attempt is refused whichever replica the attempts went to; while Redis is down, each
// replica counts on its own and still refuses the 11th.
func TestSignInLockoutReplicas(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	proxy := newTCPProxy(t, c.Options().Addr)
	opts := *c.Options()
	opts.Addr, opts.MaxRetries, opts.DialTimeout = proxy.Addr(), -1, 200*time.Millisecond
	db := storetest.Open(t, store.SQLite, os.Getenv)
	a, metrics := lockoutReplica(t, db, &opts, prefix, nil)
	b, _ := lockoutReplica(t, db, &opts, prefix, a.demo)

	email, password := a.demo.DeveloperEmail, a.demo.DeveloperPassword
	for i := 1; i <= access.MaxSignInAttempts; i++ {
		if code, _ := []*testServer{a, b}[i%2].trySignIn(t, email, fmt.Sprintf("wrong password %d", i)); code != flightgraph.ECodeBadLogin {
			t.Fatalf("wrong password %d: %s, want %s", i, code, flightgraph.ECodeBadLogin)
		}
	}
	for name, s := range map[string]*testServer{"a": a, "b": b} {
		if code, _ := s.trySignIn(t, email, password); code != flightgraph.ECodeTooManySignIns {
			t.Fatalf("attempt 11 on replica %s: %q, want %s", name, code, flightgraph.ECodeTooManySignIns)
		}
	}
	keys, err := c.Keys(t.Context(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != prefix+access.SignInKey(access.SignInPortal, email) {
		t.Fatalf("Redis keys %q, want the e-mail's hash only", keys)
	}

	proxy.Cut()
	email, password = a.demo.OperatorEmail, a.demo.OperatorPassword
	for i := 1; i <= access.MaxSignInAttempts; i++ {
		if code, r := a.trySignIn(t, email, fmt.Sprintf("wrong password %d", i)); code != flightgraph.ECodeBadLogin {
			t.Fatalf("wrong password %d with Redis down: %s %+v, want %s", i, code, r.Errors, flightgraph.ECodeBadLogin)
		}
	}
	if code, _ := a.trySignIn(t, email, password); code != flightgraph.ECodeTooManySignIns {
		t.Fatalf("attempt 11 with Redis down: %q, want %s", code, flightgraph.ECodeTooManySignIns)
	}
	if n := counterValue(t, metrics, "flightgraph_signin_lockout_fallbacks_total"); n != access.MaxSignInAttempts+1 {
		t.Errorf("flightgraph_signin_lockout_fallbacks_total = %v, want the %d attempts counted in process", n, access.MaxSignInAttempts+1)
	}
	a.Close() // waits for the requests' log lines
	logs := a.log.String()
	if n := strings.Count(logs, "the shared sign-in lockout failed"); n != 1 {
		t.Errorf("the outage was logged %d times, want once:\n%s", n, logs)
	}
	if strings.Contains(logs, "operator@") || strings.Contains(logs, "developer@") {
		t.Errorf("an e-mail reached the log:\n%s", logs)
	}
}

// counterValue reads a counter of reg as /metrics serves it.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}

// TestUnlookupableNamesAreUnknown: an e-mail or user name that no database can hold (a NUL,
// invalid UTF-8) is an unknown name, answered as such on both dialects, never a 500 or an ERROR
// line; and any value PostgreSQL refuses is the caller's INSP_400.002.
func TestUnlookupableNamesAreUnknown(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		for _, email := range []string{"nobody@example.com\x00", "demo\xff@example.com", strings.Repeat("a", 400) + "@example.com"} {
			if code, r := s.trySignIn(t, email, "any password"); code != flightgraph.ECodeBadLogin {
				t.Errorf("signIn %q: %s %+v", email, code, r.Errors)
			}
		}
		for _, user := range []string{"demo.customer\x00", "demo\xff"} {
			r := s.oaToken(t, oaCall{auth: s.oaDemoClient().basic(), form: url.Values{"grant_type": {"password"}, "username": {user}, "password": {"x"}}})
			if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "invalid_grant") {
				t.Errorf("password grant for %q: %s", user, r)
			}
		}
		dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		r := dev.try(t, `mutation { registerApplication(input: {name: "nul\u0000name", description: "d"}) { id } }`, nil)
		if len(r.Errors) == 0 || r.Errors[0].Extensions["status"] != float64(http.StatusBadRequest) {
			t.Errorf("an application named with a NUL: %s %+v", r.Data, r.Errors)
		}
		if strings.Contains(s.log.String(), "level=ERROR") {
			t.Errorf("a caller's bad text logged an error:\n%s", s.log)
		}
	})
}
