//go:build !linux

package server

import (
	"net"
	"time"
)

// limitUnacked does nothing where TCP_USER_TIMEOUT is not known: a connection whose client is
// gone is found by TCP's own retransmission timeout.
func limitUnacked(net.Conn, time.Duration) {}
