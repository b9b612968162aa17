package live_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/store"
)

type credKey struct{}

// TestServiceChecksEachCredentialOnce: 300 subscriptions of 3 credentials are checked with one
// check per credential a round, not one per subscription; when one credential is revoked, its
// 100 subscriptions end with STREAM_403.000 within a second and the others stay open; once all
// are closed, nothing is checked any more.
func TestServiceChecksEachCredentialOnce(t *testing.T) {
	f := newFixture(t, store.SQLite)
	var revoked sync.Map
	var checks atomic.Int64
	svc := &live.Service{Hub: f.hub, PerAddress: 10_000, RecheckEvery: 50 * time.Millisecond,
		Credential: func(ctx context.Context) string { return ctx.Value(credKey{}).(string) },
		Recheck: func(ctx context.Context, product string) error {
			checks.Add(1)
			if _, ok := revoked.Load(ctx.Value(credKey{})); ok {
				return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "revoked")
			}
			return nil
		}}
	plan := map[string]*flightgraph.Entitlement{live.Product: {Plan: &flightgraph.Plan{Limits: flightgraph.Limits{PerSecond: 100}}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := map[string][]<-chan *flightgraph.FlightEvent{}
	for _, cred := range []string{"a", "b", "c"} {
		cctx := flightgraph.WithCaller(context.WithValue(ctx, credKey{}, cred), &flightgraph.Caller{Kind: flightgraph.CallerKey, KeyID: cred, Products: plan})
		for range 100 {
			ch, err := svc.Subscribe(cctx, live.Filter{}, "")
			if err != nil {
				t.Fatal(err)
			}
			streams[cred] = append(streams[cred], ch)
		}
	}
	if n := svc.Checks(); n != 3 {
		t.Fatalf("%d credentials to check, want 3", n)
	}
	before := checks.Load()
	time.Sleep(500 * time.Millisecond)
	rounds := checks.Load() - before
	// 10 rounds of 3 checks, give or take one round either side.
	if rounds < 3*5 || rounds > 3*12 {
		t.Errorf("%d checks in 500 ms of 50 ms rounds for 3 credentials (300 subscriptions)", rounds)
	}
	start := time.Now()
	revoked.Store("b", true)
	for i, ch := range streams["b"] {
		var last *flightgraph.FlightEvent
		for e := range ch {
			last = e
		}
		if last == nil || flightgraph.ErrorCode(last.End) != flightgraph.ECodeSubscriptionRevoked {
			t.Fatalf("subscription %d of the revoked credential ended with %+v", i, last)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the revoked credential's subscriptions ended after %v", took)
	}
	e := f.record(t, 1)
	for _, cred := range []string{"a", "c"} {
		for i, ch := range streams[cred] {
			select {
			case got := <-ch:
				if got.Position != e.Position {
					t.Fatalf("%s %d: %+v", cred, i, got)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s %d: no event", cred, i)
			}
		}
	}
	if n := svc.Checks(); n != 2 {
		t.Errorf("%d credentials to check after b's revocation, want 2", n)
	}
	cancel()
	for deadline := time.Now().Add(5 * time.Second); svc.Checks() != 0 || f.hub.Open() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d credentials checked, %d subscriptions open after all closed", svc.Checks(), f.hub.Open())
		}
	}
	time.Sleep(150 * time.Millisecond) // the sweeper's last round sees none and stops
	before = checks.Load()
	time.Sleep(200 * time.Millisecond)
	if n := checks.Load() - before; n != 0 {
		t.Errorf("%d checks with no subscription open", n)
	}
}

// TestStalledRevokedStreamIsLetGo: a revoked credential's stream whose reader reads nothing is
// no longer checked once it is cut (its reason waits for the reader, who may never come), but it
// keeps its place among the key's caps until the stream is over.
func TestStalledRevokedStreamIsLetGo(t *testing.T) {
	f := newFixture(t, store.SQLite)
	var revoked atomic.Bool
	var checks atomic.Int64
	svc := &live.Service{Hub: f.hub, PerKey: 1, RecheckEvery: 20 * time.Millisecond,
		Credential: func(ctx context.Context) string { return "k" },
		Recheck: func(ctx context.Context, product string) error {
			checks.Add(1)
			if revoked.Load() {
				return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "revoked")
			}
			return nil
		}}
	plan := map[string]*flightgraph.Entitlement{live.Product: {Plan: &flightgraph.Plan{Limits: flightgraph.Limits{PerSecond: 100}}}}
	ctx, cancel := context.WithCancel(flightgraph.WithCaller(context.Background(), &flightgraph.Caller{Kind: flightgraph.CallerKey, KeyID: "k", Products: plan}))
	defer cancel()
	stalled, err := svc.Subscribe(ctx, live.Filter{}, "") // never read until the end
	if err != nil {
		t.Fatal(err)
	}
	revoked.Store(true)
	for deadline := time.Now().Add(5 * time.Second); svc.Checks() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cut stream's credential is still checked while its reader does not read")
		}
	}
	before := checks.Load()
	time.Sleep(200 * time.Millisecond)
	if n := checks.Load() - before; n != 0 {
		t.Errorf("%d checks of a cut stream's credential in 200 ms (rounds of 20 ms)", n)
	}
	if _, err := svc.Subscribe(ctx, live.Filter{}, ""); flightgraph.ErrorCode(err) != flightgraph.ECodeTooManyStreams {
		t.Errorf("a second stream beside the stalled one (cap 1): %v, want %s", err, flightgraph.ECodeTooManyStreams)
	}
	if e := <-stalled; flightgraph.ErrorCode(e.End) != flightgraph.ECodeSubscriptionRevoked {
		t.Errorf("the stalled reader's first value %+v, want the end %s", e, flightgraph.ECodeSubscriptionRevoked)
	}
	for range stalled {
	}
}
