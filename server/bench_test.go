package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/flightgraph/flightgraph/tracing"
)

// BenchmarkDepartures runs the Departures query in-process (handler.ServeHTTP, no network) on a
// store holding the standard window of flights, and reports the median latency and the SQL round
// trips per query beside ns/op, at the board's sizes of the performance issue (5, 20 and 100
// flights); first=5 is the baseline measured in the same run. It runs on the embedded store and
// on PostgreSQL (skipped when FLIGHTGRAPH_TEST_DATABASE_URL is unset).
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
	for _, first := range []int{5, 20, 100} {
		body, _ := json.Marshal(map[string]any{"query": departures, "variables": departuresVars(first)})
		b.Run("first="+strconv.Itoa(first), func(b *testing.B) {
			measure(b, h, func() *http.Request {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("api-key", demo.APIKey)
				return req
			})
		})
	}
}

// BenchmarkDeparturesTracing runs BenchmarkDepartures' query (first=5) in one run on two servers
// over one store: one without tracing (tracing=off: no hook set, as serve without an OTLP endpoint),
// and one that traces, its spans exported in batches over OTLP/HTTP, as serve does, to a receiver
// in the process that reads and discards them. The traced server is measured twice: requests
// without a traceparent, each recorded and exported (tracing=on), and requests whose traceparent
// says not sampled (tracing=unsampled). Each reports the median latency and the allocations per
// request (allocs/op, which counts the exporter's work in the background too). Compare the
// medians of several runs (-count).
func BenchmarkDeparturesTracing(b *testing.B) {
	server.TuneRuntime(os.Getenv) // as flightgraph serve does
	storetest.ForEachDialect(b, func(b *testing.B, dialect string) {
		db := storetest.SeededWindow(b, dialect, os.Getenv, dataset.DaysBack, dataset.DaysAhead)
		sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		defer sink.Close()
		tr, err := tracing.New(context.Background(), tracing.Config{Endpoint: sink.URL, Version: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		defer tr.Shutdown(context.Background())
		cfg := testConfig(db, io.Discard)
		cfg.SnapshotTTL = store.DefaultSnapshotTTL // as flightgraph serve does
		off, demo := startServer(b, cfg)
		(&testServer{db: db, srv: off, demo: demo}).raiseLimits(b)
		cfg.Server.Registry = prometheus.NewRegistry()
		cfg.Server.Trace, cfg.Trace = tr.Handler, tr.Work
		on := cfg.build()
		body, _ := json.Marshal(map[string]any{"query": departures, "variables": departuresVars(5)})
		newRequest := func(traceparent string) *http.Request {
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("api-key", demo.APIKey)
			if traceparent != "" {
				req.Header.Set("traceparent", traceparent)
			}
			return req
		}
		// Each server's caches (the reference snapshot, the guard's, the statements') are filled
		// before anything is measured.
		db.OnStatement = tr.Statements(dialect)
		for range 20 {
			off.ServeHTTP(httptest.NewRecorder(), newRequest(""))
			on.ServeHTTP(httptest.NewRecorder(), newRequest(""))
		}
		for _, v := range []struct {
			name        string
			h           http.Handler
			traceparent string
		}{
			{"tracing=off", off, ""},
			{"tracing=on", on, ""},
			{"tracing=unsampled", on, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"},
		} {
			b.Run(v.name, func(b *testing.B) {
				db.OnStatement = nil
				if v.h == on {
					db.OnStatement = tr.Statements(dialect)
				}
				b.ReportAllocs()
				measure(b, v.h, func() *http.Request { return newRequest(v.traceparent) })
			})
		}
		// The three in turn, request by request, so that the machine's noise falls on each alike:
		// their median latencies and the ratios of the traced ones' to the untraced one's.
		b.Run("interleaved", func(b *testing.B) {
			db.OnStatement = tr.Statements(dialect)
			lat := map[string][]time.Duration{}
			variants := []string{"off", "on", "unsampled"}
			round := 0
			for b.Loop() {
				for i := range variants {
					v := variants[(round+i)%len(variants)]
					h, req := on, newRequest("")
					switch v {
					case "off":
						// The untraced server's statements are not hooked at all, as without tracing;
						// no request of the traced server is in flight meanwhile.
						db.OnStatement = nil
						h = off
					case "unsampled":
						req = newRequest("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
					}
					rec := httptest.NewRecorder()
					start := time.Now()
					h.ServeHTTP(rec, req)
					lat[v] = append(lat[v], time.Since(start))
					db.OnStatement = tr.Statements(dialect)
					if rec.Code != http.StatusOK {
						b.Fatalf("%s: status %d: %.300s", v, rec.Code, rec.Body.String())
					}
				}
				round++
			}
			p50 := map[string]float64{}
			for _, v := range variants {
				slices.Sort(lat[v])
				p50[v] = float64(lat[v][len(lat[v])/2].Microseconds()) / 1000
				b.ReportMetric(p50[v], v+"-p50-ms")
			}
			b.ReportMetric(p50["on"]/p50["off"], "on/off-p50")
			b.ReportMetric(p50["unsampled"]/p50["off"], "unsampled/off-p50")
		})
	})
}

// measure serves requests in-process (handler.ServeHTTP, no network) for the benchmark's loop,
// each of which must answer 200 without errors, and reports the median and 90th percentile
// latencies, the process's CPU time per request (cpu-ms/op: what the request cost the machine,
// the garbage collector's work included, which varies far less than latency on a shared machine),
// the goroutines started per request (goroutines/op: gqlgen starts one per resolver field and per
// element of a list of objects) and the SQL round trips of a request beside ns/op.
func measure(b *testing.B, h http.Handler, newRequest func() *http.Request) {
	var (
		lat     []time.Duration
		queries int64
	)
	goroutines := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(goroutines)
	started := goroutines[0].Value
	cpu := processCPU()
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
	cpu = processCPU() - cpu
	metrics.Read(goroutines)
	slices.Sort(lat)
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
	}
	if started.Kind() == metrics.KindUint64 {
		b.ReportMetric(float64(goroutines[0].Value.Uint64()-started.Uint64())/float64(len(lat)), "goroutines/op")
	}
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

// BenchmarkDeparturesCache runs the Departures query (first=20) on one store through two servers,
// one without the response cache (uncached) and one with it (cached: every request after the
// first is answered from memory, admitted and charged as any call), and through a bare net/http
// handler that writes the cached answer's bytes with its Content-Type (bare). Rounds send one
// request to each in an order that turns, in-process (handler.ServeHTTP), then over loopback HTTP
// with a keep-alive client (loopback=…), and report the median latencies and the throughput
// ratios of the medians (cached/bare, uncached/bare, cached/uncached). Compare the medians of
// several runs (-count).
func BenchmarkDeparturesCache(b *testing.B) {
	server.TuneRuntime(os.Getenv) // as flightgraph serve does
	storetest.ForEachDialect(b, func(b *testing.B, dialect string) {
		db := storetest.SeededWindow(b, dialect, os.Getenv, dataset.DaysBack, dataset.DaysAhead)
		cfg := testConfig(db, io.Discard)
		cfg.SnapshotTTL = store.DefaultSnapshotTTL               // as flightgraph serve does
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil)) // at INFO, as serve logs: a served call's line is DEBUG
		uncached, demo := startServer(b, cfg)
		(&testServer{db: db, srv: uncached, demo: demo}).raiseLimits(b)
		cfg.Server.Registry = prometheus.NewRegistry()
		cfg.Config.ResponseCacheBytes = 64 << 20 // serve's default
		cached := cfg.build()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cached.Live.Hub.Start(ctx)
		for !cached.Live.Hub.Settled() {
			time.Sleep(time.Millisecond)
		}
		body, _ := json.Marshal(map[string]any{"query": departures, "variables": departuresVars(20)})
		newRequest := func(base string) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("api-key", demo.APIKey)
			return req
		}
		var answer []byte
		var contentType string
		for range 20 { // every cache filled, the answer kept
			uncached.ServeHTTP(httptest.NewRecorder(), newRequest(""))
			rec := httptest.NewRecorder()
			cached.ServeHTTP(rec, newRequest(""))
			answer, contentType = rec.Body.Bytes(), rec.Header().Get("Content-Type")
		}
		bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", contentType)
			w.Write(answer)
		})
		handlers := map[string]http.Handler{"uncached": uncached, "cached": cached, "bare": bare}
		variants := []string{"uncached", "cached", "bare"}
		report := func(b *testing.B, lat map[string][]time.Duration) {
			p50 := map[string]float64{}
			for _, v := range variants {
				slices.Sort(lat[v])
				p50[v] = float64(lat[v][len(lat[v])/2].Nanoseconds()) / 1e3
				b.ReportMetric(p50[v], v+"-p50-µs")
			}
			// Throughput of one client is the inverse of its latency: the ratios of the medians.
			b.ReportMetric(p50["bare"]/p50["cached"], "cached/bare")
			b.ReportMetric(p50["bare"]/p50["uncached"], "uncached/bare")
			b.ReportMetric(p50["uncached"]/p50["cached"], "cached/uncached")
		}
		b.Run("in-process", func(b *testing.B) {
			lat := map[string][]time.Duration{}
			round := 0
			for b.Loop() {
				for i := range variants {
					v := variants[(round+i)%len(variants)]
					rec := httptest.NewRecorder()
					req := newRequest("")
					start := time.Now()
					handlers[v].ServeHTTP(rec, req)
					lat[v] = append(lat[v], time.Since(start))
					if rec.Code != http.StatusOK || (v == "cached" && rec.Header().Get("Age") == "") {
						b.Fatalf("%s: status %d, Age %q: %.300s", v, rec.Code, rec.Header().Get("Age"), rec.Body.String())
					}
				}
				round++
			}
			report(b, lat)
		})
		b.Run("loopback", func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
			bases := map[string]string{}
			for _, v := range variants {
				srv := httptest.NewServer(handlers[v])
				defer srv.Close()
				bases[v] = srv.URL
			}
			lat := map[string][]time.Duration{}
			round := 0
			for b.Loop() {
				for i := range variants {
					v := variants[(round+i)%len(variants)]
					start := time.Now()
					resp, err := client.Do(newRequest(bases[v]))
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					lat[v] = append(lat[v], time.Since(start))
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("%s: status %d", v, resp.StatusCode)
					}
				}
				round++
			}
			report(b, lat)
		})
	})
}
