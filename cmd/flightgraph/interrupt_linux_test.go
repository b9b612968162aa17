package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openTerminal opens a pseudo-terminal and returns its terminal side, the stdin of a person's
// shell; the test ends with both sides closed.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no pseudo-terminal: %v", err)
		}
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("name the pseudo-terminal: %v", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	if !isTerminal(tty) {
		t.Fatal("isTerminal does not see a pseudo-terminal as one")
	}
	if null, err := os.Open(os.DevNull); err == nil {
		defer null.Close()
		if isTerminal(null) {
			t.Fatal("isTerminal sees /dev/null as a terminal")
		}
	}
	return tty
}

// child is a flightgraph process, run by the test binary (TestMain).
type child struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	exited chan error
}

// startChild runs `flightgraph args` on dir with stdin (nil: /dev/null) and waits until it listens.
func startChild(t *testing.T, dir string, stdin *os.File, args string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=serve", "FLIGHTGRAPH_DATA_DIR="+dir, childArgs+"="+args)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	select {
	case c.url = <-urls:
	case err := <-c.exited:
		t.Fatalf("flightgraph exited before listening: %v\n%s", err, c.stderr)
	case <-time.After(5 * time.Minute):
		t.Fatalf("flightgraph did not listen:\n%s", c.stderr)
	}
	return c
}

// interrupt sends SIGINT, as Ctrl-C does, and returns how long the process took to exit.
func (c *child) interrupt(t *testing.T) time.Duration {
	t.Helper()
	at := time.Now()
	if err := c.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.exited:
		if err != nil {
			t.Errorf("flightgraph exited with %v:\n%s", err, c.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("flightgraph did not exit after SIGINT:\n%s", c.stderr)
	}
	return time.Since(at)
}

// TestCtrlC: Ctrl-C at a terminal stops the server at once when no request is in flight, though
// a drain period is set (the default, 5 s); with a request in flight it drains, and the request
// gets its answer; without a terminal (a supervisor's stdin) SIGINT drains as SIGTERM does
// (TestSIGTERMUnderLoad).
func TestCtrlC(t *testing.T) {
	dir := t.TempDir()
	const common = "--addr 127.0.0.1:0 --metrics-addr= --roll-every 0"

	t.Run("at a terminal, idle", func(t *testing.T) {
		c := startChild(t, dir, openTerminal(t), common)
		took := c.interrupt(t)
		if took > 2*time.Second {
			t.Errorf("Ctrl-C at a terminal took %v to stop an idle server", took)
		}
		if log := c.stderr.String(); strings.Contains(log, "draining") || !strings.Contains(log, "stopping at once") {
			t.Errorf("the log does not say it stopped at once:\n%s", log)
		}
		t.Logf("an idle server stopped %v after Ctrl-C at a terminal", took.Round(time.Millisecond))
	})

	t.Run("at a terminal, a request in flight", func(t *testing.T) {
		c := startChild(t, dir, openTerminal(t), common+" --drain-period 1s")
		key := demoCredentials(t, dir)["apiKey"]
		query, _ := json.Marshal(map[string]any{"query": `{ airport(code: "AMS") { name } }`})
		answer := make(chan string, 1)
		started := make(chan struct{})
		go func() {
			pr, pw := io.Pipe()
			go func() {
				pw.Write(query[:len(query)/2])
				close(started)
				time.Sleep(1500 * time.Millisecond)
				pw.Write(query[len(query)/2:])
				pw.Close()
			}()
			req, _ := http.NewRequest(http.MethodPost, c.url+"/graphql", pr)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("api-key", key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answer <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answer <- fmt.Sprintf("%d %s", resp.StatusCode, b)
		}()
		<-started
		time.Sleep(300 * time.Millisecond) // the headers are read: the request is in flight
		c.interrupt(t)
		if a := <-answer; !strings.HasPrefix(a, "200 ") || !strings.Contains(a, "Schiphol") {
			t.Errorf("the request in flight got %.300s", a)
		}
		if !strings.Contains(c.stderr.String(), "draining") {
			t.Errorf("Ctrl-C with a request in flight did not drain:\n%s", c.stderr)
		}
	})

	t.Run("no terminal", func(t *testing.T) {
		c := startChild(t, dir, nil, common+" --drain-period 1s")
		if took := c.interrupt(t); took < time.Second {
			t.Errorf("SIGINT without a terminal stopped after %v, within the drain period", took)
		}
		if !strings.Contains(c.stderr.String(), "draining") {
			t.Errorf("SIGINT without a terminal did not drain:\n%s", c.stderr)
		}
	})
}
