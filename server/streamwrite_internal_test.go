package server

import (
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// TestStreamWritesHaveDeadlines: a stream's handler writing to a client that reads nothing,
// behind small socket buffers, gets an error from a write that waits past the stream's write
// timeout, through the ResponseWriter (graphql-sse, the REST events stream) and through a
// hijacked connection (WebSocket); without a deadline each write would wait for as long as the
// client keeps its connection open.
func TestStreamWritesHaveDeadlines(t *testing.T) {
	const timeout = 200 * time.Millisecond
	chunk := make([]byte, 64<<10)
	for _, c := range []struct {
		name  string
		write func(w http.ResponseWriter) error
	}{
		{"ResponseWriter", func(w http.ResponseWriter) error {
			for range 1000 { // 64 MB, far past any socket buffer
				if _, err := w.Write(chunk); err != nil {
					return err
				}
				w.(http.Flusher).Flush()
			}
			return nil
		}},
		{"hijacked", func(w http.ResponseWriter) error {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return err
			}
			defer conn.Close()
			for range 1000 {
				if _, err := conn.Write(chunk); err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			type result struct {
				err  error
				took time.Duration
			}
			done := make(chan result, 1)
			ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				started := time.Now()
				err := c.write(newStreamWriter(w, timeout))
				done <- result{err, time.Since(started)}
			}))
			ts.Listener = smallSendBuffers{ts.Listener}
			ts.Start()
			defer ts.Close()
			conn := dialSmallReceiveBuffer(t, ts.Listener.Addr().String())
			defer conn.Close() // the client reads nothing until the test ends
			if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: flightgraph\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-done:
				if r.err == nil {
					t.Fatal("64 MB written to a client that reads nothing")
				}
				t.Logf("the writes failed %v after the first: %v", r.took, r.err)
			case <-time.After(10 * time.Second):
				t.Fatal("a write to a client that reads nothing still waits after 10 s")
			}
		})
	}
}

// smallSendBuffers gives its connections a small send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// dialSmallReceiveBuffer connects with a small receive buffer, set before the connection is
// made, so that the window it announces is small from the start.
func dialSmallReceiveBuffer(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(network, address string, c syscall.RawConn) error {
		var err error
		c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
		return err
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}
