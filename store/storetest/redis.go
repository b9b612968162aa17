package storetest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a redis-server of the test's own, on a free port of 127.0.0.1 and without
// persistence, for outage tests: it can be killed and started again, empty, without touching the
// shared Redis that other tests use.
type Redis struct {
	tb   testing.TB
	port int
	cmd  *exec.Cmd
}

// StartRedis starts a private redis-server, killed when the test ends. Without the redis-server
// binary the test skips with a message, or fails in CI.
func StartRedis(tb testing.TB) *Redis {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("redis-server is not installed: CI runs every test on Redis")
		}
		tb.Skip("redis-server is not installed: this test starts a Redis of its own (CI runs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r := &Redis{tb: tb, port: ln.Addr().(*net.TCPAddr).Port}
	ln.Close()
	tb.Cleanup(r.Kill)
	r.Start()
	return r
}

// URL is the server's redis:// URL.
func (r *Redis) URL() string { return "redis://127.0.0.1:" + strconv.Itoa(r.port) + "/0" }

// Addr is the server's host:port.
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// Start starts the server, empty, and waits until it answers.
func (r *Redis) Start() {
	r.tb.Helper()
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
	if err := r.cmd.Start(); err != nil {
		r.tb.Fatalf("start redis-server: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			r.tb.Fatalf("the private redis-server on port %d does not answer: %v", r.port, err)
		}
	}
}

// Kill kills the server at once, as a crash would; what it held is lost.
func (r *Redis) Kill() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}
