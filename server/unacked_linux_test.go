package server

import (
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
)

// TestAcceptedConnectionsLimitUnackedData: every connection the API's listener accepts has the
// kernel close it once what it sent stays unacknowledged for UnackedTimeout (TCP_USER_TIMEOUT),
// so that a client gone without a word does not hold a stream, which pings it into the socket's
// buffer without error, for TCP's own quarter of an hour.
func TestAcceptedConnectionsLimitUnackedData(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newConnLimiter(ConnLimits{Max: 10}, prometheus.NewRegistry()).listener(inner)
	defer ln.Close()
	client, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*limitedConn).Conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ms int
	raw.Control(func(fd uintptr) { ms, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT) })
	if err != nil || ms != int(UnackedTimeout.Milliseconds()) {
		t.Errorf("TCP_USER_TIMEOUT %d ms (%v), want %d", ms, err, UnackedTimeout.Milliseconds())
	}
}
