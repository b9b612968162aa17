package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/flightgraph/flightgraph/bench"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// The variables that shape BenchmarkWorkloads; the README's "Performance" section lists them.
const (
	envRounds    = "FLIGHTGRAPH_BENCH_ROUNDS"    // rounds (full 5, smoke 2)
	envDuration  = "FLIGHTGRAPH_BENCH_DURATION"  // each load's length (full 2s, smoke 100ms)
	envClients   = "FLIGHTGRAPH_BENCH_CLIENTS"   // concurrent clients of a cheap workload (full 32, smoke 8)
	envBase      = "FLIGHTGRAPH_BENCH_BASE"      // a binary to compare with, in the same rounds
	envBackends  = "FLIGHTGRAPH_BENCH_BACKENDS"  // sqlite,postgres (both by default)
	envWorkloads = "FLIGHTGRAPH_BENCH_WORKLOADS" // a regexp of the workloads to run
	envBars      = "FLIGHTGRAPH_BENCH_BARS"      // "fail": a bar not met fails the benchmark
	// envPostGraphile is test/postgraphile (absolute, or relative to the repository) with its
	// packages installed (npm ci): the PostgreSQL backend then also runs PostGraphile over the
	// same database, for the Departures comparison.
	envPostGraphile = "FLIGHTGRAPH_BENCH_POSTGRAPHILE"
)

// workloadConfig is a run's shape: the smoke mode's (-short) or the full one's, each figure
// overridden by its variable.
type workloadConfig struct {
	rounds   int
	duration time.Duration
	clients  int
	// heavy is how many clients send a heavy workload (inspiration, all deals): the server's
	// heavy-work slots, which it is started with, so that none is refused for want of one.
	heavy    int
	base     string
	backends []string
	only     *regexp.Regexp
	failBars bool
	// postgraphile is envPostGraphile's folder, or "".
	postgraphile string
}

func loadWorkloadConfig(b *testing.B) workloadConfig {
	c := workloadConfig{rounds: 5, duration: 2 * time.Second, clients: 32, heavy: max(1, runtime.NumCPU()/2),
		backends: []string{"sqlite", "postgres"}, base: os.Getenv(envBase), failBars: os.Getenv(envBars) == "fail",
		postgraphile: os.Getenv(envPostGraphile)}
	if testing.Short() {
		c.rounds, c.duration, c.clients = 2, 100*time.Millisecond, 8
	}
	if v := os.Getenv(envRounds); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a number of rounds, 1 or more", envRounds, v)
		}
		c.rounds = n
	}
	if v := os.Getenv(envDuration); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("%s=%q: want a positive duration", envDuration, v)
		}
		c.duration = d
	}
	if v := os.Getenv(envClients); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 256 {
			b.Fatalf("%s=%q: want 1 to 256 clients", envClients, v)
		}
		c.clients = n
	}
	if v := os.Getenv(envBackends); v != "" {
		c.backends = strings.Split(v, ",")
		for _, be := range c.backends {
			if be != "sqlite" && be != "postgres" {
				b.Fatalf("%s=%q: want sqlite, postgres or both", envBackends, v)
			}
		}
	}
	if v := os.Getenv(envWorkloads); v != "" {
		re, err := regexp.Compile(v)
		if err != nil {
			b.Fatalf("%s: %v", envWorkloads, err)
		}
		c.only = re
	}
	if c.base != "" {
		if _, err := os.Stat(c.base); err != nil {
			b.Fatalf("%s: %v", envBase, err)
		}
	}
	switch {
	case c.postgraphile == "":
		b.Logf("%s is not set: no PostGraphile in this run (README, \"Performance\")", envPostGraphile)
	case !filepath.IsAbs(c.postgraphile):
		// go test runs in bench/: a relative path is the repository's, as the README writes it.
		c.postgraphile = filepath.Join("..", c.postgraphile)
	}
	return c
}

// workload is one call a cell repeats under load.
type workload struct {
	name    string
	clients int
	// reqs are the calls the clients send, each client in turn (bench.Closed): one, or one per
	// key where one key's plan would bound the load. The first one's answer is the bare one's.
	reqs []bench.Request
	// pace, when not 0, sends the calls at this rate (bench.Paced) rather than in a closed loop:
	// for the token endpoint, whose budgets refuse a key past 10 grants a second
	// (access.DefaultUncharged). Its cell's ratio to bare is then of the p50s (bare ÷ workload).
	pace float64
}

// cell is a workload on one server (a backend and a binary), with the bare server that serves its
// captured answer, and what each round measured of both.
type cell struct {
	backend, binary string
	workload
	bare        []bench.Request
	size        int // bytes of the answer the bare server serves (the load asks for no compression)
	real, floor []bench.Result
}

