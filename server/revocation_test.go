package server_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// revocationBound is how soon another replica must refuse a revoked credential. It bounds
// correctness, not speed: without propagation replica B, whose cache lives an hour here, goes on
// accepting the credential for that hour.
const revocationBound = 5 * time.Second

// feedReplica is one replica served by Server.Run, as flightgraph serve runs it, on a database
// connection named by its application_name.
// heldMail is a mailer that accepts nothing, so that a running test server's outbox keeps its
// mail whole for the test to read.
type heldMail struct{}

func (heldMail) Send(context.Context, *flightgraph.Mail) error {
	return errors.New("held by the test")
}

type feedReplica struct {
	*testServer
	name    string
	queries atomic.Int64 // SQL round trips of its store
}

// startFeedReplica runs a replica on the database at dsn, its connections named name, with the
// guard's cache living cacheTTL.
func startFeedReplica(t *testing.T, dsn, name string, cacheTTL time.Duration) *feedReplica {
	t.Helper()
	return startFeedReplicaWith(t, dsn, name, cacheTTL, nil)
}

// startReplicaPair starts two replicas over the schema name of dsn (startFeedReplicaWith: a with
// no access cache, b with bTTL, both changed by tweak), synchronises the catalogue, seeds the demo
// accounts for both and raises the demo key's limits.
func startReplicaPair(t *testing.T, dsn, name string, bTTL time.Duration, tweak func(*serverConfig)) (a, b *feedReplica) {
	t.Helper()
	a = startFeedReplicaWith(t, dsn, name+"-a", 0, tweak)
	b = startFeedReplicaWith(t, dsn, name+"-b", bTTL, tweak)
	ctx := context.Background()
	if err := a.srv.Access.SyncCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	demo, err := a.srv.Access.SeedDemo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a.demo, b.demo = demo, demo
	a.raiseLimits(t)
	return a, b
}

// startFeedReplicaWith is startFeedReplica with the configuration changed by tweak first.
func startFeedReplicaWith(t *testing.T, dsn, name string, cacheTTL time.Duration, tweak func(*serverConfig)) *feedReplica {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithCancel(context.Background())
	db, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	storetest.Adopt(t, db, u.String())
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	r := &feedReplica{name: name}
	db.OnQuery = func() { r.queries.Add(1) }
	cfg := testConfig(db, io.Discard)
	cfg.Now = time.Now
	cfg.AccessFeed = store.NewAccessFeed(db, cfg.Log)
	cfg.EventFeed = store.NewEventFeed(db)
	// The replica runs, and with it its outbox, which erases a mail once delivered: the tests read
	// sign-up tokens from the outbox, so its mail is held there, undelivered.
	cfg.Mailer = heldMail{}
	if tweak != nil {
		tweak(&cfg)
	}
	srv := cfg.build()
	srv.Guard.CacheTTL = cacheTTL
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln, nil, server.Shutdown{Grace: time.Second}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("replica %s: %v", name, err)
		}
		db.Close()
	})
	r.testServer = &testServer{Server: &httptest.Server{URL: "http://" + ln.Addr().String()}, db: db, srv: srv}
	return r
}

// pingCode calls the API's ping with headers and returns the error code, "" for 200 OK.
func (r *feedReplica) pingCode(t testing.TB, api string, headers map[string]string) string {
	t.Helper()
	reply := r.oaPing(t, api, headers)
	if reply.status == http.StatusOK {
		return ""
	}
	return oaRESTCode(t, reply)
}

// waitCached calls the API until the replica answers from its guard's cache (no SQL round trip:
// its access feed listens), and fails the test if the call is refused.
func (r *feedReplica) waitCached(t *testing.T, api string, headers map[string]string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		before := r.queries.Load()
		if code := r.pingCode(t, api, headers); code != "" {
			t.Fatalf("replica %s refuses the credential before any change: %s", r.name, code)
		}
		if r.queries.Load() == before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s never answered from its cache: its access feed does not listen", r.name)
		}
	}
}

