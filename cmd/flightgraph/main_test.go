package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// syncBuffer is a bytes.Buffer safe to write from the server while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// running is a server started through run, as main starts it.
type running struct {
	url        string
	metricsURL string // "" when the server serves no metrics
	stdout     *syncBuffer
	stderr     *syncBuffer
	stop       func() error
}

// start runs `flightgraph args…` with env until the test ends, and waits until it listens. It
// stops without draining unless args ask for a --drain-period, and its metrics listen on a free
// port unless args say otherwise, so that tests never compete for the default one.
func start(t *testing.T, env map[string]string, args ...string) *running {
	t.Helper()
	return startRaw(t, env, append([]string{"--drain-period=0", "--metrics-addr", "127.0.0.1:0"}, args...)...)
}

// startRaw is start with args as they are: the metrics take the default address unless args
// set one.
func startRaw(t *testing.T, env map[string]string, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	getenv := func(k string) string { return env[k] }
	go func() {
		err := run(ctx, args, getenv, strings.NewReader(""), pw, stderr)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	// serve prints the metrics URL, if any, before the line that says it listens.
	urls, metricsURLs := make(chan string, 1), make(chan string, 1)
	stdout := &syncBuffer{}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stdout.Write(append(sc.Bytes(), '\n'))
			if m := regexp.MustCompile(`^metrics on (http://\S+)/metrics$`).FindStringSubmatch(sc.Text()); m != nil {
				metricsURLs <- m[1]
			}
			if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	var once sync.Once
	var stopErr error
	r := &running{stdout: stdout, stderr: stderr, stop: func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(30 * time.Second):
				stopErr = context.DeadlineExceeded
			}
		})
		return stopErr
	}}
	t.Cleanup(func() { r.stop() })
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatalf("server exited before listening: %v\n%s", <-done, stderr)
		}
		r.url = u
		select {
		case r.metricsURL = <-metricsURLs:
		default:
		}
	case <-time.After(8 * time.Minute):
		// A first start materialises the demo window before it listens: seconds in a normal
		// build, minutes under -race on a loaded 2-core machine (CI saw 3 min pass).
		t.Fatalf("server did not listen in time:\n%s", stderr)
	}
	return r
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// demoCredentials reads the data folder's demo-credentials.json.
func demoCredentials(t *testing.T, dir string) map[string]string {
	t.Helper()
	path := filepath.Join(dir, "demo-credentials.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no demo credentials: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	var creds map[string]string
	if err := json.Unmarshal(raw, &creds); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"apiKey", "clientId", "clientSecret", "customerUsername", "customerPassword", "developerEmail", "developerPassword", "operatorEmail", "operatorPassword"} {
		if creds[k] == "" {
			t.Errorf("demo credentials lack %s", k)
		}
	}
	return creds
}

// demoKey reads the demo api-key from the data folder's demo-credentials.json.
func demoKey(t *testing.T, dir string) string { return demoCredentials(t, dir)["apiKey"] }

// gql posts a GraphQL operation with headers and decodes its data into into; it fails on an
// error. It reads the answer to the end: the server counts the request once its handler returns,
// which a decoder that stops at the closing brace could outrun.
func gql(t *testing.T, url string, headers map[string]string, q string, vars map[string]any, into any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Errors) > 0 {
		t.Fatalf("%.60s: %d %v %v", q, resp.StatusCode, err, out.Errors)
	}
	if err := json.Unmarshal(out.Data, into); err != nil {
		t.Fatal(err)
	}
}

// departures asks for the first 50 departures from AMS today and returns how many came back.
func departures(t *testing.T, base, key string) int {
	t.Helper()
	var out struct {
		Flights struct {
			TotalCount int
			Edges      []any
		}
	}
	gql(t, base+"/graphql", map[string]string{"api-key": key},
		`query($d: Date!) { flights(origin: "AMS", date: $d, first: 50) { totalCount edges { node { id status legs { aircraft { typeName } destination { city { country { name } } } } } } } }`,
		map[string]any{"d": time.Now().UTC().Format("2006-01-02")}, &out)
	return len(out.Flights.Edges)
}