// ratios are the per-round throughput ratios of the cell to its bare server; of a paced cell,
// the ratios of the bare server's p50 to the cell's.
func (c *cell) ratios() []float64 {
	r := make([]float64, len(c.real))
	for i := range c.real {
		if c.pace > 0 {
			r[i] = float64(c.floor[i].Latency.Quantile(.5)) / float64(c.real[i].Latency.Quantile(.5))
		} else {
			r[i] = c.real[i].PerSecond() / c.floor[i].PerSecond()
		}
	}
	return r
}

// load runs r as the cell's loads run.
func (c *cell) load(client *http.Client, d time.Duration, rs []bench.Request) bench.Result {
	if c.pace > 0 {
		return bench.Paced(client, c.pace, d, rs[0], http.StatusOK)
	}
	return bench.Closed(client, c.clients, d, http.StatusOK, rs...)
}

func (c *cell) perSecond() []float64 {
	return mapResults(c.real, func(r bench.Result) float64 { return r.PerSecond() })
}

// speed is the per-round figure two binaries' cells are compared by, the higher the better: the
// throughput, or of a paced cell (whose throughput is its pace), calls a second at its p50.
func (c *cell) speed() []float64 {
	if c.pace > 0 {
		return mapResults(c.real, func(r bench.Result) float64 { return 1 / r.Latency.Quantile(.5).Seconds() })
	}
	return c.perSecond()
}

func (c *cell) quantile(q float64) []float64 {
	return mapResults(c.real, func(r bench.Result) float64 { return ms(r.Latency.Quantile(q)) })
}

// bareQuantile is quantile of the cell's bare server.
func (c *cell) bareQuantile(q float64) []float64 {
	return mapResults(c.floor, func(r bench.Result) float64 { return ms(r.Latency.Quantile(q)) })
}

