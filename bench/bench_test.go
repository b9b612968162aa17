package bench_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/bench"
)

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
