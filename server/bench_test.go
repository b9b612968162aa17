package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// BenchmarkDepartures runs the Departures query in-process (handler.ServeHTTP, no network) on a
// store holding the standard window of flights, and reports the median latency and the SQL round
// trips per query beside ns/op. first=5 is the baseline measured in the same run. It runs on the
// embedded store and on PostgreSQL (skipped when FLIGHTGRAPH_TEST_DATABASE_URL is unset).
func BenchmarkDepartures(b *testing.B) {
	server.TuneRuntime(os.Getenv) // as flightgraph serve does
	storetest.ForEachDialect(b, benchmarkDepartures)
}

func benchmarkDepartures(b *testing.B, dialect string) {
	db := storetest.SeededWindow(b, dialect, os.Getenv, dataset.DaysBack, dataset.DaysAhead)
	cfg := testConfig(db, io.Discard)
	cfg.SnapshotTTL = store.DefaultSnapshotTTL // as flightgraph serve does
	h, demo := startServer(b, cfg)
	(&testServer{db: db, srv: h, demo: demo}).raiseLimits(b)
	for _, first := range []int{5, 50} {
		body, _ := json.Marshal(map[string]any{"query": departures, "variables": departuresVars(first)})
		b.Run("first="+map[int]string{5: "5", 50: "50"}[first], func(b *testing.B) {
			measure(b, h, func() *http.Request {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("api-key", demo.APIKey)
				return req
			})
		})
	}
}

// measure serves requests in-process (handler.ServeHTTP, no network) for the benchmark's loop,
// each of which must answer 200 without errors, and reports the median and 90th percentile
// latencies and the SQL round trips of a request beside ns/op.
func measure(b *testing.B, h http.Handler, newRequest func() *http.Request) {
	var (
		lat     []time.Duration
		queries int64
	)
	for b.Loop() {
		req := newRequest()
		ctx := store.WithQueryCounter(req.Context())
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req.WithContext(ctx))
		lat = append(lat, time.Since(start))
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
			b.Fatalf("status %d: %.300s", rec.Code, rec.Body.String())
		}
		queries = store.QueryCount(ctx)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(queries), "round-trips")
}

// BenchmarkCompression serves the Departures query (first: 50) over real HTTP on loopback, each
// round sending it once as identity, once with Accept-Encoding: gzip and once with zstd, in an
// order that turns from round to round, and reports for each the bytes on the wire (the answer's
// status line, headers and body, as the client's connection read them) and the median latency
// of the whole exchange, the client's decoding included. It fails when gzip's median is more than
// 10% over identity's: compression must not cost on loopback more than it saves.
func BenchmarkCompression(b *testing.B) {
	server.TuneRuntime(os.Getenv) // as flightgraph serve does
	db := storetest.SeededWindow(b, store.SQLite, os.Getenv, dataset.DaysBack, dataset.DaysAhead)
	s := newServer(b, db)
	var read atomic.Int64
	client := &http.Client{Transport: &http.Transport{
		DisableCompression: true, // the encodings are asked for and decoded below
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			return &countingConn{Conn: c, read: &read}, err
		},
	}}
	body, _ := json.Marshal(map[string]any{"query": departures, "variables": departuresVars(50)})
	codings := []string{"identity", "gzip", "zstd"}
	lat := map[string][]time.Duration{}
	wire := map[string]int64{}
	exchange := func(coding string) {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("api-key", s.demo.APIKey)
		req.Header.Set("Accept-Encoding", coding)
		before := read.Load()
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var r io.Reader = resp.Body
		switch resp.Header.Get("Content-Encoding") {
		case "gzip": // as Go's transport decodes it
			if r, err = gzip.NewReader(resp.Body); err != nil {
				b.Fatal(err)
			}
		case "zstd":
			d, err := zstd.NewReader(resp.Body, zstd.WithDecoderConcurrency(1))
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			r = d
		}
		answer, err := io.ReadAll(r)
		resp.Body.Close()
		lat[coding] = append(lat[coding], time.Since(start))
		wire[coding] = read.Load() - before
		want := coding
		if coding == "identity" {
			want = ""
		}
		if resp.StatusCode != http.StatusOK || err != nil || resp.Header.Get("Content-Encoding") != want || bytes.Contains(answer, []byte(`"errors"`)) {
			b.Fatalf("%s: %d %q %v: %.300s", coding, resp.StatusCode, resp.Header.Get("Content-Encoding"), err, answer)
		}
	}
	for _, c := range codings { // warm the connection, the caches and the encoders' pools
		exchange(c)
	}
	clear(lat)
	round := 0
	for b.Loop() {
		for i := range codings {
			exchange(codings[(round+i)%len(codings)])
		}
		round++
	}
	p50 := map[string]float64{}
	for _, c := range codings {
		slices.Sort(lat[c])
		p50[c] = float64(lat[c][len(lat[c])/2].Microseconds()) / 1000
		b.ReportMetric(float64(wire[c]), c+"-bytes")
		b.ReportMetric(p50[c], c+"-p50-ms")
	}
	b.ReportMetric(p50["gzip"]/p50["identity"], "gzip/identity-p50")
	if p50["gzip"] > p50["identity"]*1.10 {
		b.Fatalf("gzip's p50 %.3f ms is more than 10%% over identity's %.3f ms", p50["gzip"], p50["identity"])
	}
}

// countingConn counts the bytes read from its connection.
type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}
