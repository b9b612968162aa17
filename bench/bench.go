// Package bench is the whole-server load harness: it builds the flightgraph binary, starts it on
// free loopback ports over a data folder of its own, and sends it bounded loads from one or more
// client addresses, so that the figures the issues set as bars come from the binary a user runs,
// measured the same way by anyone.
//
// Its benchmarks are not run by `go test ./...` (they run with -bench only): each is a load run of
// tens of seconds whose bars fail the benchmark when they do not hold, and whose figures it
// reports with b.ReportMetric.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/access"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error

	// templates are the data folders made by a first start of each binary: *template by path.
	templates sync.Map
)

// template is a data folder made by a binary's first start on the embedded store.
type template struct {
	once sync.Once
	dir  string
	err  error
}

// Binary builds ./cmd/flightgraph once per test process and returns its path.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "flightgraph-bench-bin")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "flightgraph")
		cmd := exec.Command("go", "build", "-o", binary, "github.com/flightgraph/flightgraph/cmd/flightgraph")
		cmd.Stderr = os.Stderr
		buildErr = cmd.Run()
	})
	if buildErr != nil {
		tb.Fatalf("build flightgraph: %v", buildErr)
	}
	return binary
}

// Server is a server process: flightgraph started by Start, or PostGraphile by StartPostGraphile.
type Server struct {
	URL        string // http://127.0.0.1:port
	MetricsURL string
	DataDir    string
	Cmd        *exec.Cmd
	// Log is what the process wrote, stdout and stderr together.
	Log *Buffer
	// name is what the messages call the process: flightgraph, PostGraphile.
	name string
	// exited is closed once the process has exited and been waited for.
	exited chan struct{}
}

// Buffer is an io.Writer safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Start runs the binary on the embedded store, on free loopback ports, with args added to its
// flags and env to its environment, and stops it when tb ends. Its data folder is a copy of one
// made by a first start per test process, so that only the first server pays for the data set.
func Start(tb testing.TB, env []string, args ...string) *Server {
	tb.Helper()
	return StartBinary(tb, Binary(tb), env, args...)
}

// StartBinary is Start with the binary at bin, e.g. one built from another commit to measure a
// change before and after in the same run; each binary's data folder comes from its own first
// start, so that each runs on the schema its migrations make.
func StartBinary(tb testing.TB, bin string, env []string, args ...string) *Server {
	tb.Helper()
	v, _ := templates.LoadOrStore(bin, &template{})
	t := v.(*template)
	t.once.Do(func() {
		t.dir, t.err = os.MkdirTemp("", "flightgraph-bench-data")
		if t.err != nil {
			return
		}
		var s *Server
		s, t.err = start(bin, filepath.Join(t.dir, "data"), nil, "--roll-every=0")
		if t.err == nil {
			t.err = s.Stop()
		}
	})
	if t.err != nil {
		tb.Fatalf("first start of %s: %v", bin, t.err)
	}
	dir := filepath.Join(tb.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(t.dir, "data"))); err != nil {
		tb.Fatal(err)
	}
	return launch(tb, bin, dir, env, args...)
}

// offerKey signs offer ids on PostgreSQL, where serve wants one: the same for every replica this
// process starts, as replicas share one.
var offerKey = func() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}()

// SeedPostgres makes the database at dsn (an empty one, e.g. storetest.DSN's) ready for
// StartPostgres as an operator does: bin migrate, then bin seed with the default window.
func SeedPostgres(tb testing.TB, bin, dsn string) {
	tb.Helper()
	for _, cmd := range []string{"migrate", "seed"} {
		c := exec.Command(bin, cmd)
		c.Env = append(os.Environ(), "FLIGHTGRAPH_DATABASE_URL="+dsn)
		if out, err := c.CombinedOutput(); err != nil {
			tb.Fatalf("flightgraph %s: %v\n%s", cmd, err, out)
		}
	}
}

// StartPostgres runs bin on the PostgreSQL database at dsn (see SeedPostgres) as Start does on
// the embedded store, with --demo; dir is the data folder, where the first replica with --demo
// writes the demo credentials: replicas of one database may share it.
func StartPostgres(tb testing.TB, bin, dsn, dir string, env []string, args ...string) *Server {
	tb.Helper()
	// Six servers of one database (a run with FLIGHTGRAPH_BENCH_BASE) at 20 connections each
	// would pass PostgreSQL's 100; 10 each, and the feeds' two, stay under it.
	env = append([]string{"FLIGHTGRAPH_DATABASE_URL=" + dsn, "FLIGHTGRAPH_OFFER_KEY=" + offerKey, "FLIGHTGRAPH_DB_MAX_CONNS=10"}, env...)
	return launch(tb, bin, dir, env, append([]string{"--demo"}, args...)...)
}