func mapResults(rs []bench.Result, f func(bench.Result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

// spread is a median and the range of per-round figures.
type spread struct{ median, lo, hi float64 }

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{m, s[0], s[len(s)-1]}
}

func (s spread) String() string {
	return fmt.Sprintf("%s [%s–%s]", figure(s.median), figure(s.lo), figure(s.hi))
}

// figure writes a figure with three significant digits.
func figure(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

// divide is a[i] / b[i], round by round.
func divide(a, b []float64) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for i := range out {
		out[i] = a[i] / b[i]
	}
	return out
}

// BenchmarkWorkloads is issue 22's harness: the built binary on the embedded store (in-process
// limiter) and on PostgreSQL + Redis (a second replica of the same database with the in-process
// limiter for ping), with on each store one more server with the response cache off for the
// uncached rows, each workload under a closed-loop load of our own (bench.Closed), beside a
// bare net/http server serving the workload's captured answer (bench.Bare); with
// FLIGHTGRAPH_BENCH_POSTGRAPHILE, PostGraphile answering the board over the PostgreSQL database. The rounds are
// interleaved (round k: workload A, bare A, workload B, bare B, …), and the table gives the
// medians and ranges of the per-round figures; with FLIGHTGRAPH_BENCH_BASE, a second binary's
// cells sit beside the current build's in the same rounds (alternating which goes first).
//
//	go test ./bench -run '^$' -bench Workloads -benchtime 1x -short   # smoke, about a minute
//	go test ./bench -run '^$' -bench Workloads -benchtime 1x -timeout 60m
func BenchmarkWorkloads(b *testing.B) {
	cfg := loadWorkloadConfig(b)
	if slices.Contains(cfg.backends, "postgres") && os.Getenv("CI") != "true" {
		for _, env := range []string{storetest.EnvDatabaseURL, storetest.EnvRedisURL} {
			if os.Getenv(env) == "" {
				b.Logf("%s is not set: no PostgreSQL + Redis backend in this run (CI runs it)", env)
				cfg.backends = slices.DeleteFunc(cfg.backends, func(be string) bool { return be == "postgres" })
			}
		}
	}
	for b.Loop() {
		runWorkloads(b, cfg)
	}
}

func runWorkloads(b *testing.B, cfg workloadConfig) {
	loadBefore := bench.LoadAverage()
	binaries := [][2]string{{"current", bench.Binary(b)}}
	if cfg.base != "" {
		binaries = append(binaries, [2]string{"base", cfg.base})
	}
	client := bench.LoadClient("127.0.0.2", time.Minute)
	var cells []*cell
	for _, backend := range cfg.backends {
		// The binaries' cells of a workload sit together, so that they are measured next to
		// each other.
		var per [][]*cell
		for i, bin := range binaries {
			var cs []*cell
			for _, w := range serversFor(b, cfg, backend, bin[1], i == 0) {
				if cfg.only == nil || cfg.only.MatchString(w.name) {
					cs = append(cs, prepare(b, client, backend, bin[0], w))
				}
			}
			per = append(per, cs)
		}
		for i := range per[0] {
			for _, cs := range per {
				if i < len(cs) { // PostGraphile's cell is the current binary's only
					cells = append(cells, cs[i])
				}
			}
		}
	}
	b.Logf("%d cells × %d rounds × 2 loads of %v, %d clients (heavy: %d); load average %s", len(cells), cfg.rounds, cfg.duration, cfg.clients, cfg.heavy, loadBefore)
	for k := range cfg.rounds {
		for i := 0; i < len(cells); {
			j := i + 1
			for j < len(cells) && cells[j].backend == cells[i].backend && cells[j].name == cells[i].name {
				j++
			}
			group := slices.Clone(cells[i:j])
			if k%2 == 1 {
				slices.Reverse(group) // the base first in odd rounds
			}
			for _, c := range group {
				c.real = append(c.real, c.load(client, cfg.duration, c.reqs))
				c.floor = append(c.floor, c.load(client, cfg.duration, c.bare))
			}
			i = j
		}
	}
	report(b, cfg, cells, loadBefore)
}

// serversFor starts the servers of a backend with bin, raises the demo key's limits and returns
// the workloads on them; on PostgreSQL with cfg.postgraphile, and first (the current binary's
// servers), PostGraphile's board over the same database last.
func serversFor(b *testing.B, cfg workloadConfig, backend, bin string, first bool) []workload {
	heavy := "--heavy-concurrency=" + strconv.Itoa(cfg.heavy)
	switch backend {
	case "sqlite":
		s := bench.StartBinary(b, bin, nil, heavy)
		keys := spreadKeysOf(b, s)
		// The servers without a cache have stores of their own: keys and tokens of their own,
		// in the same places of the requests.
		started := func(args ...string) *bench.Server {
			return bench.StartBinary(b, bin, nil, append([]string{heavy}, args...)...)
		}
		ws := workloadsOn(b, cfg, s, keys, "ping, in-process limiter")
		vs := cacheVariants(b, bin)
		for i := range vs {
			vs[i].srv = started(vs[i].args...)
			vs[i].swap = swapKeys(keys, spreadKeysOf(b, vs[i].srv))
		}
		return withVariants(ws, s, vs)
	default:
		storetest.DatabaseURL(b)
		storetest.RedisURL(b)
		dsn := storetest.DSN(b, store.Postgres, os.Getenv)
		bench.SeedPostgres(b, bin, dsn)
		dir := b.TempDir()
		s := bench.StartPostgres(b, bin, dsn, dir, nil, heavy, "--redis-url", os.Getenv(storetest.EnvRedisURL))
		keys := spreadKeysOf(b, s)
		// A replica of the same database with the in-process limiter: the ping it answers is the
		// Redis limiter's baseline, on the same store and keys.
		memory := bench.StartPostgres(b, bin, dsn, dir, nil, heavy)
		started := func(args ...string) *bench.Server {
			return bench.StartPostgres(b, bin, dsn, dir, nil, append([]string{heavy, "--redis-url", os.Getenv(storetest.EnvRedisURL)}, args...)...)
		}
		vs := cacheVariants(b, bin)
		for i := range vs {
			vs[i].srv = started(vs[i].args...)
		}
		ws := withVariants(workloadsOn(b, cfg, s, keys, "ping, Redis limiter"), s, vs)
		ping := ws[len(ws)-1]
		ping.name, ping.reqs = "ping, in-process limiter", slices.Clone(ping.reqs)
		for i, r := range ping.reqs {
			r.URL = memory.URL + strings.TrimPrefix(r.URL, s.URL)
			ping.reqs[i] = r
		}
		ws = append(ws, ping)
		if cfg.postgraphile != "" && first {
			board := postGraphileBoard(b, bench.StartPostGraphile(b, cfg.postgraphile, dsn), 20)
			ws = append(ws, workload{wPostGraphile20, cfg.clients, []bench.Request{board}, 0})
		}
		return ws
	}
}

// The flags of the caches (README, "The response cache" and "The flight cache"); the servers of
// the other workloads run with their defaults, both on.
const (
	noResponseCache = "--response-cache-mb=0"
	flightCacheFlag = "--flight-cache-mb"
)

// cacheVariants are the rows of the servers of bin with fewer caches, their servers not yet
// started: every cacheable workload with no cache (", uncached"), and a flight by id with the
// flight cache alone (", flight cache only"), where bin has one (a base binary may predate it).
func cacheVariants(b *testing.B, bin string) []variant {
	if !knowsFlag(b, bin, flightCacheFlag) {
		return []variant{{suffix: uncached, of: cacheable, args: []string{noResponseCache}}}
	}
	return []variant{
		{suffix: uncached, of: cacheable, args: []string{noResponseCache, flightCacheFlag + "=0"}},
		{suffix: flightCached, of: []string{wByID}, args: []string{noResponseCache}},
	}
}

// knowsFlag reports whether bin's usage names flag.
func knowsFlag(b *testing.B, bin, flag string) bool {
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	if !bytes.Contains(out, []byte("usage")) {
		b.Fatalf("%s -h: %.300s", bin, out)
	}
	return bytes.Contains(out, []byte(strings.TrimPrefix(flag, "-")+" "))
}

// cacheable are the workloads measured both with the caches (", cached") and without any
// (", uncached"), for the bars of each.
var cacheable = []string{"Departures first:5", wDepartures20, "Departures first:100", wByID, wByIDHeavy, wInspiration, wAllDeals}

// variant is a row of workloads of another server than the default one: the workloads named in
// of, their calls sent to srv (started with args) with the credentials swap gives (srv a server
// of a store of its own) and named with suffix.
type variant struct {
	suffix string
	of     []string
	args   []string
	srv    *bench.Server
	swap   map[string]string
}

// swapKeys maps each credential of keys to the one in the same place of other's.
func swapKeys(keys, other spreadKeys) map[string]string {
	swap := map[string]string{}
	for api, ks := range keys {
		for i, k := range ks {
			swap[k] = other[api][i]
		}
	}
	return swap
}

// withVariants renames each cacheable workload of ws, on s, to its cached row and puts beside it
// its row of each variant whose of names it: the same calls to the variant's server, with the
// credentials of s (an api-key, a bearer token: their values as sent) replaced by the variant's.
func withVariants(ws []workload, s *bench.Server, vs []variant) []workload {
	var out []workload
	for _, w := range ws {
		if !slices.Contains(cacheable, w.name) {
			out = append(out, w)
			continue
		}
		for _, v := range vs {
			if !slices.Contains(v.of, w.name) {
				continue
			}
			u := w
			u.name, u.reqs = w.name+v.suffix, slices.Clone(w.reqs)
			for i, r := range u.reqs {
				r.URL = v.srv.URL + strings.TrimPrefix(r.URL, s.URL)
				// The requests' header names are as sent ("api-key"), not canonical.
				for _, name := range []string{"api-key", "Authorization"} {
					if val := r.Header[name]; len(val) == 1 && v.swap[val[0]] != "" {
						r.Header = r.Header.Clone()
						r.Header[name] = []string{v.swap[val[0]]}
					}
				}
				u.reqs[i] = r
			}
			out = append(out, u)
		}
		w.name += cached
		out = append(out, w)
	}
	return out
}

// spreadKeys are the credentials that the calls of a workload are spread over, by API
// (flightstatus for ping, a flight by id and the Departures board, inspire for inspiration: api
// keys; offers for all deals and the offers search: bearer tokens, as the Authorization header
// carries them): the demo key's first, then three more.
type spreadKeys map[string][]string

// spreadKeysOf makes, for each API of spreadKeys, three more keys of the demo developer's (and
// for offers their tokens), and raises their limits and the demo key's: ping, a flight by id and
// a kept board run faster than the 10,000 calls a second one key may be granted, as do a kept
// inspiration and a kept all deals, which count 5 calls; and a load that meets a limit measures
// refusals.
func spreadKeysOf(b *testing.B, s *bench.Server) spreadKeys {
	creds := s.Credentials(b)
	out := spreadKeys{}
	var more []string
	for _, api := range []string{"flightstatus", "inspire", "offers"} {
		keys, secrets := approvedClients(b, s, api, 3)
		more = append(more, keys...)
		if api != "offers" {
			out[api] = append([]string{creds["apiKey"]}, keys...)
			continue
		}
		out[api] = []string{bearerOf(b, s, creds["clientId"], creds["clientSecret"])}
		for i, k := range keys {
			out[api] = append(out[api], bearerOf(b, s, k, secrets[i]))
		}
	}
	s.RaiseRates(b, more...)
	return out
}

// byIDFlights are the flights a flight by id asks for in turn.
const byIDFlights = 50

// Names of the workloads the bars read.
const (
	cached   = ", cached"
	uncached = ", uncached"
	// flightCached is a row of the server with the flight cache alone (the response cache off).
	flightCached  = ", flight cache only"
	wDepartures20 = "Departures first:20"
	wByID         = "REST flight by id"
	wByIDHeavy    = "REST flight by id, heavy clients"
	wInspiration  = "inspiration BCN, month"
	wAllDeals     = "all deals BCN, week"
	wPingRedis    = "ping, Redis limiter"
	wPingMemory   = "ping, in-process limiter"
	wToken        = "token, client credentials, 8/s"
	// wPostGraphile20 is PostGraphile answering the Departures board over the same database.
	wPostGraphile20 = "PostGraphile, Departures first:20"
)

// tokenRequest is the token endpoint's call for a client-credentials token of a key of s's.
func tokenRequest(s *bench.Server, clientID, secret string) bench.Request {
	form := []byte(url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}}.Encode())
	return bench.Request{Method: http.MethodPost, URL: s.URL + "/oauthcust/oauth/token", Body: form,
		Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}}
}

