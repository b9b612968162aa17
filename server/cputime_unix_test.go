//go:build unix

package server_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used so far, all its threads
// (the garbage collector's too): on a machine shared with other work a request's CPU time varies
// far less than its latency.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