// launch starts bin over dir as Start does and stops it when tb ends.
func launch(tb testing.TB, bin, dir string, env []string, args ...string) *Server {
	tb.Helper()
	s, err := start(bin, dir, env, append([]string{"--roll-every=0"}, args...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Logf("stop: %v", err)
		}
		// The server logs at WARN: what it said is what went wrong, or the run's conditions.
		var said []string
		for line := range strings.Lines(s.Log.String()) {
			if strings.Contains(line, "level=") && len(said) < 20 {
				said = append(said, line)
			}
		}
		if len(said) > 0 {
			tb.Logf("%s %s logged (the first 20 lines at most):\n%s", filepath.Base(bin), strings.Join(args, " "), strings.Join(said, ""))
		}
	})
	return s
}

// start runs bin serve over dir. Its fare index is not warmed in the background: warming the
// hubs' months takes a core for tens of seconds from 10 s after the start, in the middle of the
// measurements, on every server of a run; a workload warms what it reads with its first calls.
func start(bin, dir string, env []string, args ...string) (*Server, error) {
	args = append([]string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--data-dir", dir,
		"--drain-period=0", "--log-level", "warn", "--warm-fares=false"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return run(cmd, "flightgraph", dir)
}

// run starts cmd, a server that prints "listening on http://…" on its standard output when it
// listens, and returns once it does.
func run(cmd *exec.Cmd, name, dir string) (*Server, error) {
	s := &Server{DataDir: dir, Cmd: cmd, Log: &Buffer{}, name: name, exited: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = s.Log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			s.Log.Write([]byte(line + "\n"))
			if m := regexp.MustCompile(`^metrics on (http://\S+)/metrics$`).FindStringSubmatch(line); m != nil {
				s.MetricsURL = m[1]
			}
			if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(line); m != nil && s.URL == "" {
				s.URL = m[1]
				close(listening)
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close(); close(s.exited) }()
	select {
	case <-listening:
		return s, nil
	case err := <-exited:
		return nil, fmt.Errorf("%s exited before listening: %v\n%s", name, err, s.Log)
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not listen in 5 minutes:\n%s", name, s.Log)
	}
}

// StartPostGraphile runs PostGraphile 5 over the flightgraph database at dsn (see SeedPostgres)
// from dir, a folder like test/postgraphile with its packages installed (npm ci there: PostGraphile
// and the Node 22 it needs), on a free loopback port, and stops it when tb ends. It answers
// GraphQL at URL + "/graphql".
func StartPostGraphile(tb testing.TB, dir, dsn string) *Server {
	tb.Helper()
	dir, err := filepath.Abs(dir) // the command's path is then not read relative to its Dir
	if err != nil {
		tb.Fatal(err)
	}
	node := filepath.Join(dir, "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		tb.Fatalf("PostGraphile: %v (run npm ci in %s)", err, dir)
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "PORT=0", "GRAPHILE_ENV=production")
	s, err := run(cmd, "PostGraphile", "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Logf("stop PostGraphile: %v", err)
		}
	})
	return s
}

// Stop ends the process with SIGINT and waits for it.
func (s *Server) Stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	s.Cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
		return nil
	case <-time.After(30 * time.Second):
		s.Cmd.Process.Kill()
		return fmt.Errorf("%s did not stop in 30 s", s.name)
	}
}

// CPU is the CPU time the server's process has used, user and system, from /proc.
func (s *Server) CPU(tb testing.TB) time.Duration {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.Cmd.Process.Pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The fields after the command's name (which may hold spaces) start after its ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}

// Credentials reads the demo credentials the first start wrote.
func (s *Server) Credentials(tb testing.TB) map[string]string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(s.DataDir, "demo-credentials.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// Metric is the sum of the server's metric samples whose line starts with prefix (a name, or a
// name and the start of its labels).
func (s *Server) Metric(tb testing.TB, prefix string) float64 {
	tb.Helper()
	resp, err := http.Get(s.MetricsURL + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, prefix) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

// Portal runs an operation on the portal's GraphQL API through c (http.DefaultClient when nil),
// with a session token when one is given, and decodes its data into out (unless nil). It waits
// and tries again while the portal's uncharged limits answer 429, and fails tb on any other error.
func (s *Server) Portal(tb testing.TB, c *http.Client, session, query string, vars map[string]any, out any) {
	tb.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	for try := 0; ; try++ {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/portal/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if session != "" {
			req.Header.Set("Authorization", "Bearer "+session)
		}
		resp, err := c.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests && try < 50 {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		var r struct {
			Data   json.RawMessage
			Errors []json.RawMessage
		}
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Errors) > 0 {
			tb.Fatalf("portal: %d %.300s", resp.StatusCode, raw)
		}
		if out != nil {
			if err := json.Unmarshal(r.Data, out); err != nil {
				tb.Fatal(err)
			}
		}
		return
	}
}

// ClientFrom returns an HTTP client whose connections come from the loopback address ip (any of
// 127.0.0.0/8 on Linux), so that a load can stand for several client addresses.
func ClientFrom(ip string, timeout time.Duration) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: timeout}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext:         d.DialContext,
		MaxIdleConnsPerHost: 64,
		MaxConnsPerHost:     64,
	}}
}

