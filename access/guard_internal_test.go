package access

import (
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
