package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/app"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// testServer is a server on a seeded store, with its clock at storetest.Now.
type testServer struct {
	*httptest.Server
	db  *store.DB
	log *lockedBuffer
	srv *server.Server
	// demo holds the demo accounts and the demo key, approved for every public API.
	demo *access.DemoCredentials
	// raiseLimitsKeyID is the demo key's id.
	raiseLimitsKeyID string
	// queries is the number of SQL round trips of the last request.
	queries atomic.Int64
	// mailMark is the last mail the server's set-up queued: tests read the mail after it.
	mailMark int64
}

// testPortalURL is where a test server's mails send people.
const testPortalURL = "http://flightgraph.test/portal"

// fastHasher keeps argon2id but makes it cheap: tests hash many passwords.
var fastHasher = access.PasswordHasher{Time: 1, Memory: 64, Threads: 1}

func newServer(t testing.TB, db *store.DB) *testServer {
	t.Helper()
	return newServerWith(t, db, nil)
}

// serverConfig is a test server's configuration: its services' and its HTTP side's.
type serverConfig struct {
	app.Config
	Server server.Config
	// DefaultPlans keeps the demo key on the Default plans: a test whose limiter refuses the
	// portal's calls cannot raise them.
	DefaultPlans bool
}

// build builds the server of the configuration, on services of its own.
func (c serverConfig) build() *server.Server { return server.New(c.Server, app.New(c.Config)) }

// testConfig is a test server's configuration on db: the store's services, a cheap password
// hasher and the frozen clock.
func testConfig(db *store.DB, logs io.Writer) serverConfig {
	return serverConfig{
		Config: app.Config{
			// At DEBUG, so that tests read every request's access-log line (served calls log at DEBUG).
			Log:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Stores:    app.StoresOf(db),
			Hasher:    fastHasher,
			PortalURL: testPortalURL,
			Now:       func() time.Time { return storetest.Now },
			// The clock is frozen, so a second never ends: portal calls get limits that tests of
			// other things never meet (TestUnchargedCallsAreLimited tests the defaults).
			Uncharged: access.UnchargedLimits{PerAccount: generousRates, PerCredential: generousRates, PerAddress: generousRates, PerSignedInAddress: generousRates},
			// Tests send many refused requests from one address; TestRefusalsAreBounded tests the bound.
			Refusals: access.RefusalLimits{PerAddress: 1 << 20, PerCredential: 1 << 20},
			// The clock is frozen, so no mail budget's window ever ends, and set-up's limit
			// reviews mail the demo developer; the mail budget's tests (mailbudget_test.go) set
			// access.DefaultMailLimits.
			MailLimits: generousMail,
		},
		Server: server.Config{Registry: prometheus.NewRegistry(), DB: db, Version: "test", RequestTimeout: testRequestTimeout()},
	}
}

// testRequestTimeout is the test servers' request timeout: the default, but three times it under
// the race detector, which slows a cold search (a month's inspiration on SQLite, a first fare
// index entry) five to ten times, past the default on a loaded machine. The deadline's own tests
// set theirs (TestDeadlineStopsTheWork).
func testRequestTimeout() time.Duration {
	if raceDetector {
		return 3 * server.DefaultRequestTimeout
	}
	return server.DefaultRequestTimeout
}

// newServerWith is newServer with the configuration changed by tweak first. The demo key gets
// generous limits unless tweak asks for DefaultPlans.
func newServerWith(t testing.TB, db *store.DB, tweak func(*serverConfig)) *testServer {
	t.Helper()
	logs := &lockedBuffer{}
	cfg := testConfig(db, logs)
	if tweak != nil {
		tweak(&cfg)
	}
	h, demo := startServer(t, cfg)
	s := &testServer{db: db, log: logs, srv: h, demo: demo}
	// Count the SQL round trips of each request so tests and benchmarks can read them. The count
	// is published as the answer starts too: a client may read a short answer before the handler
	// has returned.
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := store.WithQueryCounter(r.Context())
		h.ServeHTTP(&countingWriter{w, ctx, &s.queries}, r.WithContext(ctx))
		s.queries.Store(store.QueryCount(ctx))
	}))
	s.Config.MaxHeaderBytes = server.MaxHeaderBytes // as Run's listener
	s.Start()
	t.Cleanup(s.Close)
	if !cfg.DefaultPlans {
		s.raiseLimits(t)
	}
	s.mailMark = s.lastMail(t)
	return s
}

// countingWriter publishes its request's SQL round trips to n whenever the answer is written.
type countingWriter struct {
	http.ResponseWriter
	ctx context.Context
	n   *atomic.Int64
}

