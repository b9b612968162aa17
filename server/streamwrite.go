package server

import (
	"bufio"
	"net"
	"net/http"
	"time"
)

// DefaultStreamWriteTimeout bounds each write of a stream (a subscription over WebSocket or
// graphql-sse, the REST events stream) unless Config says otherwise.
const DefaultStreamWriteTimeout = 10 * time.Second

// streamWriter is a stream's ResponseWriter: a stream has no request timeout and no write
// deadline for its whole life, so each of its writes gets one of its own. A reader that stops
// reading lets the socket's buffers fill, and a write then waits for it; past the deadline the
// write fails and the stream's handler returns, where without one it would wait for as long as
// the client keeps the connection open (the hub cuts a subscriber that falls 256 events behind,
// but the handler still has its end to write). It keeps what the transports look for on the
// writer: Flush (graphql-sse, the REST stream; a write that fails there ends the request's
// context, and the handler returns) and Hijack (WebSocket, whose connection then sets the same
// deadline before each of its writes and is closed when one fails).
type streamWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func newStreamWriter(w http.ResponseWriter, timeout time.Duration) *streamWriter {
	return &streamWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.ResponseWriter.Write(p)
}

func (w *streamWriter) Flush() {
	w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	w.rc.Flush()
}

func (w *streamWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := w.rc.Hijack()
	if err != nil {
		return nil, nil, err
	}
	dc := &deadlineConn{Conn: conn, timeout: w.timeout}
	// The writer net/http hands over with the connection writes to the connection itself, and a
	// WebSocket library writes its frames through it (coder/websocket, gqlgen's): it is pointed at
	// dc. It is new and holds nothing yet; whatever it might hold is written first.
	if err := rw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	rw.Writer.Reset(dc)
	return dc, rw, nil
}

// Unwrap is for http.ResponseController.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// deadlineConn is a hijacked stream's connection: each write has a deadline of its own, and a
// write that fails closes the connection. Neither the WebSocket library nor gqlgen closes it on
// a failed write, and their read loop waits with no deadline: without the close, a client that
// stopped reading would still hold the handler for as long as it kept the connection.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
	n, err := c.Conn.Write(p)
	if err != nil {
		c.Conn.Close()
	}
	return n, err
}