func metric(t *testing.T, base, name string) float64 {
	t.Helper()
	_, body := get(t, base+"/metrics")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("metrics lack %s", name)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestEmbeddedAfterMigrateAndSeed: the README's other way to start the embedded store, migrate
// then seed then serve, ends with the demo accounts too, though serve loaded no data set.
func TestEmbeddedAfterMigrateAndSeed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"FLIGHTGRAPH_DATA_DIR": dir}
	getenv := func(k string) string { return env[k] }
	for _, args := range [][]string{{"migrate"}, {"seed", "--days-back", "0", "--days-ahead", "1"}} {
		if err := run(context.Background(), args, getenv, strings.NewReader(""), io.Discard, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	srv := start(t, env, "--addr", "127.0.0.1:0", "--roll-every", "0")
	if key := demoKey(t, dir); key == "" || !strings.Contains(srv.stdout.String(), "Demo accounts created") {
		t.Fatalf("no demo accounts after migrate, seed and serve: %q", srv.stdout.String())
	}
	// A second start leaves them alone.
	srv.stop()
	again := start(t, env, "--addr", "127.0.0.1:0", "--roll-every", "0")
	if strings.Contains(again.stdout.String(), "Demo accounts created") {
		t.Error("a second start created the demo accounts again")
	}
}

func TestServeEmbedded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"FLIGHTGRAPH_DATA_DIR": dir}
	srv := start(t, env, "--addr", "127.0.0.1:0", "--log-level", "debug")
	if code, body := get(t, srv.url+"/healthz"); code != 200 {
		t.Fatalf("healthz %d %s", code, body)
	}
	if code, body := get(t, srv.url+"/readyz"); code != 200 {
		t.Fatalf("readyz %d %s", code, body)
	}
	key := demoKey(t, dir)
	if n := departures(t, srv.url, key); n != 50 {
		t.Fatalf("%d departures, want 50", n)
	}
	if v := metric(t, srv.metricsURL, "flightgraph_db_queries_total"); v < 5 {
		t.Errorf("flightgraph_db_queries_total = %v after a query", v)
	}
	if _, body := get(t, srv.metricsURL+"/metrics"); !strings.Contains(body, `flightgraph_http_requests_total{code="200",method="POST",route="/graphql"} 1`) {
		t.Error("the GraphQL request was not counted")
	}
	// The metrics listener answers the probes too, apart from the API's connection caps.
	if code, body := get(t, srv.metricsURL+"/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("healthz on the metrics listener: %d %s", code, body)
	}
	if code, body := get(t, srv.metricsURL+"/readyz"); code != 200 {
		t.Errorf("readyz on the metrics listener: %d %s", code, body)
	}
	if !strings.Contains(srv.stderr.String(), "maxConns=") {
		t.Errorf("the start-up log does not give the cap of connections:\n%s", srv.stderr)
	}
	// The API's listener does not serve the metrics: they are an unknown path there.
	if code, body := get(t, srv.url+"/metrics"); code != 404 || !strings.Contains(body, `"INSP_404.000"`) {
		t.Errorf("GET /metrics on the API listener: %d %s, want 404 INSP_404.000", code, body)
	}
	if _, err := os.Stat(filepath.Join(dir, "flightgraph.db")); err != nil {
		t.Fatalf("no database in the data folder: %v", err)
	}
	// The first start's banner names the portal, the playground and GraphQL at the address it
	// listens on, and the credentials file; neither it nor any log line, at the debug level,
	// holds a password, the key or the secret.
	for _, want := range []string{"  portal      " + srv.url + "/portal\n", "  playground  " + srv.url + "/playground\n",
		"  GraphQL     " + srv.url + "/graphql\n", filepath.Join(dir, "demo-credentials.json")} {
		if !strings.Contains(srv.stdout.String(), want) {
			t.Errorf("the banner lacks %q:\n%s", want, srv.stdout)
		}
	}
	for _, page := range []string{"/portal", "/playground"} {
		if code, body := get(t, srv.url+page); code != 200 {
			t.Errorf("GET %s, as the banner names it: %d %.200s", page, code, body)
		}
	}
	out := srv.stdout.String() + srv.stderr.String()
	for name, secret := range demoCredentials(t, dir) {
		if strings.HasSuffix(name, "Password") || name == "clientSecret" || name == "apiKey" {
			if strings.Contains(out, secret) {
				t.Errorf("the first start printed the demo %s", name)
			}
		}
	}
	if !strings.Contains(srv.stderr.String(), "demo data set created") {
		t.Errorf("first start did not say it created the demo data:\n%s", srv.stderr)
	}
	if err := srv.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if !strings.Contains(srv.stderr.String(), "shutting down") {
		t.Errorf("no shutdown in the log:\n%s", srv.stderr)
	}
	if _, err := http.Get(srv.metricsURL + "/metrics"); err == nil {
		t.Error("the metrics listener still answers after shutdown")
	}

	if strings.Contains(srv.stderr.String(), "tracing") {
		t.Errorf("a start without an OTLP endpoint traces:\n%s", srv.stderr)
	}

	// A later start reuses the data and does not load it again; an empty --metrics-addr serves
	// no metrics. It traces, to the OTLP endpoint its environment names.
	spans := receiveSpans(t)
	tracedEnv := map[string]string{"FLIGHTGRAPH_OTLP_ENDPOINT": spans.URL}
	for k, v := range env {
		tracedEnv[k] = v
	}
	again := start(t, tracedEnv, "--addr", "127.0.0.1:0", "--metrics-addr=")
	if again.metricsURL != "" || strings.Contains(again.stdout.String(), "metrics") {
		t.Errorf("--metrics-addr= still serves metrics at %q:\n%s", again.metricsURL, again.stdout)
	}
	if n := departures(t, again.url, key); n != 50 {
		t.Fatalf("%d departures after a restart, want 50", n)
	}
	if strings.Contains(again.stderr.String(), "demo data set created") || strings.Contains(again.stderr.String(), "reference data loaded") {
		t.Errorf("a later start loaded the data again:\n%s", again.stderr)
	}
	if !strings.Contains(again.stdout.String(), filepath.Join(dir, "demo-credentials.json")) {
		t.Errorf("a later start's banner does not name the credentials file:\n%s", again.stdout)
	}
	if err := again.stop(); err != nil {
		t.Fatal(err)
	}
	// The spans left at the stop went out before it returned.
	if got := spans.names(); got["query"] == 0 || got["SELECT flights"] == 0 || !strings.Contains(again.stderr.String(), "tracing: spans are exported") {
		t.Errorf("the traced start exported %v; its log:\n%s", got, again.stderr)
	}
	metricsPortTaken(t, env)
}

