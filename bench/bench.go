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
	"encoding/json"
	"fmt"
	"io"
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
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error

	templateOnce sync.Once
	templateDir  string
	templateErr  error
)

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

// Server is a flightgraph process started by Start.
type Server struct {
	URL        string // http://127.0.0.1:port
	MetricsURL string
	DataDir    string
	Cmd        *exec.Cmd
	// Log is what the process wrote, stdout and stderr together.
	Log *Buffer
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
	bin := Binary(tb)
	templateOnce.Do(func() {
		templateDir, templateErr = os.MkdirTemp("", "flightgraph-bench-data")
		if templateErr != nil {
			return
		}
		dir := filepath.Join(templateDir, "data")
		var s *Server
		s, templateErr = start(bin, dir, nil, "--roll-every=0")
		if templateErr == nil {
			templateErr = s.Stop()
		}
	})
	if templateErr != nil {
		tb.Fatalf("first start: %v", templateErr)
	}
	dir := filepath.Join(tb.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(templateDir, "data"))); err != nil {
		tb.Fatal(err)
	}
	s, err := start(bin, dir, env, append([]string{"--roll-every=0"}, args...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Logf("stop: %v", err)
		}
	})
	return s
}

func start(bin, dir string, env []string, args ...string) (*Server, error) {
	args = append([]string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--data-dir", dir,
		"--drain-period=0", "--log-level", "warn"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	s := &Server{DataDir: dir, Cmd: cmd, Log: &Buffer{}, exited: make(chan struct{})}
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
			if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(line); m != nil {
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
		return nil, fmt.Errorf("flightgraph exited before listening: %v\n%s", err, s.Log)
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		return nil, fmt.Errorf("flightgraph did not listen in 5 minutes:\n%s", s.Log)
	}
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
		return fmt.Errorf("flightgraph did not stop in 30 s")
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