// bearerOf is the Authorization of a new token of a key of s's.
func bearerOf(b *testing.B, s *bench.Server, clientID, secret string) string {
	status, _, body, err := tokenRequest(s, clientID, secret).Do(context.Background(), bench.LoadClient("127.0.0.3", time.Minute))
	var token struct {
		AccessToken string `json:"access_token"`
	}
	if err != nil || status != http.StatusOK || json.Unmarshal(body, &token) != nil || token.AccessToken == "" {
		b.Fatalf("token: %v %d %.300s", err, status, body)
	}
	return "Bearer " + token.AccessToken
}

// workloadsOn are the workloads on s, ping last (named ping); the offers API's with bearer tokens
// (keys["offers"]).
func workloadsOn(b *testing.B, cfg workloadConfig, s *bench.Server, keys spreadKeys, ping string) []workload {
	creds := s.Credentials(b)
	key := http.Header{"api-key": {creds["apiKey"]}}
	c := bench.LoadClient("127.0.0.3", time.Minute)
	now := time.Now().UTC()
	today := now.Format("2006-01-02")

	// Today's flights from AMS, by the ids the list gives: a flight by id is each of them in turn,
	// as the clients of a status page poll theirs.
	status, _, body, err := bench.Request{Method: http.MethodGet, Header: key,
		URL: s.URL + "/opendata/flightstatus?startRange=" + today + "T00:00:00Z&endRange=" + today + "T23:59:00Z&origin=AMS&pageSize=" + strconv.Itoa(byIDFlights)}.Do(context.Background(), c)
	var list struct{ OperationalFlights []struct{ ID string } }
	if err != nil || status != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.OperationalFlights) == 0 {
		b.Fatalf("flight list: %v %d %.300s", err, status, body)
	}
	// The token endpoint's call, and a bearer token for the offers API (OAuth).
	tokenReq := tokenRequest(s, creds["clientId"], creds["clientSecret"])
	oauth := http.Header{"Authorization": {keys["offers"][0]}, "Content-Type": {"application/json"}}

	// The board is spread over the flight status keys as ping is: a kept board (first:5) runs
	// past the 10,000 calls a second one key may be granted.
	graphql := func(first int) []bench.Request {
		body, _ := json.Marshal(map[string]any{"query": departuresQuery, "variables": map[string]any{"date": today, "first": first}})
		var out []bench.Request
		for _, k := range keys["flightstatus"] {
			out = append(out, bench.Request{Method: http.MethodPost, URL: s.URL + "/graphql", Body: body,
				Header: http.Header{"api-key": {k}, "Content-Type": {"application/json"}}})
		}
		return out
	}
	post := func(path string, v any) bench.Request {
		body, _ := json.Marshal(v)
		return bench.Request{Method: http.MethodPost, URL: s.URL + path, Body: body, Header: oauth}
	}
	airport := func(code string) map[string]any { return map[string]any{"airport": map[string]any{"code": code}} }
	tomorrow := now.AddDate(0, 0, 1).Format("2006-01-02")
	week := tomorrow + "/" + now.AddDate(0, 0, 7).Format("2006-01-02")
	nextMonth := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
	// Ping, a flight by id and inspiration are spread over keys (spreadKeysOf): the GET of path
	// once with each key of api; all deals over the offers API's tokens.
	spread := func(api, path string) []bench.Request {
		var out []bench.Request
		for _, k := range keys[api] {
			out = append(out, bench.Request{Method: http.MethodGet, URL: s.URL + path, Header: http.Header{"api-key": {k}}})
		}
		return out
	}
	pings := spread("flightstatus", "/opendata/flightstatus/v1/ping")
	var byID []bench.Request
	for i, f := range list.OperationalFlights {
		k := keys["flightstatus"][i%len(keys["flightstatus"])]
		byID = append(byID, bench.Request{Method: http.MethodGet, URL: s.URL + "/opendata/flightstatus/" + url.PathEscape(f.ID), Header: http.Header{"api-key": {k}}})
	}
	inspiration := spread("inspire", "/opendata/inspire/v2/destinations/inspiration?month="+nextMonth+"&origin=BCN&limit=200")
	// All deals, the POST once with each of the offers API's tokens.
	deals := post("/opendata/offers/v1/best-fare-offers/all-deals", map[string]any{"origin": airport("BCN"), "dateInterval": week, "limit": 200})
	var allDeals []bench.Request
	for _, bearer := range keys["offers"] {
		r := deals
		r.Header = http.Header{"Authorization": {bearer}, "Content-Type": {"application/json"}}
		allDeals = append(allDeals, r)
	}
	n, h := cfg.clients, cfg.heavy
	one := func(r bench.Request) []bench.Request { return []bench.Request{r} }
	return []workload{
		{"Departures first:5", n, graphql(5), 0},
		{wDepartures20, n, graphql(20), 0},
		{"Departures first:100", n, graphql(100), 0},
		{wByID, n, byID, 0},
		{wByIDHeavy, h, byID, 0},
		{"offers search AMS-NYC", n, one(post("/opendata/offers/v1/available-offers", map[string]any{
			"commercialCabins": []string{"ALL"},
			"passengers":       []map[string]any{{"id": 1, "type": "ADT"}, {"id": 2, "type": "ADT"}, {"id": 3, "type": "CHD"}},
			"requestedConnections": []map[string]any{{"departureDate": tomorrow, "origin": airport("AMS"),
				"destination": map[string]any{"city": map[string]any{"code": "NYC"}}}}})), 0},
		{wInspiration, h, inspiration, 0},
		{wAllDeals, h, allDeals, 0},
		{wToken, 0, one(tokenReq), 8},
		{ping, n, pings, 0},
	}
}

