package server

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// limitUnacked has the kernel close c when data it sent stays unacknowledged for d
// (TCP_USER_TIMEOUT). A connection it cannot set (not TCP) keeps TCP's own timeout.
func limitUnacked(c net.Conn, d time.Duration) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	if raw, err := tc.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) {
			unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
		})
	}
}
