package graph_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
)

func TestErrorPresenterMasksInternalErrors(t *testing.T) {
	logs := &bytes.Buffer{}
	present := graph.ErrorPresenter(slog.New(slog.NewTextHandler(logs, nil)), nil)
	ctx := flightgraph.WithRequestID(context.Background(), "req-42")

	internal := present(ctx, fmt.Errorf("pq: relation \"flights\" does not exist"))
	if internal.Extensions["code"] != flightgraph.ECodeInternal || strings.Contains(internal.Message, "pq:") || !strings.Contains(internal.Message, "req-42") {
		t.Fatalf("internal error shown as %q %v", internal.Message, internal.Extensions)
	}
	if !strings.Contains(logs.String(), "relation") || !strings.Contains(logs.String(), "req-42") {
		t.Fatalf("internal error not logged with its request id: %s", logs)
	}

	domain := present(ctx, fmt.Errorf("wrapped: %w", flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, "code", "airport ZZZ is not found")))
	if domain.Message != "airport ZZZ is not found" || domain.Extensions["code"] != flightgraph.ECodeIATANotFound ||
		domain.Extensions["status"] != 404 || domain.Extensions["parameter"] != "code" {
		t.Fatalf("domain error shown as %q %v", domain.Message, domain.Extensions)
	}

	backend := present(ctx, &flightgraph.Error{Code: flightgraph.ECodeDatabase, Message: "The database is not available.", Err: errors.New("dial tcp: connection refused")})
	if strings.Contains(backend.Message, "dial") || backend.Extensions["status"] != 502 {
		t.Fatalf("backend failure shown as %q %v", backend.Message, backend.Extensions)
	}
}

// TestErrorPresenterRetryAfter: a domain error that says when to try again carries the whole
// seconds to wait, rounded up, in extensions.retryAfter; others carry none.
func TestErrorPresenterRetryAfter(t *testing.T) {
	present := graph.ErrorPresenter(slog.New(slog.DiscardHandler), nil)
	e := present(context.Background(), &flightgraph.Error{Code: flightgraph.ECodeTooManySignIns, Message: "Too many failed sign-ins; try again later.", RetryAfter: 1500 * time.Millisecond})
	if e.Extensions["retryAfter"] != 2 || e.Extensions["status"] != 429 {
		t.Fatalf("extensions %v, want retryAfter 2 and status 429", e.Extensions)
	}
	if e := present(context.Background(), flightgraph.Errorf(flightgraph.ECodeBadLogin, "wrong e-mail or password")); e.Extensions["retryAfter"] != nil {
		t.Fatalf("extensions %v without a RetryAfter carry retryAfter", e.Extensions)
	}
}
