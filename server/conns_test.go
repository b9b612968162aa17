package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// connServer is a server run with connection limits on listeners of its own.
type connServer struct {
	h        *server.Server
	api, ops string // the API's and the metrics listener's host:port
}

func runWithConns(t *testing.T, limits server.ConnLimits) *connServer {
	t.Helper()
	cfg := testConfig(storetest.Open(t, store.SQLite, os.Getenv), io.Discard)
	cfg.Server.Conns = limits
	h, _ := startServer(t, cfg)
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return ln
	}
	api, ops := listen(), listen()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx, api, ops, server.Shutdown{Grace: time.Second}) }()
	t.Cleanup(func() { cancel(); <-done })
	return &connServer{h: h, api: api.Addr().String(), ops: ops.Addr().String()}
}

// hold opens a keep-alive connection from the loopback address from, asks for /healthz on it and
// keeps it open (until the test ends); nil when the server reset it.
func (s *connServer) hold(t *testing.T, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: time.Second}
	c, err := d.Dial("tcp", s.api)
	if errors.Is(err, syscall.ECONNRESET) {
		return nil // reset as the handshake ended
	} else if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: flightgraph.test\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		t.Fatalf("a connection from %s was neither answered nor reset in 2 s", from)
	case err != nil:
		c.Close()
		return nil
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz from %s: %d", from, resp.StatusCode)
	}
	c.SetDeadline(time.Time{})
	return c
}

// closed reports whether the server closed c.
func closed(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// metric is the value of the server's sample named by line's start.
func (s *connServer) metric(t *testing.T, sample string) string {
	t.Helper()
	resp, err := http.Get("http://" + s.ops + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return v
		}
	}
	return "absent"
}

// quietLimits are limits whose idle timeouts no test of the caps meets.
func quietLimits(max, perAddress int) server.ConnLimits {
	return server.ConnLimits{Max: max, PerAddress: perAddress, IdleTimeout: time.Minute, PressureIdleTimeout: time.Minute}
}

// TestConnsPerAddressCap: one address holds at most PerAddress connections, the next is reset
// as it is accepted while another address is served, and a closed connection gives its place
// back.
func TestConnsPerAddressCap(t *testing.T) {
	s := runWithConns(t, quietLimits(50, 20))
	var held []net.Conn
	for i := range 20 {
		c := s.hold(t, "127.0.0.1")
		if c == nil {
			t.Fatalf("connection %d from 127.0.0.1 refused under the cap of 20", i+1)
		}
		held = append(held, c)
	}
	if s.hold(t, "127.0.0.1") != nil {
		t.Fatal("a 21st connection from 127.0.0.1 was served: the per-address cap is 20")
	}
	if s.hold(t, "127.0.0.2") == nil {
		t.Fatal("127.0.0.2 was refused while 127.0.0.1 held its cap")
	}
	if v := s.metric(t, `flightgraph_connections_refused_total{reason="address"}`); v != "1" {
		t.Errorf("refused for the address: %s, want 1", v)
	}
	if v := s.metric(t, `flightgraph_connections_open`); v != "21" {
		t.Errorf("open: %s, want 21", v)
	}
	held[0].Close()
	deadline := time.Now().Add(2 * time.Second)
	for s.hold(t, "127.0.0.1") == nil {
		if time.Now().After(deadline) {
			t.Fatal("a closed connection did not give its place back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConnsTotalCap: the listener holds at most Max connections, whichever their addresses, and
// a closed connection gives its place back.
func TestConnsTotalCap(t *testing.T) {
	s := runWithConns(t, quietLimits(30, 20))
	var held []net.Conn
	for i := range 30 {
		from := "127.0.0.1"
		if i >= 20 {
			from = "127.0.0.2"
		}
		c := s.hold(t, from)
		if c == nil {
			t.Fatalf("connection %d (from %s) refused under the caps", i+1, from)
		}
		held = append(held, c)
	}
	if s.hold(t, "127.0.0.3") != nil {
		t.Fatal("a 31st connection was served: the total cap is 30")
	}
	if v := s.metric(t, `flightgraph_connections_refused_total{reason="total"}`); v != "1" {
		t.Errorf("refused for the total: %s, want 1", v)
	}
	held[25].Close()
	deadline := time.Now().Add(2 * time.Second)
	for s.hold(t, "127.0.0.3") == nil {
		if time.Now().After(deadline) {
			t.Fatal("a closed connection did not give its place back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestIdleConnsClosedSoonerUnderPressure: up to half of Max, idle connections keep the idle
// timeout; over it, those idle for PressureIdleTimeout are closed, the longest idle first, until
// half are open.
func TestIdleConnsClosedSoonerUnderPressure(t *testing.T) {
	s := runWithConns(t, server.ConnLimits{Max: 20, PerAddress: 20, IdleTimeout: time.Minute, PressureIdleTimeout: 200 * time.Millisecond})
	var held []net.Conn
	for range 10 {
		held = append(held, s.hold(t, "127.0.0.1"))
	}
	time.Sleep(600 * time.Millisecond)
	for i, c := range held {
		if closed(c) {
			t.Fatalf("idle connection %d closed with half of the cap open", i)
		}
	}
	for range 6 {
		held = append(held, s.hold(t, "127.0.0.1"))
	}
	deadline := time.Now().Add(3 * time.Second)
	for s.metric(t, "flightgraph_connections_idle_closed_total") != "6" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // and no more than 6
	var shut []int
	for i, c := range held {
		if closed(c) {
			shut = append(shut, i)
		}
	}
	// Which 6 of the first 10 is not told: the server notes a connection idle just after its
	// answer reaches the client, which may by then have sent the next connection's request.
	if len(shut) != 6 || shut[5] >= 10 {
		t.Fatalf("closed %v of 16 idle connections, want 6 of the 10 longest idle (0–9)", shut)
	}
	if v := s.metric(t, "flightgraph_connections_idle_closed_total"); v != "6" {
		t.Errorf("idle closed: %s, want 6", v)
	}
}

// TestProbesAnswerWhileConnsAreFull: with the API listener's connections at both caps, the
// probes answer on the metrics listener within a second.
func TestProbesAnswerWhileConnsAreFull(t *testing.T) {
	s := runWithConns(t, quietLimits(10, 10))
	for range 10 {
		s.hold(t, "127.0.0.1")
	}
	if s.hold(t, "127.0.0.1") != nil || s.hold(t, "127.0.0.2") != nil {
		t.Fatal("the API listener's caps are not full")
	}
	client := &http.Client{Timeout: time.Second}
	for _, path := range []string{"/healthz", "/readyz"} {
		start := time.Now()
		resp, err := client.Get("http://" + s.ops + path)
		if err != nil {
			t.Fatalf("%s on the metrics listener with the API's caps full: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s on the metrics listener: %d", path, resp.StatusCode)
		}
		t.Logf("%s in %v", path, time.Since(start))
	}
}

func TestDefaultMaxConns(t *testing.T) {
	for _, c := range []struct {
		limit uint64
		want  int
	}{
		{0, server.FallbackMaxConns},
		{256, 128},
		{1024, 512},
		{4096, 3072},
		{20_000, 15_000},
		{1 << 20, server.MaxDefaultConns},
	} {
		if got := server.DefaultMaxConns(c.limit); got != c.want {
			t.Errorf("DefaultMaxConns(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}
