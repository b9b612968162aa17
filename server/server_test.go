package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// testServer is a server on a seeded store, with its clock at storetest.Now.
type testServer struct {
	*httptest.Server
	db  *store.DB
	log *bytes.Buffer
	// queries is the number of SQL round trips of the last request.
	queries atomic.Int64
}

func newServer(t testing.TB, db *store.DB) *testServer {
	t.Helper()
	logs := &bytes.Buffer{}
	h := server.New(server.Config{
		Log:      slog.New(slog.NewTextHandler(logs, nil)),
		Registry: prometheus.NewRegistry(),
		DB:       db,
		Stores:   stores(db),
		Now:      func() time.Time { return storetest.Now },
		Version:  "test",
	})
	s := &testServer{db: db, log: logs}
	// Count the SQL round trips of each request so tests and benchmarks can read them.
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := store.WithQueryCounter(r.Context())
		h.ServeHTTP(w, r.WithContext(ctx))
		s.queries.Store(store.QueryCount(ctx))
	}))
	t.Cleanup(s.Close)
	return s
}

func stores(db *store.DB) graph.Stores {
	return graph.Stores{Flights: store.NewFlightStore(db), Places: store.NewPlaceStore(db),
		Aircraft: store.NewAircraftStore(db), Network: store.NewNetworkStore(db)}
}

// gqlResponse is a GraphQL answer.
type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Path       []any          `json:"path"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// query posts a GraphQL operation and decodes the answer.
func (s *testServer) query(t testing.TB, q string, vars map[string]any) gqlResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	resp, err := http.Post(s.URL+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out gqlResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("status %d, body %s: %v", resp.StatusCode, raw, err)
	}
	return out
}

func forEachDialect(t *testing.T, fn func(t *testing.T, dialect string)) {
	for _, d := range storetest.Dialects(os.Getenv) {
		t.Run(d, func(t *testing.T) { fn(t, d) })
	}
}

func TestHealthAndReadiness(t *testing.T) {
	db := storetest.Open(t, store.SQLite, os.Getenv)
	s := newServer(t, db)
	for _, c := range []struct {
		path string
		want int
	}{{"/healthz", 200}, {"/readyz", 200}, {"/metrics", 200}, {"/nope", 404}} {
		resp, err := http.Get(s.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.path, resp.StatusCode, body, c.want)
		}
		if c.path == "/nope" && !strings.Contains(string(body), `"INSP_404.000"`) {
			t.Errorf("unknown path body %s lacks INSP_404.000", body)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", c.path)
		}
	}
	db.Close()
	resp, err := http.Get(s.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz with the database down: %d, want 503", resp.StatusCode)
	}
	resp, err = http.Get(s.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz must not depend on the database: %d", resp.StatusCode)
	}
}

func TestMetricsCountRequestsByRoute(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	s := newServer(t, db)
	s.query(t, `{ airport(code: "AMS") { name } }`, nil)
	http.Get(s.URL + "/opendata/nothing/here/123")
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`flightgraph_http_requests_total{code="200",method="POST",route="/graphql"} 1`,
		`flightgraph_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`flightgraph_http_request_duration_seconds_count{method="POST",route="/graphql"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(string(body), "/opendata/nothing") {
		t.Error("a raw path became a metric label")
	}
}