// Latencies collects durations from many goroutines.
type Latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *Latencies) Add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *Latencies) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.d)
}

// Quantile is the q-th quantile (0 ≤ q ≤ 1) of what was added, 0 when nothing was.
func (l *Latencies) Quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	s := slices.Clone(l.d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// Max is the longest duration added.
func (l *Latencies) Max() time.Duration { return l.Quantile(1) }

// Run calls fn from n goroutines until d has passed or ctx ends, and waits for them.
func Run(ctx context.Context, n int, d time.Duration, fn func(ctx context.Context, worker int)) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				fn(ctx, i)
			}
		})
	}
	wg.Wait()
}

// Cores is how many CPUs the server may use, for reporting its CPU use as a share of them.
func Cores() int { return runtime.NumCPU() }

// RaiseRates gives the approved subscriptions of the demo key, and of the demo developer's keys
// given, the most an operator may grant (10,000 calls a second), through the portal as people do:
// the demo developer asks for higher limits, the demo operator grants them. A load run then
// measures the work, not the Default plan's 5 calls a second.
func (s *Server) RaiseRates(tb testing.TB, keys ...string) {
	tb.Helper()
	creds := s.Credentials(tb)
	raise := map[string]bool{access.Hint(creds["apiKey"]): true}
	for _, k := range keys {
		raise[access.Hint(k)] = true
	}
	signIn := func(email, password string) string {
		var r struct{ SignIn struct{ Token string } }
		s.Portal(tb, nil, "", `mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { token } }`,
			map[string]any{"e": email, "p": password}, &r)
		return r.SignIn.Token
	}
	dev, op := signIn(creds["developerEmail"], creds["developerPassword"]), signIn(creds["operatorEmail"], creds["operatorPassword"])
	var me struct {
		Me struct {
			Applications []struct {
				Keys []struct {
					APIKey        string
					Subscriptions []struct{ ID, Status string }
				}
			}
		}
	}
	s.Portal(tb, nil, dev, `{ me { applications { keys { apiKey subscriptions { id status } } } } }`, nil, &me)
	granted := 0
	for _, app := range me.Me.Applications {
		for _, k := range app.Keys {
			for _, sub := range k.Subscriptions {
				if !raise[k.APIKey] || sub.Status != "approved" {
					continue
				}
				var asked struct{ RequestLimitIncrease struct{ ID string } }
				s.Portal(tb, nil, dev, `mutation($s: ID!) { requestLimitIncrease(input: {subscriptionId: $s, description: "Load run.", estimatedPerSecond: 10000, estimatedPerDay: 1000000000}) { id } }`,
					map[string]any{"s": sub.ID}, &asked)
				s.Portal(tb, nil, op, `mutation($id: ID!) { reviewLimitIncrease(id: $id, approve: true, perSecond: 10000, perDay: 1000000000, reply: "Granted for a load run.") { status } }`,
					map[string]any{"id": asked.RequestLimitIncrease.ID}, nil)
				granted++
			}
		}
	}
	if granted == 0 {
		tb.Fatal("RaiseRates: the keys have no approved subscription")
	}
}

// LoadClient is ClientFrom for a load generator: its connections come from the loopback address
// ip, it keeps up to 256 of them, and it asks for no compression, so that the answer it reads is
// the bytes a bare server serves.
func LoadClient(ip string, timeout time.Duration) *http.Client {
	c := ClientFrom(ip, timeout)
	t := c.Transport.(*http.Transport)
	t.MaxIdleConnsPerHost, t.MaxConnsPerHost, t.DisableCompression = 256, 256, true
	return c
}

// Request is one call a load repeats: the same method, URL, headers and body each time.
type Request struct {
	Method, URL string
	Header      http.Header
	Body        []byte
}

// Do sends r through c and reads the whole answer.
func (r Request) Do(ctx context.Context, c *http.Client) (status int, h http.Header, body []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header = r.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, body, err
}