func (c *countingWriter) WriteHeader(code int) {
	c.n.Store(store.QueryCount(c.ctx))
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.n.Store(store.QueryCount(c.ctx))
	return c.ResponseWriter.Write(b)
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// startServer builds the server of cfg, syncs the API catalogue and seeds the demo accounts.
func startServer(t testing.TB, cfg serverConfig) (*server.Server, *access.DemoCredentials) {
	t.Helper()
	h := cfg.build()
	ctx := context.Background()
	if err := h.Access.SyncCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	demo, err := h.Access.SeedDemo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return h, demo
}

// generousMail are mail budgets that tests of other things never meet.
var generousMail = access.MailLimits{Mailbox: 1 << 20, MailboxDay: 1 << 20, Client: 1 << 20, ClientDay: 1 << 20,
	Account: 1 << 20, AccountDay: 1 << 20, ReplicaPerMinute: 1 << 20}

// generousRates are call limits that tests of other things never meet.
var generousRates = flightgraph.Limits{PerSecond: 1_000_000, PerDay: 1_000_000_000}

// generousQueries are operation bounds that tests of other things never meet; the plans' own
// bounds are tested on their own.
var generousQueries = flightgraph.QueryLimits{MaxCost: 1_000_000, MaxDepth: 12, MaxAliases: 100, MaxRootFields: 20, MaxTokens: 5_000}

// testPlan is the most an operator may grant: tests of other things never meet it.
var testPlan = flightgraph.Limits{PerSecond: 10_000, PerDay: 1_000_000_000}

// raiseLimits gives each of the demo key's subscriptions a custom plan, the most an operator may
// grant, through the portal: the demo developer asks and the demo operator grants.
func (s *testServer) raiseLimits(t testing.TB) {
	t.Helper()
	dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	s.raiseLimitsKeyID = dev.grantLimits(t, s.oaOperator(t), s.demo.APIKey, testPlan, generousQueries)
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

// query posts a GraphQL operation with the demo key and decodes the answer.
func (s *testServer) query(t testing.TB, q string, vars map[string]any) gqlResponse {
	t.Helper()
	return s.queryAs(t, map[string]string{"api-key": s.demo.APIKey}, q, vars)
}

// queryAs posts a GraphQL operation with the given headers and decodes the answer.
func (s *testServer) queryAs(t testing.TB, headers map[string]string, q string, vars map[string]any) gqlResponse {
	t.Helper()
	return s.queryAt(t, "/graphql", headers, q, vars)
}

// portalAs is queryAs on the portal's endpoint.
func (s *testServer) portalAs(t testing.TB, headers map[string]string, q string, vars map[string]any) gqlResponse {
	t.Helper()
	return s.queryAt(t, "/portal/graphql", headers, q, vars)
}

func (s *testServer) queryAt(t testing.TB, path string, headers map[string]string, q string, vars map[string]any) gqlResponse {
	t.Helper()
	status, _, raw := s.call(t, http.MethodPost, path, headers, jsonBody(q, vars))
	var out gqlResponse
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("status %d, body %s: %v", status, raw, err)
	}
	return out
}

func TestHealthAndReadiness(t *testing.T) {
	db := storetest.Open(t, store.SQLite, os.Getenv)
	s := newServer(t, db)
	for _, c := range []struct {
		path string
		want int
	}{{"/healthz", 200}, {"/readyz", 200}, {"/metrics", 404}, {"/nope", 404}} {
		resp, err := http.Get(s.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d %s, want %d", c.path, resp.StatusCode, body, c.want)
		}
		if c.want == 404 && !strings.Contains(string(body), `"INSP_404.000"`) {
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

// metrics reads the server's metrics from its MetricsHandler, as a scraper on the metrics
// listener would.
func (s *testServer) metrics(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	s.srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// TestRunServesMetricsApart: Run serves the metrics on their own listener, not on the API's, and
// shuts both down together.
func TestRunServesMetricsApart(t *testing.T) {
	h, _ := startServer(t, testConfig(storetest.Open(t, store.SQLite, os.Getenv), io.Discard))
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return ln
	}
	api, metrics := listen(), listen()
	apiURL, metricsURL := "http://"+api.Addr().String(), "http://"+metrics.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx, api, metrics, server.Shutdown{Grace: time.Second}) }()
	t.Cleanup(func() { cancel(); <-done })
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	get(apiURL + "/healthz")
	if code, body := get(metricsURL + "/metrics"); code != 200 || !strings.Contains(body, `flightgraph_http_requests_total{code="200",method="GET",route="GET /healthz"} 1`) {
		t.Fatalf("metrics listener: %d %.300s", code, body)
	}
	if code, body := get(apiURL + "/metrics"); code != 404 || !strings.Contains(body, `"INSP_404.000"`) {
		t.Fatalf("GET /metrics on the API listener: %d %s, want the REST 404", code, body)
	}
	if code, _ := get(metricsURL + "/graphql"); code != 404 {
		t.Fatalf("the metrics listener serves the API: %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	done <- nil // for the cleanup
	for _, u := range []string{apiURL + "/healthz", metricsURL + "/metrics"} {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			t.Errorf("%s still answers after shutdown", u)
		}
	}
}

// TestMetricsCountLimiterFallbacks: with Redis unreachable, each decision the replica makes on
// its own is counted at /metrics.
func TestMetricsCountLimiterFallbacks(t *testing.T) {
	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { down.Close() })
	s := newServerWith(t, storetest.Open(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.NewLimiter = func(usage access.DayUsage) access.Limiter {
			return access.NewFallback(access.NewRedisLimiter(down, "fg:", usage), access.NewMemoryLimiter(usage, time.Now), c.Log)
		}
		c.DefaultPlans = true
	})
	for range 3 {
		if code, _, body := s.call(t, "GET", "/opendata/flightstatus/v1/ping", map[string]string{"api-key": s.demo.APIKey}, ""); code != 200 {
			t.Fatalf("ping with Redis down: %d %s", code, body)
		}
	}
	body := s.metrics(t)
	if !strings.Contains(body, "flightgraph_limiter_fallbacks_total 3") {
		t.Errorf("metrics lack 3 fallbacks:\n%s", body)
	}
}

func TestMetricsCountRequestsByRoute(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	s := newServer(t, db)
	s.query(t, `{ airport(code: "AMS") { name } }`, nil)
	http.Get(s.URL + "/opendata/nothing/here/123")
	body := s.metrics(t)
	for _, want := range []string{
		`flightgraph_http_requests_total{code="200",method="POST",route="/graphql"} 1`,
		`flightgraph_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`flightgraph_http_request_duration_seconds_count{method="POST",route="/graphql"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, "/opendata/nothing") {
		t.Error("a raw path became a metric label")
	}
}