// spanReceiver is an OTLP/HTTP receiver that counts the spans it is sent by name.
type spanReceiver struct {
	*httptest.Server
	mu sync.Mutex
	n  map[string]int
}

func receiveSpans(t *testing.T) *spanReceiver {
	rc := &spanReceiver{n: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					rc.n[sp.Name]++
				}
			}
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *spanReceiver) names() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return maps.Clone(rc.n)
}

// metricsPortTaken starts serve on the data of env with the metrics' port held by another
// listener: set explicitly, the start fails at once and says which address is taken; left at
// the default, the server serves without metrics and says so.
func metricsPortTaken(t *testing.T, env map[string]string) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	began := time.Now()
	var out, errs bytes.Buffer
	err = run(context.Background(), []string{"--addr", "127.0.0.1:0", "--metrics-addr", held.Addr().String()},
		func(k string) string { return env[k] }, strings.NewReader(""), &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr "+held.Addr().String()+" is taken") {
		t.Errorf("serve with a taken --metrics-addr: %v, want an error naming the address", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("a taken --metrics-addr failed after %v: it should fail before any work", took)
	}
	// The same address from the environment is as explicit as the flag.
	envTaken := map[string]string{"FLIGHTGRAPH_METRICS_ADDR": held.Addr().String()}
	for k, v := range env {
		envTaken[k] = v
	}
	err = run(context.Background(), []string{"--addr", "127.0.0.1:0"}, func(k string) string { return envTaken[k] }, strings.NewReader(""), &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "is taken") {
		t.Errorf("serve with a taken FLIGHTGRAPH_METRICS_ADDR: %v, want an error", err)
	}

	// The default port, held by this test (or by something else already, which does as well).
	if def, err := net.Listen("tcp", defaultMetricsAddr); err == nil {
		defer def.Close()
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		t.Skipf("cannot hold %s: %v", defaultMetricsAddr, err)
	}
	srv := startRaw(t, env, "--addr", "127.0.0.1:0", "--drain-period=0")
	if srv.metricsURL != "" || strings.Contains(srv.stdout.String(), "metrics on") {
		t.Errorf("metrics served at %q although the default address is taken:\n%s", srv.metricsURL, srv.stdout)
	}
	if !strings.Contains(srv.stderr.String(), "the default metrics address is taken") {
		t.Errorf("the log does not say the default metrics address is taken:\n%s", srv.stderr)
	}
	if code, body := get(t, srv.url+"/healthz"); code != 200 {
		t.Errorf("healthz without metrics: %d %s", code, body)
	}
}

