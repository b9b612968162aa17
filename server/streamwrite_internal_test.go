package server

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestStreamWritesHaveDeadlines: a stream's handler writing to a client that reads nothing,
// behind small socket buffers, gets an error from a write that waits past the stream's write
// timeout and is let go of: through the ResponseWriter (graphql-sse, the REST events stream), and
// over WebSocket through coder/websocket as gqlgen's transport uses it (its frames go through the
// writer the hijack hands over), where the connection is also closed, so that the library's
// read loop, which has no deadline, ends too. Without the deadlines each write would wait for as
// long as the client keeps its connection open.
func TestStreamWritesHaveDeadlines(t *testing.T) {
	const timeout = 200 * time.Millisecond
	chunk := make([]byte, 64<<10)
	for _, c := range []struct {
		name string
		// serve writes until a write fails, and returns that failure.
		serve func(w http.ResponseWriter, r *http.Request) error
		// open opens the stream on conn, a connection of small buffers, and reads nothing.
		open func(t *testing.T, url string)
	}{
		{"ResponseWriter", func(w http.ResponseWriter, r *http.Request) error {
			for range 1000 { // 64 MB, far past any socket buffer
				if _, err := w.Write(chunk); err != nil {
					return err
				}
				w.(http.Flusher).Flush()
			}
			return nil
		}, func(t *testing.T, url string) {
			conn := dialSmallReceiveBuffer(t, strings.TrimPrefix(url, "http://"))
			t.Cleanup(func() { conn.Close() })
			if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: flightgraph\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
		}},
		{"WebSocket", func(w http.ResponseWriter, r *http.Request) error {
			ws, err := websocket.Accept(w, r, nil)
			if err != nil {
				return err
			}
			for range 1000 {
				if err = ws.Write(context.Background(), websocket.MessageBinary, chunk); err != nil {
					break
				}
			}
			// The connection is closed: the read loop a transport runs ends rather than waiting.
			read := make(chan error, 1)
			go func() { _, _, err := ws.Read(context.Background()); read <- err }()
			select {
			case <-read:
			case <-time.After(5 * time.Second):
				t.Errorf("the WebSocket's read still waits 5 s after its write failed (%v): the connection is not closed", err)
			}
			return err
		}, func(t *testing.T, url string) {
			// coder/websocket reads from its connection only when asked to: this client never is.
			client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return dialSmallReceiveBuffer(t, addr), nil
			}}}
			ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(url, "http"), &websocket.DialOptions{HTTPClient: client})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.CloseNow() })
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
				err := c.serve(newStreamWriter(w, timeout), r)
				done <- result{err, time.Since(started)}
			}))
			ts.Listener = smallSendBuffers{ts.Listener}
			ts.Start()
			defer ts.Close()
			c.open(t, ts.URL) // the client reads nothing until the test ends
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
