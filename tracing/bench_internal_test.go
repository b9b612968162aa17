package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/flightgraph/flightgraph"
)

// BenchmarkHandler is what tracing adds to one request alone: a server span with a caller, a
// charge and an operation noted, and two statement spans, exported over OTLP/HTTP to a receiver
// in the process that discards them.
func BenchmarkHandler(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer sink.Close()
	tr, err := New(context.Background(), Config{Endpoint: sink.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	stmt := tr.Statements("sqlite")
	caller := &flightgraph.Caller{Kind: flightgraph.CallerKey, KeyID: "key_abcdefghijklmnop", ApplicationID: "app_abcdefghijklmnop"}
	h := tr.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		rec := flightgraph.RecordFromContext(ctx)
		rec.NoteCaller(caller)
		rec.NoteCharge([]string{"flightstatus"}, 1)
		rec.NoteOperation("query", "Departures")
		for range 2 {
			stmt(ctx, "SELECT id, origin, destination FROM flights WHERE origin IN ($1, $2) AND schedule_date = $3")(nil)
		}
		w.WriteHeader(http.StatusOK)
	}))
	mux := http.NewServeMux()
	mux.Handle("/graphql", h)
	req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
	b.ReportAllocs()
	for b.Loop() {
		mux.ServeHTTP(httptest.NewRecorder(), req)
	}
}