func TestPostgres(t *testing.T) {
	storetest.DatabaseURL(t)
	dsn := storetest.DSN(t, store.Postgres, os.Getenv)
	env := map[string]string{"FLIGHTGRAPH_DATABASE_URL": dsn}
	var out, errs bytes.Buffer

	// Replicas share the key that signs offer ids: without one, serve refuses before any work.
	err := run(context.Background(), []string{"--addr", "127.0.0.1:0"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "--offer-key") {
		t.Fatalf("serve on PostgreSQL without an offer key: %v", err)
	}
	env["FLIGHTGRAPH_OFFER_KEY"] = "c2lnbmluZyBrZXkgb2YgdGhlIHBvc3RncmVzIHRlc3QgKDMyKyBieXRlcyk="

	// serve refuses an empty database rather than migrating behind the operator's back.
	err = run(context.Background(), []string{"--addr", "127.0.0.1:0"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "flightgraph migrate") {
		t.Fatalf("serve on an empty database: %v", err)
	}
	if err := run(context.Background(), []string{"migrate"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errs); err != nil {
		t.Fatalf("migrate: %v\n%s", err, errs.String())
	}
	if want := fmt.Sprintf("postgres schema at version %d (was 0)", store.LatestVersion(store.Postgres)); !strings.Contains(out.String(), want) {
		t.Errorf("migrate said %q", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"seed", "--days-back", "1", "--days-ahead", "1"}, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errs); err != nil {
		t.Fatalf("seed: %v\n%s", err, errs.String())
	}
	if !strings.Contains(out.String(), "seeded postgres") {
		t.Errorf("seed said %q", out.String())
	}
	dir := t.TempDir()
	env["FLIGHTGRAPH_DATA_DIR"] = dir
	srv := start(t, env, "--addr", "127.0.0.1:0", "--roll-every", "0", "--demo")
	if n := departures(t, srv.url, demoKey(t, dir)); n != 50 {
		t.Fatalf("%d departures on PostgreSQL, want 50", n)
	}
}

func TestBadInvocations(t *testing.T) {
	getenv := func(k string) string {
		return map[string]string{"FLIGHTGRAPH_DATA_DIR": t.TempDir()}[k]
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fly"}, `unknown command "fly"`},
		{[]string{"serve", "--log-level", "loud"}, "log level"},
		{[]string{"serve", "--log-format", "xml"}, "log format"},
		{[]string{"seed", "--scale", "0"}, "scale must be between 1 and"},
		{[]string{"seed", "--scale", "99"}, "scale must be between 1 and"},
		{[]string{"migrate", "extra"}, `unexpected argument "extra"`},
		{[]string{"seed", "--scale", "two"}, `invalid value "two" for flag -scale`},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--redis-url", "http://user:s3cret@host"}, "is not a redis:// or rediss:// URL"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--password-hash-concurrency", "0"}, "--password-hash-concurrency 0: want 1 or more"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--mail-per-minute", "0"}, "--mail-per-minute 0: want 1 or more"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--request-timeout", "0"}, "--request-timeout 0s: want a positive duration"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--max-conns", "-1"}, "--max-conns -1: want 0 (from the file limit) or more"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--max-conns-per-address", "-5"}, "--max-conns-per-address -5: want 0"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--idle-timeout", "0"}, "--idle-timeout 0s: want a positive duration"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--idle-timeout", "10s", "--pressure-idle-timeout", "1m"}, "--pressure-idle-timeout 1m0s: want a positive duration, at most --idle-timeout (10s)"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--mail-retention", "-1h"}, "--mail-retention -1h0m0s: want a positive duration"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--queue-wait", "0"}, "--queue-wait 0s: want a positive duration under --request-timeout"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--heavy-concurrency", "-1"}, "--heavy-concurrency -1: want 0 (the default) or more"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--db-max-conns", "-1"}, "--db-max-conns -1: want 0 (the default) or more"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--public-url", "developer.example.com"}, "--public-url"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--public-url", "https://developer.example.com/?a=b"}, "--public-url"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--cors-origins", "https://app.example.com/"}, `--cors-origins: origin "https://app.example.com/": want scheme://host[:port]`},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--cors-origins", "app.example.com"}, "--cors-origins"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--otlp-endpoint", "localhost:4318"}, "--otlp-endpoint"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--otlp-endpoint", "http://user:s3cret@collector:4318/?x=1"}, "--otlp-endpoint"},
	} {
		var out, errs bytes.Buffer
		err := run(context.Background(), c.args, getenv, strings.NewReader(""), &out, &errs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v: the error shows the password: %v", c.args, err)
		}
	}
	// A bad environment value is as clear an error as a bad flag.
	badEnv := func(k string) string {
		return map[string]string{"FLIGHTGRAPH_DATA_DIR": t.TempDir(), "FLIGHTGRAPH_ROLL_EVERY": "hourly"}[k]
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"serve"}, badEnv, strings.NewReader(""), &out, io.Discard); err == nil || !strings.Contains(err.Error(), `FLIGHTGRAPH_ROLL_EVERY="hourly"`) {
		t.Errorf("bad FLIGHTGRAPH_ROLL_EVERY: %v", err)
	}
	// Tracing that flightgraph cannot do is refused, not silently skipped.
	for name, value := range map[string]string{"OTEL_TRACES_EXPORTER": "zipkin", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"} {
		otelEnv := func(k string) string {
			return map[string]string{"FLIGHTGRAPH_DATA_DIR": t.TempDir(), "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", name: value}[k]
		}
		if err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0"}, otelEnv, strings.NewReader(""), &out, io.Discard); err == nil || !strings.Contains(err.Error(), name+"="+value) {
			t.Errorf("serve with %s=%s: %v, want an error naming it", name, value, err)
		}
	}
	if err := run(context.Background(), []string{"version"}, getenv, strings.NewReader(""), &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "flightgraph ") {
		t.Errorf("version: %q %v", out.String(), err)
	}
}

// TestHelpExitsZero: asking for help is no failure: the usage is printed and the exit code is 0;
// a bad invocation exits 1 with its error.
func TestHelpExitsZero(t *testing.T) {
	getenv := func(string) string { return "" }
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"serve", "-h"}, {"migrate", "--help"}, {"seed", "-h"}} {
		var out, errs bytes.Buffer
		code := exitCode(run(context.Background(), args, getenv, strings.NewReader(""), &out, &errs), &errs)
		if code != 0 || !strings.Contains(strings.ToLower(out.String()+errs.String()), "usage") {
			t.Errorf("%v: exit %d, output %q %q; want 0 and the usage", args, code, out.String(), errs.String())
		}
	}
	var errs bytes.Buffer
	if code := exitCode(run(context.Background(), []string{"fly"}, getenv, strings.NewReader(""), io.Discard, &errs), &errs); code != 1 || !strings.Contains(errs.String(), "unknown command") {
		t.Errorf("an unknown command: exit %d, %q; want 1 and the error", code, errs.String())
	}
}

