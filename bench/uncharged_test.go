package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/bench"
	"github.com/flightgraph/flightgraph/graph"
)

// BenchmarkPendingKeysIntrospect is issue 18's bar for uncharged calls: an account makes 10 keys
// that nobody approved and introspects the flight schema with them as fast as it can for 15 s,
// from one client address, while another address makes a cheap charged call with the demo key
// (GET /opendata/flightstatus/{id}, about three a second, under the Default plan's five). The cheap
// call's median under the load must stay within twice its idle median, and a conditional
// introspection (GraphQL over GET with If-None-Match) must answer 304 with no body.
//
//	go test ./bench -run '^$' -bench PendingKeysIntrospect -benchtime 1x
func BenchmarkPendingKeysIntrospect(b *testing.B) {
	for b.Loop() {
		pendingKeysIntrospect(b)
	}
}

func pendingKeysIntrospect(b *testing.B) {
	s := bench.Start(b, nil)
	creds := s.Credentials(b)
	attacker := bench.ClientFrom("127.0.0.2", 10*time.Second)
	victim := bench.ClientFrom("127.0.0.3", 10*time.Second)

	// The account: the demo developer, signed in through the portal's API, makes 10 keys for an
	// API nobody approves (an application holds at most 5 active keys).
	var signIn struct{ SignIn struct{ Token string } }
	s.Portal(b, attacker, "", `mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { token } }`,
		map[string]any{"e": creds["developerEmail"], "p": creds["developerPassword"]}, &signIn)
	session := signIn.SignIn.Token
	var pending []string
	for a := range 2 {
		var app struct{ RegisterApplication struct{ ID string } }
		s.Portal(b, attacker, session, `mutation($n: String!) { registerApplication(input: {name: $n, description: "pending keys"}) { id } }`,
			map[string]any{"n": fmt.Sprintf("Pending %d", a)}, &app)
		for range 5 {
			var key struct {
				RequestKey struct{ Key struct{ APIKey string } }
			}
			s.Portal(b, attacker, session, `mutation($a: ID!) { requestKey(input: {applicationId: $a, api: "schedule"}) { key { apiKey } } }`,
				map[string]any{"a": app.RegisterApplication.ID}, &key)
			pending = append(pending, key.RequestKey.Key.APIKey)
		}
	}

	// The cheap call: one flight's status, by an id the list gives.
	demoKey := creds["apiKey"]
	today := time.Now().UTC().Format("2006-01-02")
	var list struct{ OperationalFlights []struct{ ID string } }
	status, body := get(b, victim, s.URL+"/opendata/flightstatus?startRange="+today+"T00:00:00Z&endRange="+today+"T23:59:00Z&origin=AMS&pageSize=1",
		http.Header{"api-key": {demoKey}})
	if status != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.OperationalFlights) == 0 {
		b.Fatalf("flight list: %d %.300s", status, body)
	}
	cheap := s.URL + "/opendata/flightstatus/" + url.PathEscape(list.OperationalFlights[0].ID)
	// measure times the cheap call for d; it runs beside the load, so it keeps its failures
	// for the benchmark's goroutine to report.
	measure := func(d time.Duration) (lat *bench.Latencies, failed []string) {
		lat = &bench.Latencies{}
		// A call 300 ms after the previous one answered: under the Default plan's 5 a second
		// however late they answer.
		for end := time.Now().Add(d); time.Now().Before(end); {
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			req, _ := http.NewRequest(http.MethodGet, cheap, nil)
			req.Header.Set("api-key", demoKey)
			resp, err := victim.Do(req)
			if err != nil {
				failed = append(failed, err.Error())
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failed = append(failed, fmt.Sprintf("%d %.200s", resp.StatusCode, body))
				continue
			}
			lat.Add(time.Since(start))
		}
		return lat, failed
	}
	measure(2 * time.Second) // warm
	idle, failed := measure(10 * time.Second)
	if len(failed) > 0 {
		b.Fatalf("idle cheap calls failed: %v", failed)
	}

	// The load: every pending key introspects from several goroutines, without pause.
	query, _ := json.Marshal(map[string]string{"query": graph.IntrospectionQuery})
	var answered, refused, limited, other atomic.Int64
	var (
		loaded       *bench.Latencies
		loadedFailed []string
	)
	done := make(chan struct{})
	go func() { defer close(done); loaded, loadedFailed = measure(15 * time.Second) }()
	cpu0, self0, t0 := s.CPU(b), selfCPU(), time.Now()
	bench.Run(context.Background(), 2*len(pending), 15*time.Second, func(ctx context.Context, w int) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/graphql", bytes.NewReader(query))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("api-key", pending[w%len(pending)])
		resp, err := attacker.Do(req)
		if err != nil {
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			answered.Add(1)
		case http.StatusForbidden:
			refused.Add(1)
		case http.StatusTooManyRequests:
			limited.Add(1)
		default:
			other.Add(1)
		}
	})
	cores, clientCores := float64(s.CPU(b)-cpu0)/float64(time.Since(t0)), float64(selfCPU()-self0)/float64(time.Since(t0))
	<-done
	if len(loadedFailed) > 0 {
		b.Errorf("%d cheap calls failed under the load: %.3q", len(loadedFailed), loadedFailed)
	}

	ratio := float64(loaded.Quantile(.5)) / float64(idle.Quantile(.5))
	b.ReportMetric(float64(idle.Quantile(.5).Microseconds())/1000, "idle-p50-ms")
	b.ReportMetric(float64(loaded.Quantile(.5).Microseconds())/1000, "load-p50-ms")
	b.ReportMetric(float64(loaded.Quantile(.99).Microseconds())/1000, "load-p99-ms")
	b.ReportMetric(ratio, "p50-ratio")
	b.ReportMetric(cores, "server-cores")
	b.ReportMetric(clientCores, "client-cores")
	b.ReportMetric(float64(answered.Load()), "introspections")
	b.ReportMetric(float64(refused.Load()), "refused-403")
	b.ReportMetric(float64(limited.Load()), "refused-429")
	b.ReportMetric(float64(other.Load()), "other")
	b.Logf("cheap call p50 idle %v, under load %v (×%.2f), p99 under load %v; server %.2f cores, load generator %.2f; pending keys: %d answered, %d × 403, %d × 429, %d other",
		idle.Quantile(.5), loaded.Quantile(.5), ratio, loaded.Quantile(.99), cores, clientCores, answered.Load(), refused.Load(), limited.Load(), other.Load())
	// A conditional introspection, with the demo key: GraphQL over GET.
	introspect := s.URL + "/graphql?query=" + url.QueryEscape(graph.IntrospectionQuery)
	h := http.Header{"api-key": {demoKey}, "Accept": {"application/json"}}
	status, body, etag := getTagged(b, victim, introspect, h)
	if status != http.StatusOK || etag == "" {
		b.Errorf("GET introspection: %d, ETag %q, %.200s", status, etag, body)
	}
	h.Set("If-None-Match", etag)
	notModified, body, _ := getTagged(b, victim, introspect, h)
	if notModified != http.StatusNotModified || len(body) != 0 {
		b.Errorf("conditional GET introspection: %d with %d bytes, want 304 and none", notModified, len(body))
	}

	if answered.Load() > 0 {
		b.Errorf("%d introspections answered to keys nobody approved, want 0", answered.Load())
	}
	if ratio > 2 {
		b.Errorf("the cheap call's median is %.2f× its idle figure under the load, want at most 2×", ratio)
	}
}

// get sends a GET with headers and returns the status and body.
func get(b *testing.B, c *http.Client, target string, h http.Header) (int, []byte) {
	b.Helper()
	status, body, _ := getTagged(b, c, target, h)
	return status, body
}

// getTagged is get that returns the answer's ETag too.
func getTagged(b *testing.B, c *http.Client, target string, h http.Header) (int, []byte, string) {
	b.Helper()
	req, _ := http.NewRequest(http.MethodGet, target, nil)
	req.Header = h.Clone()
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body, resp.Header.Get("ETag")
}

// selfCPU is the CPU time this process (the load generator) has used, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