// Result is what a closed-loop load measured: the answers with the wanted status, their
// latencies, and the others.
type Result struct {
	OK, Failed int
	Elapsed    time.Duration
	Latency    *Latencies
	// Failure is the first failure: an error, or another status and its body's start.
	Failure string
}

// PerSecond is the throughput of wanted answers.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// Closed sends rs through c from n clients for d, each sending its next call as soon as its last
// was answered (a closed loop), and counts the answers with status want. Each client sends the
// calls of rs in turn, client i starting at rs[i%len(rs)]: several keys' calls, for a load past
// what one key's plan admits, spread evenly however few the clients. No call starts after d, and
// the calls under way then are waited for and counted: the elapsed time ends with the last answer,
// so that a call slower than d still counts.
func Closed(c *http.Client, n int, d time.Duration, want int, rs ...Request) Result {
	var (
		mu   sync.Mutex
		res  = Result{Latency: &Latencies{}}
		sent = make([]int, n) // by client: each client's goroutine alone touches its own
	)
	t0 := time.Now()
	Run(context.Background(), n, d, func(_ context.Context, i int) {
		r := rs[(i+sent[i])%len(rs)]
		sent[i]++
		start := time.Now()
		status, _, body, err := r.Do(context.Background(), c)
		took := time.Since(start)
		mu.Lock()
		defer mu.Unlock()
		res.record(status, want, body, err, took)
	})
	res.Elapsed = time.Since(t0)
	return res
}

// bareEnv names the variable that makes the test binary a bare server (BareMain): the path of
// the answer it serves.
const bareEnv = "FLIGHTGRAPH_BENCH_BARE_ANSWER"

// bareAnswer is what a bare server serves to every request.
type bareAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Bare serves status, the headers h (less those net/http writes itself) and body to every request
// from a bare net/http server on a free loopback port, and returns its URL: the floor a
// workload's throughput is held to, the same bytes with no work behind them. The server is a
// process of its own, as flightgraph is, so that both share the machine with the load generator
// alike: the test binary started again, which BareMain turns into the server; it ends with tb.
func Bare(tb testing.TB, status int, h http.Header, body []byte) string {
	tb.Helper()
	h = h.Clone()
	for _, k := range []string{"Date", "Content-Length", "Transfer-Encoding", "Connection"} {
		h.Del(k)
	}
	answer, _ := json.Marshal(bareAnswer{status, h, body})
	file := filepath.Join(tb.TempDir(), "answer.json")
	if err := os.WriteFile(file, answer, 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), bareEnv+"="+file)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "bare listening on ")
	if err != nil || !ok {
		tb.Fatalf("bare server: %q %v", line, err)
	}
	return u
}

// BareMain makes the test binary the bare server Bare asks for when it is started as one; else it
// returns at once. A bench test package's TestMain calls it first.
func BareMain() {
	file := os.Getenv(bareEnv)
	if file == "" {
		return
	}
	raw, err := os.ReadFile(file)
	var a bareAnswer
	if err == nil {
		err = json.Unmarshal(raw, &a)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare server:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare server:", err)
		os.Exit(1)
	}
	fmt.Printf("bare listening on http://%s\n", ln.Addr())
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		maps.Copy(w.Header(), a.Header)
		w.WriteHeader(a.Status)
		w.Write(a.Body)
	}))
	fmt.Fprintln(os.Stderr, "bare server:", err)
	os.Exit(1)
}

// Paced sends r through c at rate calls a second for d, each call in a goroutine of its own
// whether the last was answered or not (an open loop), for what a closed loop cannot measure:
// an endpoint whose budgets refuse a caller past a few calls a second, such as the token
// endpoint. It waits for the calls it sent, and counts and times them as Closed does.
func Paced(c *http.Client, rate float64, d time.Duration, r Request, want int) Result {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		res = Result{Latency: &Latencies{}}
	)
	every := time.Duration(float64(time.Second) / rate)
	t0 := time.Now()
	for next := t0; next.Before(t0.Add(d)); next = next.Add(every) {
		time.Sleep(time.Until(next))
		wg.Go(func() {
			start := time.Now()
			status, _, body, err := r.Do(context.Background(), c)
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			res.record(status, want, body, err, took)
		})
	}
	wg.Wait()
	res.Elapsed = max(d, time.Since(t0))
	return res
}

// record counts one answer.
func (res *Result) record(status, want int, body []byte, err error, took time.Duration) {
	if err == nil && status == want {
		res.OK++
		res.Latency.Add(took)
		return
	}
	res.Failed++
	if res.Failure == "" {
		if err != nil {
			res.Failure = err.Error()
		} else {
			res.Failure = fmt.Sprintf("%d %.200s", status, body)
		}
	}
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes, as uptime says it.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
