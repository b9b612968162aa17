package server_test

import (
	"context"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// signOutAfterRead is a store whose TrialKeyAccess runs then, once, after it has read: a sign-out
// that lands between the token endpoint's reading of the trial and its writing of the token.
type signOutAfterRead struct {
	flightgraph.AccessStore
	once sync.Once
	then func()
}

func (s *signOutAfterRead) TrialKeyAccess(ctx context.Context, hash string, now time.Time) (*flightgraph.KeyAccess, error) {
	ka, err := s.AccessStore.TrialKeyAccess(ctx, hash, now)
	s.once.Do(s.then)
	return ka, err
}

// TestTrialTokenDoesNotOutliveSignOut: a token granted to a trial whose session signs out while
// the grant is under way does not work after the sign-out.
func TestTrialTokenDoesNotOutliveSignOut(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), nil)
		op := s.oaOperator(t)
		dev := s.oaSignUp(t, "trial-race@example.com")
		k := dev.newKey(t, op, "baggage")
		tk := dev.tryKey(t, k.keyID)
		tokens := s.srv.Tokens
		store := tokens.Store
		tokens.Store = &signOutAfterRead{AccessStore: store, then: func() { dev.do(t, `mutation { signOut }`, nil, nil) }}
		defer func() { tokens.Store = store }()
		r := s.oaToken(t, oaCall{auth: tk.client().basic(), form: url.Values{"grant_type": {"client_credentials"}}})
		if r.status != 200 {
			return // refused: held
		}
		tok, _ := r.object(t)["access_token"].(string)
		if got := s.oaPing(t, "baggage", oaBearer(tok)); got.status == 200 {
			t.Fatalf("a trial's token granted across its session's signOut still works: %s", got)
		}
	})
}
