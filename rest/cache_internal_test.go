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

// TestAnsweredServesOnlyItsOwnQuote: a call admitted without a heavy-work slot for the kept quote
// its classification found (quoteKept) is served that quote only under answered's own key; under
// any other, it takes its slot first, and without one (here: no pass) it is refused, never served
// the other answer nor run.
func TestAnsweredServesOnlyItsOwnQuote(t *testing.T) {
	a := &API{Log: slog.New(slog.DiscardHandler), Guard: &access.Guard{}, Answers: live.NewCache(live.NewHub(nil, nil), 1<<20, nil)}
	ran := false
	h := a.answered("POST /x", flightgraph.CachePolicy{}, true, func(w http.ResponseWriter, r *http.Request) { ran = true })
	call := func(hit *quoteHit) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(`{"a":1}`))
		if hit.key == (live.CacheKey{}) {
			hit.key = quoteKey(r, contentType(r.Context()), flightgraph.PointOfSaleFromContext(r.Context()), "POST /x", []byte(`{"a":1}`))
		}
		w := httptest.NewRecorder()
		h(w, r.WithContext(context.WithValue(r.Context(), quoteHitKey{}, hit)))
		return w
	}
	if w := call(&quoteHit{kept: &live.Kept{Body: []byte("its own")}}); w.Code != http.StatusOK || w.Body.String() != "its own" || ran {
		t.Fatalf("the call's own kept quote: %d %q (ran: %v)", w.Code, w.Body, ran)
	}
	w := call(&quoteHit{key: live.KeyOf("another call"), kept: &live.Kept{Body: []byte("another's")}})
	if ran || strings.Contains(w.Body.String(), "another's") || w.Code < 400 {
		t.Fatalf("another call's kept quote: %d %q (ran: %v), want refused for want of a slot", w.Code, w.Body, ran)
	}
}
