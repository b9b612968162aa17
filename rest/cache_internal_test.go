package rest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/live"
)

// TestAnsweredServesOnlyItsOwnQuote: a call admitted without a heavy-work slot for a kept quote its
// classification found (quoteKept) that is not answered's own (another key here; or gone since) takes
// its slot first, and without one (here: no pass) it is refused, never served nor run.
func TestAnsweredServesOnlyItsOwnQuote(t *testing.T) {
	a := &API{Log: slog.New(slog.DiscardHandler), Guard: &access.Guard{}, Answers: live.NewCache(live.NewHub(nil, nil), 1<<20, nil)}
	ran := false
	h := a.answered("POST /x", flightgraph.CachePolicy{}, true, func(w http.ResponseWriter, r *http.Request) { ran = true })
	r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(`{"a":1}`))
	w := httptest.NewRecorder()
	h(w, r.WithContext(context.WithValue(r.Context(), quoteHitKey{}, &quoteHit{key: live.KeyOf("another call"), found: true})))
	if ran || w.Code < 400 {
		t.Fatalf("a call admitted for another's kept quote: %d %q (ran: %v), want refused for want of a slot", w.Code, w.Body, ran)
	}
}