// departuresQuery is the Departures board of the issues' figures: a station's flights of a day
// with their legs, places, aircraft, cabins and amenities (server's departures query).
const departuresQuery = `query Departures($date: Date!, $first: Int!) {
  flights(origin: "AMS", date: $date, first: $first) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node {
      id
      flightNumber
      status
      legs {
        origin { code name city { code name country { code name } } }
        destination { code name timeZone }
        departure { scheduled estimated terminal gate }
        arrival { scheduled estimated }
        aircraft { typeCode typeName configuration
          cabins { cabinClass seats amenities { category name description } } }
      }
    } }
  }
}`

// postGraphileBoard is the Departures board's call to PostGraphile (StartPostGraphile): the same
// day's first departures from AMS by departure time, each with its legs, their places (the origin
// with its city and country), times, terminal and gate, aircraft, cabins and amenities, as
// departuresQuery asks flightgraph, in PostGraphile's names for flightgraph's tables. PostGraphile
// answers the columns as stored (a delay in minutes beside the scheduled time, where flightgraph
// answers the estimated time and a status it works out), so its answer is of the same size and
// shape, not the same bytes: 58 KB for 20 flights, against flightgraph's 54 KB (the table's KB).
// The call is made once here: its answer must hold first flights and no error (PostGraphile
// answers a GraphQL error with 200, which the load would count as answered).
func postGraphileBoard(b *testing.B, s *bench.Server, first int) bench.Request {
	body, _ := json.Marshal(map[string]any{"query": postGraphileQuery, "variables": map[string]any{
		"date": time.Now().UTC().Format("2006-01-02"), "first": first}})
	r := bench.Request{Method: http.MethodPost, URL: s.URL + "/graphql", Body: body,
		Header: http.Header{"Content-Type": {"application/json"}}}
	status, _, answer, err := r.Do(context.Background(), bench.LoadClient("127.0.0.3", time.Minute))
	var got struct {
		Errors []json.RawMessage
		Data   struct {
			AllFlights struct{ Edges []json.RawMessage }
		}
	}
	if err != nil || status != http.StatusOK || json.Unmarshal(answer, &got) != nil || len(got.Errors) > 0 || len(got.Data.AllFlights.Edges) != first {
		b.Fatalf("PostGraphile's board: %v %d %.500s", err, status, answer)
	}
	return r
}

