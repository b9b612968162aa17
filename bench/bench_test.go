package bench_test

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/bench"
)

// TestMain lets the test binary be a bare server (bench.Bare).
func TestMain(m *testing.M) {
	bench.BareMain()
	os.Exit(m.Run())
}

// TestHarness starts the built binary as the load runs do and reads what they read of it, so that
// a harness broken by a change to the binary's flags or output fails in CI, not in the next load
// run.
func TestHarness(t *testing.T) {
	s := bench.Start(t, nil)
	c := bench.ClientFrom("127.0.0.2", 5*time.Second)
	resp, err := c.Get(s.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz %d", resp.StatusCode)
	}
	if s.Credentials(t)["apiKey"] == "" {
		t.Error("no demo api key")
	}
	before := s.CPU(t)
	for range 300 {
		if resp, err := c.Get(s.URL + "/openapi.json"); err == nil {
			resp.Body.Close()
		}
	}
	if s.CPU(t) <= before {
		t.Error("no CPU time read for the server's work")
	}
	if v := s.Metric(t, `flightgraph_http_requests_total{code="200",method="GET",route="GET /healthz"}`); v != 1 {
		t.Errorf("healthz counted %v times, want 1", v)
	}
}

// TestLoads runs the load generator against bare servers, as BenchmarkWorkloads does against
// flightgraph: a closed loop counts every answer with the wanted status and times it, counts the
// others as failures with the first one's status and body, each client sends the calls given in
// turn, and a paced load sends its rate.
func TestLoads(t *testing.T) {
	ok := bench.Request{Method: http.MethodPost, URL: bench.Bare(t, http.StatusOK, http.Header{"X-Answer": {"yes"}}, []byte(`{"ok":true}`)), Body: []byte("{}")}
	c := bench.LoadClient("127.0.0.2", 5*time.Second)
	status, h, body, err := ok.Do(t.Context(), c)
	if err != nil || status != http.StatusOK || h.Get("X-Answer") != "yes" || string(body) != `{"ok":true}` {
		t.Fatalf("bare answer: %v %d %v %q", err, status, h, body)
	}
	r := bench.Closed(c, 4, 300*time.Millisecond, http.StatusOK, ok)
	if r.OK < 10 || r.Failed != 0 || r.Latency.Len() != r.OK || r.PerSecond() <= 0 || r.Latency.Quantile(.5) > r.Latency.Quantile(.99) {
		t.Errorf("closed loop on a bare server: %+v, p50 %v, p99 %v", r, r.Latency.Quantile(.5), r.Latency.Quantile(.99))
	}
	refused := bench.Request{Method: http.MethodGet, URL: bench.Bare(t, http.StatusTooManyRequests, nil, []byte("slow down"))}
	// One client sends the calls in turn: as many refused as answered.
	r = bench.Closed(c, 1, 200*time.Millisecond, http.StatusOK, refused, ok)
	if r.OK == 0 || r.Failed < r.OK || r.Failed > r.OK+1 || r.Failure != "429 slow down" {
		t.Errorf("closed loop, one client on a refused call and an answered one in turn: %d OK, %d failed, first %q", r.OK, r.Failed, r.Failure)
	}
	r = bench.Paced(c, 50, 400*time.Millisecond, ok, http.StatusOK)
	if r.OK < 18 || r.OK > 21 || r.Failed != 0 {
		t.Errorf("50 calls a second for 400 ms: %d answered, %d failed, want 20", r.OK, r.Failed)
	}
}
