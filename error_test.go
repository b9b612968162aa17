package flightgraph_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/flightgraph/flightgraph"
)

// TestPublic: the one masking rule. A client is told an *Error's code, message, parameter and
// wait and never its cause; anything else only as an internal error with the request id; work
// its context stopped as a timeout. The log holds the unexpected at ERROR and a backing
// service's failure at WARN, and nothing of the caller's mistakes or of stopped work.
func TestPublic(t *testing.T) {
	secret := errors.New("pq: password authentication failed for user flightgraph at 10.0.0.7")
	cancelled, cancel := context.WithCancel(flightgraph.WithRequestID(context.Background(), "r1"))
	cancel()
	live := flightgraph.WithRequestID(context.Background(), "r1")
	for _, c := range []struct {
		name    string
		ctx     context.Context
		err     error
		code    string
		message string // what the message must hold
		level   string // what the log must hold: "" for nothing
	}{
		{"the caller's mistake", live, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "date", "bad date"), flightgraph.ECodeInvalidParameter, "bad date", ""},
		{"a backing service", live, &flightgraph.Error{Code: flightgraph.ECodeDatabase, Message: "The database is not available.", Err: secret},
			flightgraph.ECodeDatabase, "not available", "level=WARN"},
		{"a conflict with a cause", live, &flightgraph.Error{Code: flightgraph.ECodeConflict, Message: "it exists", Err: secret}, flightgraph.ECodeConflict, "it exists", ""},
		{"the unexpected", live, fmt.Errorf("wrapped: %w", secret), flightgraph.ECodeInternal, "quote request id r1", "level=ERROR"},
		{"a store's ErrExists", live, fmt.Errorf("%w: %w", flightgraph.ErrExists, secret), flightgraph.ECodeInternal, "quote request id r1", "level=ERROR"},
		{"stopped work", cancelled, fmt.Errorf("query: %w", context.Canceled), flightgraph.ECodeTimeout, "cancelled", ""},
		{"the unexpected after the client left", cancelled, secret, flightgraph.ECodeInternal, "quote request id r1", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			got := flightgraph.Public(c.ctx, slog.New(slog.NewTextHandler(&logs, nil)), c.err)
			if got.Code != c.code || !strings.Contains(got.Message, c.message) || got.Err != nil {
				t.Errorf("told %+v, want %s with %q and no cause", got, c.code, c.message)
			}
			if strings.Contains(got.Message, "pq:") || strings.Contains(got.Message, "10.0.0.7") {
				t.Errorf("the cause reached the client: %q", got.Message)
			}
			if c.level == "" && logs.Len() > 0 || c.level != "" && (!strings.Contains(logs.String(), c.level) || !strings.Contains(logs.String(), "requestId=r1")) {
				t.Errorf("logged %q, want %q with the request id", logs.String(), c.level)
			}
		})
	}
	wait := flightgraph.Public(live, nil, &flightgraph.Error{Code: flightgraph.ECodePerSecondLimit, Message: "slow down", RetryAfter: 1500 * time.Millisecond})
	if wait.RetryAfterSeconds() != 2 {
		t.Errorf("the wait told: %d s, want 2", wait.RetryAfterSeconds())
	}
}

// TestPublicClipsMessages: however much of a request a message quotes, a client is told at most
// MaxMessage bytes of it, cut at a character.
func TestPublicClipsMessages(t *testing.T) {
	long := strings.Repeat("é", 10_000)
	got := flightgraph.Public(context.Background(), nil, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "origin", "got %q", long))
	if len(got.Message) > flightgraph.MaxMessage+len("…") || !utf8.ValidString(got.Message) || got.Code != flightgraph.ECodeBadFormat || got.Parameter != "origin" {
		t.Errorf("a message quoting 20 kB: %d bytes, valid UTF-8 %v, %s %s", len(got.Message), utf8.ValidString(got.Message), got.Code, got.Parameter)
	}
}
