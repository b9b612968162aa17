package access

import (
	"context"
	"net/http/httptest"
	"strconv"
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
		g.remember(&g.tokens, "old"+strconv.Itoa(i), &cached{token: tok, expires: now.Add(-time.Second)}, now)
	}
	g.remember(&g.tokens, "fresh", &cached{token: tok, expires: now.Add(time.Minute)}, now)
	if n := size(&g.tokens); n != 1 {
		t.Fatalf("%d entries after the sweep, want the 1 fresh one", n)
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
	err := g.Admit(context.Background(), httptest.NewRecorder(), caller, nil, []string{"flightstatus", "opendata"})
	if code := flightgraph.ErrorCode(err); code != flightgraph.ECodePerDayLimit {
		t.Fatalf("a call over opendata's limit: %v, want %s", err, flightgraph.ECodePerDayLimit)
	}
	if n := usage.pending["2026-11-22"]["sub-fs"]; n != 0 {
		t.Errorf("the refused call counts %d in flightstatus's usage", n)
	}
	if err := g.Admit(context.Background(), httptest.NewRecorder(), caller, nil, []string{"flightstatus"}); err != nil {
		t.Fatal(err)
	}
	if n := usage.pending["2026-11-22"]["sub-fs"]; n != 1 {
		t.Errorf("an admitted call counts %d in flightstatus's usage, want 1", n)
	}
}