const postGraphileQuery = `query Departures($date: String!, $first: Int!) {
  allFlights(condition: {origin: "AMS", scheduleDate: $date}, orderBy: [DEPARTURE_UTC_ASC, PRIMARY_KEY_ASC], first: $first) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node {
      id
      carrier
      number
      estDepartureUtc
      flightLegsByFlightId(orderBy: [PRIMARY_KEY_ASC]) { nodes {
        originAirport { code name cityByCityCode { code name countryByCountryCode { code name } } }
        destinationAirport { code name timeZone }
        scheduledDeparture departureDelay departureTerminal departureGate
        scheduledArrival arrivalDelay
        aircraft { typeCode aircraftTypeByTypeCode { name } code
          cabinsByConfiguration(orderBy: [PRIMARY_KEY_ASC]) { nodes { class seats
            cabinProductByProduct { amenitiesByProduct(orderBy: [POSITION_ASC]) { nodes { category name description } } } } } }
      } }
    } }
  }
}`

// prepare captures w's answer once (it must be 200), warms it with a few calls, and makes the
// bare server that serves the captured answer.
func prepare(b *testing.B, c *http.Client, backend, binary string, w workload) *cell {
	var (
		bareURL string
		size    int
	)
	for i, r := range w.reqs {
		status, h, body, err := r.Do(context.Background(), c)
		if err != nil || status != http.StatusOK {
			b.Fatalf("%s on %s (%s): %v %d %.300s", w.name, backend, binary, err, status, body)
		}
		if i == 0 {
			bareURL, size = bench.Bare(b, status, h, body), len(body)
		}
		for range 3 {
			r.Do(context.Background(), c)
		}
	}
	bare := make([]bench.Request, len(w.reqs))
	for i, r := range w.reqs {
		r.URL = bareURL
		bare[i] = r
	}
	return &cell{backend: backend, binary: binary, workload: w, bare: bare, size: size}
}

