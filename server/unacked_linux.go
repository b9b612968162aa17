package server

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// limitUnacked has the kernel close c when data it sent stays unacknowledged for d
// (TCP_USER_TIMEOUT), and reports whether it could.
func limitUnacked(c net.Conn, d time.Duration) bool {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
	}); err != nil {
		return false
	}
	return serr == nil
}
