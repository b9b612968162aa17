package rest_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/rest"
)

// TestErrorRetryAfter: a domain error that says when to try again is answered with its status and
// Retry-After in whole seconds, rounded up; others without Retry-After.
func TestErrorRetryAfter(t *testing.T) {
	api := &rest.API{Log: slog.New(slog.DiscardHandler)}
	w := httptest.NewRecorder()
	api.Error(w, httptest.NewRequest("GET", "/x", nil), &flightgraph.Error{Code: flightgraph.ECodeTooManySignIns, Message: "Too many failed sign-ins; try again later.", RetryAfter: 899100 * time.Millisecond})
	if w.Code != 429 || w.Header().Get("Retry-After") != "900" {
		t.Fatalf("status %d, Retry-After %q; want 429 and 900", w.Code, w.Header().Get("Retry-After"))
	}
	w = httptest.NewRecorder()
	api.Error(w, httptest.NewRequest("GET", "/x", nil), flightgraph.Errorf(flightgraph.ECodeBadLogin, "wrong e-mail or password"))
	if ra := w.Header().Get("Retry-After"); ra != "" {
		t.Fatalf("Retry-After %q on an error that says nothing of retrying", ra)
	}
}