// report prints the table and the bars, and reports each cell's figures as metrics.
func report(b *testing.B, cfg workloadConfig, cells []*cell, loadBefore string) {
	out := os.Stdout
	fmt.Fprintf(out, "\nflightgraph workloads: %d rounds, loads of %v, %d clients (heavy workloads %d); %d CPUs; load average %s before, %s after\n\n",
		cfg.rounds, cfg.duration, cfg.clients, cfg.heavy, runtime.NumCPU(), loadBefore, bench.LoadAverage())
	find := func(backend, binary, name string) *cell {
		for _, c := range cells {
			if c.backend == backend && c.binary == binary && c.name == name {
				return c
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 1, ' ', tabwriter.Debug)
	head := "backend\tbinary\tworkload\tKB\tclients\treq/s\tp50 ms\tp99 ms\tbare req/s\tvs bare, median [range]\tfailed"
	if cfg.base != "" {
		head += "\tvs base, median [range]"
	}
	fmt.Fprintln(tw, head+"\t")
	for _, c := range cells {
		failed := 0
		for _, r := range c.real {
			failed += r.Failed
		}
		ratio := spreadOf(c.ratios())
		clients := strconv.Itoa(c.clients)
		if c.pace > 0 {
			clients = "paced" // the ratio is of the p50s
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d", c.backend, c.binary, c.name, figure(float64(c.size)/1000), clients,
			figure(spreadOf(c.perSecond()).median), figure(spreadOf(c.quantile(.5)).median), figure(spreadOf(c.quantile(.99)).median),
			figure(spreadOf(mapResults(c.floor, func(r bench.Result) float64 { return r.PerSecond() })).median), ratio, failed)
		if cfg.base != "" {
			vs := "–"
			if base := find(c.backend, "base", c.name); c.binary == "current" && base != nil {
				vs = spreadOf(divide(c.speed(), base.speed())).String()
			}
			line += "\t" + vs
		}
		fmt.Fprintln(tw, line+"\t")
		metric := strings.NewReplacer(" ", "-", ",", "", ":", "").Replace(c.backend + "/" + c.binary + "/" + c.name)
		b.ReportMetric(ratio.median, metric+"-vs-bare")
		b.ReportMetric(spreadOf(c.quantile(.5)).median, metric+"-p50-ms")
		if failed > 0 {
			var first string
			for _, r := range c.real {
				if r.Failure != "" {
					first = r.Failure
					break
				}
			}
			b.Logf("%s on %s (%s): %d failed, the first: %s", c.name, c.backend, c.binary, failed, first)
		}
	}
	tw.Flush()

	// The bars of issue 22, per backend and binary, from per-round figures.
	type bar struct {
		name   string
		v      []float64
		limit  float64
		atMost bool
		info   bool // a figure beside the bars, no bar of its own
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "backend\tbinary\tbar\tmedian [range]\twant\tmet\t")
	var missed []string
	for _, backend := range cfg.backends {
		for _, binary := range []string{"current", "base"} {
			cellOf := func(name string) *cell { return find(backend, binary, name) }
			var bars []bar
			for _, kept := range []string{cached, uncached} {
				if id := cellOf(wByIDHeavy + kept); id != nil {
					for _, heavy := range []string{wInspiration, wAllDeals} {
						if c := cellOf(heavy + kept); c != nil {
							bars = append(bars, bar{heavy + kept + " p50 ÷ flight by id p50 (same clients)", divide(c.quantile(.5), id.quantile(.5)), 10, true, false})
							if kept == cached {
								// What serving the answer's bytes costs, whatever makes them: the
								// floor of the bar above (an answer of 190 deals is ~580 KB).
								bars = append(bars, bar{heavy + ", their bare servers' p50s ÷", divide(c.bareQuantile(.5), id.bareQuantile(.5)), 0, true, true})
							}
						}
					}
				}
			}
			if c := cellOf(wDepartures20 + uncached); c != nil {
				bars = append(bars, bar{wDepartures20 + " ÷ bare, uncached", c.ratios(), 0.10, false, false})
			}
			if c := cellOf(wDepartures20 + cached); c != nil {
				bars = append(bars, bar{wDepartures20 + " ÷ bare, cached", c.ratios(), 0.5, false, false})
			}
			// PostGraphile's cell is the current binary's; a base binary's rows are measured
			// against the same one, in the same rounds.
			if pgl := find(backend, "current", wPostGraphile20); pgl != nil {
				for _, kept := range []string{uncached, cached} {
					if c := cellOf(wDepartures20 + kept); c != nil {
						bars = append(bars, bar{wDepartures20 + kept + " ÷ PostGraphile's, throughput", divide(c.perSecond(), pgl.perSecond()), 5, false, false})
					}
				}
			}
			if r, m := cellOf(wPingRedis), cellOf(wPingMemory); r != nil && m != nil {
				bars = append(bars, bar{"ping: Redis limiter ÷ in-process limiter", divide(r.perSecond(), m.perSecond()), 0.80, false, false})
			}
			// A flight by id's bar is read with the flight cache alone: every call admitted,
			// charged, its status made at the clock's now and rendered, the flight read from the
			// entity cache, not the store. Beside it, as figures: the read path without any cache
			// (the 0.22), and the server as it runs (the response cache keeps the answers).
			if c := cellOf(wByID + flightCached); c != nil {
				bars = append(bars, bar{wByID + " ÷ bare, flight cache only", c.ratios(), 0.5, false, false})
			}
			if c := cellOf(wByID + uncached); c != nil {
				bars = append(bars, bar{wByID + " ÷ bare, uncached (no cache)", c.ratios(), 0, false, true})
			}
			if c := cellOf(wByID + cached); c != nil {
				bars = append(bars, bar{wByID + " ÷ bare, cached (as served by default)", c.ratios(), 0, false, true})
			}
			for _, br := range bars {
				s := spreadOf(br.v)
				met, want := s.median >= br.limit, "≥ "+figure(br.limit)
				if br.atMost {
					met, want = s.median <= br.limit, "≤ "+figure(br.limit)
				}
				verdict := map[bool]string{true: "yes", false: "NO"}[met]
				if br.info {
					met, want, verdict = true, "–", "–"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", backend, binary, br.name, s, want, verdict)
				if !met && binary == "current" {
					missed = append(missed, fmt.Sprintf("%s on %s: %s, want %s", br.name, backend, s, want))
				}
			}
		}
	}
	tw.Flush()
	fmt.Fprintln(out)
	if len(missed) > 0 {
		b.Logf("bars not met: %s", strings.Join(missed, "; "))
		if cfg.failBars {
			b.Errorf("%d bars not met (%s=fail)", len(missed), envBars)
		}
	}
}

// TestSpread holds the table's medians and ranges to their definitions.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want spread
	}{
		{nil, spread{}},
		{[]float64{3}, spread{3, 3, 3}},
		{[]float64{0.5, 0.1, 0.3}, spread{0.3, 0.1, 0.5}},
		{[]float64{4, 1, 2, 3}, spread{2.5, 1, 4}},
	} {
		if got := spreadOf(c.in); got != c.want {
			t.Errorf("spreadOf(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
	if got := divide([]float64{2, 9}, []float64{4, 3}); !slices.Equal(got, []float64{0.5, 3}) {
		t.Errorf("divide: %v", got)
	}
}