// TestHelpAndVersion: --help lists every command and the flags of serve, on stdout; version and
// --version print the same line, the version of the build.
func TestHelpAndVersion(t *testing.T) {
	getenv := func(string) string { return "" }
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		var out, errs bytes.Buffer
		if err := run(context.Background(), args, getenv, strings.NewReader(""), &out, &errs); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, want := range []string{"serve ", "migrate ", "seed ", "operator ", "version ", "-addr", "-metrics-addr", "-data-dir", "-drain-period", "FLIGHTGRAPH_SMTP_URL"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v does not list %q:\n%s", args, want, out.String())
			}
		}
	}
	v, _ := versionInfo()
	var lines []string
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out bytes.Buffer
		if err := run(context.Background(), args, getenv, strings.NewReader(""), &out, io.Discard); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !strings.HasPrefix(out.String(), "flightgraph "+v) {
			t.Errorf("%v printed %q, want flightgraph %s", args, out.String(), v)
		}
		lines = append(lines, out.String())
	}
	if lines[0] != lines[1] || lines[1] != lines[2] {
		t.Errorf("version and --version differ: %q", lines)
	}
}

// TestVersionOf: the version comes from the build: set at build time, else the VCS stamp, else
// the module's version, else "(devel)".
func TestVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}}
	dirty := append(slices.Clone(vcs), debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, c := range []struct {
		name    string
		info    *debug.BuildInfo
		stamped string
		want    string
	}{
		{"no build information", nil, "", "(devel)"},
		{"a build of the source without VCS", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "(devel)"},
		{"go install at a version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "", "v1.2.3"},
		{"a build from a commit", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "", "0123456789ab"},
		{"with changes", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: dirty}, "", "0123456789ab+dirty"},
		{"set at build time", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: vcs}, "v2.0.0", "v2.0.0"},
	} {
		if got, _ := versionOf(c.info, c.stamped); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPortalURL: mails link to the portal under the public URL when one is set.
func TestPortalURL(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	for public, want := range map[string]string{"": "http://127.0.0.1:8080/portal", "https://developer.example.com/": "https://developer.example.com/portal",
		"https://example.com/flights": "https://example.com/flights/portal"} {
		if got := portalURL(public, addr); got != want {
			t.Errorf("portalURL(%q): %q, want %q", public, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://app:s3cret@db:5432/fg":       "postgres://app:***@db:5432/fg",
		"redis://:p@ss@cache:6379/0":             "redis://:***@cache:6379/0",
		"postgres://app@db:5432/fg":              "postgres://app@db:5432/fg",
		"flightgraph-data/flightgraph.db?mode=x": "flightgraph-data/flightgraph.db?mode=x",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOperatorAdd(t *testing.T) {
	dir := t.TempDir()
	getenv := func(k string) string { return map[string]string{"FLIGHTGRAPH_DATA_DIR": dir}[k] }
	var out, errs bytes.Buffer
	args := []string{"operator", "add", "--email", "Grace@Example.com", "--name", "Grace Hopper"}
	if err := run(context.Background(), args, getenv, strings.NewReader("short\n"), &out, &errs); err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("a short password was accepted: %v", err)
	}
	if err := run(context.Background(), args, getenv, strings.NewReader("a long operator password\n"), &out, &errs); err != nil {
		t.Fatalf("operator add: %v", err)
	}
	if !strings.Contains(out.String(), "operator Grace Hopper <grace@example.com> added") {
		t.Errorf("operator add said %q", out.String())
	}
	if err := run(context.Background(), args, getenv, strings.NewReader("a long operator password\n"), &out, &errs); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a second operator with the same e-mail: %v", err)
	}
	// The operator can sign in to the portal of the server on that data folder.
	srv := start(t, map[string]string{"FLIGHTGRAPH_DATA_DIR": dir}, "--addr", "127.0.0.1:0", "--roll-every", "0")
	body, _ := json.Marshal(map[string]any{"query": `mutation { signIn(email: "grace@example.com", password: "a long operator password") { account { role } } }`})
	resp, err := http.Post(srv.url+"/portal/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), `"role":"operator"`) {
		t.Fatalf("operator sign-in: %s", raw)
	}
}