// waitSteady is waitCached until the replica answers the credential from its cache 250 ms on
// end: the announcements of the credential's making (its approval, its limits) reach the replica
// in their own time, each dropping what the replica cached, and on a loaded machine one may come
// after waitCached has seen the credential cached.
func (r *feedReplica) waitSteady(t *testing.T, api string, headers map[string]string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		r.waitCached(t, api, headers)
		before := r.queries.Load()
		time.Sleep(250 * time.Millisecond)
		if code := r.pingCode(t, api, headers); code != "" {
			t.Fatalf("replica %s refuses the credential before any change: %s", r.name, code)
		}
		if r.queries.Load() == before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s kept reading the credential again for 10 s", r.name)
		}
	}
}

// waitRefused polls the API on the replica until it refuses the credential with code, and
// returns how long that took.
func (r *feedReplica) waitRefused(t *testing.T, api string, headers map[string]string, code string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got := r.pingCode(t, api, headers)
		if got == code {
			return time.Since(start)
		}
		if got != "" {
			t.Fatalf("replica %s answered %s, want %s", r.name, got, code)
		}
		if time.Since(start) > revocationBound {
			t.Fatalf("replica %s still accepts the credential %v after the change", r.name, revocationBound)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRevocationReachesEveryReplica runs two replicas on one PostgreSQL database; replica B
// trusts its cache for an hour. A change committed through replica A reaches B at once through
// the access feed (LISTEN/NOTIFY): a key revoked with the revokeKey mutation, a token family
// revoked for refresh token reuse, a partner made a developer, a trial key of a session signed out
// or evicted by newer ones. And when B's feed loses its connection, B drops its cache,
// so that a change it could not hear is not served stale.
func TestRevocationReachesEveryReplica(t *testing.T) {
	storetest.DatabaseURL(t)
	dsn := storetest.DSN(t, store.Postgres, os.Getenv)
	var b [4]byte
	rand.Read(b[:])
	name := "fgtest-" + hex.EncodeToString(b[:])
	a, rb := startReplicaPair(t, dsn, name, time.Hour, nil)
	ctx := context.Background()
	op := a.oaOperator(t)
	dev := a.oaSignUp(t, "grace@example.com")
	newKey := func(t *testing.T) oaKey {
		k := dev.newKey(t, op, "flightstatus")
		dev.grantLimits(t, op, k.id, testPlan, generousQueries)
		return k
	}

	t.Run("RevokeKey", func(t *testing.T) {
		k := newKey(t)
		headers := map[string]string{"api-key": k.id}
		if code := a.pingCode(t, "flightstatus", headers); code != "" {
			t.Fatalf("replica A refuses the new key: %s", code)
		}
		rb.waitCached(t, "flightstatus", headers)
		start := time.Now()
		dev.revokeKey(t, k.keyID)
		revoked := time.Since(start)
		took := rb.waitRefused(t, "flightstatus", headers, flightgraph.ECodeInvalidKey)
		t.Logf("replica B refused the revoked key %v after the revokeKey answer (the mutation took %v)", took, revoked)
	})

	t.Run("TokenFamily", func(t *testing.T) {
		client := a.oaDemoClient()
		first, refresh := a.oaPasswordGrant(t, client)
		headers := oaBearer(first)
		rb.waitCached(t, "baggage", headers)
		if r := a.oaToken(t, oaRefreshCall(client, refresh)); r.status != http.StatusOK {
			t.Fatalf("refresh: %s", r)
		}
		start := time.Now()
		if r := a.oaToken(t, oaRefreshCall(client, refresh)); r.status != http.StatusBadRequest {
			t.Fatalf("reused refresh token: %s, want 400 invalid_grant", r)
		}
		took := rb.waitRefused(t, "baggage", headers, flightgraph.ECodeInvalidToken)
		t.Logf("replica B refused the revoked family's access token %v after the reuse was refused (%v after it was sent)", took, time.Since(start))
	})

	t.Run("RoleChange", func(t *testing.T) {
		// A partner's key is refused on B as soon as an operator makes the partner a developer
		// on A: the guard's cached owner, and with it the role, is dropped on every replica.
		const email = "pat@partner.example"
		pat := a.oaSignUp(t, email)
		op.setRole(t, email, "PARTNER")
		k := pat.newKey(t, op, "metasearch")
		pat.grantLimits(t, op, k.id, testPlan, generousQueries)
		headers := map[string]string{"api-key": k.id}
		rb.waitCached(t, "metasearch", headers)
		start := time.Now()
		op.setRole(t, email, "DEVELOPER")
		changed := time.Since(start)
		took := rb.waitRefused(t, "metasearch", headers, flightgraph.ECodeUnknownPath)
		t.Logf("replica B refused the key of a partner made a developer %v after the setAccountRole answer (the mutation took %v)", took, changed)
	})

	t.Run("TrialKeys", func(t *testing.T) {
		// A trial key cached on B stops there as soon as A ends it: by signing its session out,
		// or by minting the trials that evict it.
		k := newKey(t)
		laptop := a.signIn(t, "grace@example.com", "correct horse battery staple")
		signedOut := map[string]string{"api-key": laptop.tryKey(t, k.keyID).APIKey}
		rb.waitCached(t, "flightstatus", signedOut)
		start := time.Now()
		laptop.do(t, `mutation { signOut }`, nil, nil)
		took := rb.waitRefused(t, "flightstatus", signedOut, flightgraph.ECodeInvalidKey)
		t.Logf("replica B refused the trial key of a session signed out %v after the signOut answer (%v after it was sent)", took, time.Since(start))

		evicted := map[string]string{"api-key": dev.tryKey(t, k.keyID).APIKey}
		rb.waitCached(t, "flightstatus", evicted)
		for range access.TrialKeysPerKey {
			dev.tryKey(t, k.keyID)
		}
		took = rb.waitRefused(t, "flightstatus", evicted, flightgraph.ECodeInvalidKey)
		t.Logf("replica B refused an evicted trial key %v after the last tryKey answer", took)
	})

	t.Run("FeedReconnects", func(t *testing.T) {
		k := newKey(t)
		headers := map[string]string{"api-key": k.id}
		rb.waitSteady(t, "flightstatus", headers)
		// A change that B does not hear: written without the store, so that nothing is
		// announced, as when B's feed is disconnected while the change commits.
		if _, err := a.rawDB(t).ExecContext(ctx, `UPDATE api_keys SET status = 'revoked' WHERE id = $1`, k.keyID); err != nil {
			t.Fatal(err)
		}
		if code := rb.pingCode(t, "flightstatus", headers); code != "" {
			t.Fatalf("replica B refused the key before losing its feed (%s): the change was announced after all", code)
		}
		feedPID := func() (pid int) {
			t.Helper()
			err := a.rawDB(t).QueryRowContext(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, rb.name+"-access-feed").Scan(&pid)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			return pid
		}
		killed, old := time.Now(), feedPID()
		var ok bool
		if err := a.rawDB(t).QueryRowContext(ctx, `SELECT pg_terminate_backend($1)`, old).Scan(&ok); err != nil || !ok {
			t.Fatalf("terminating replica B's feed connection (pid %d): %v, %v", old, ok, err)
		}
		took := rb.waitRefused(t, "flightstatus", headers, flightgraph.ECodeInvalidKey)
		t.Logf("replica B refused the key %v after its feed's connection was killed", took)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if pid := feedPID(); pid != 0 && pid != old {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("replica B's feed did not connect again")
			}
		}
		t.Logf("replica B's feed connected again %v after its connection was killed", time.Since(killed).Round(time.Millisecond))
		// Listening again, B caches again.
		k2 := newKey(t)
		rb.waitCached(t, "flightstatus", map[string]string{"api-key": k2.id})
	})
}
