package server_test

import (
	"syscall"
	"testing"

	"github.com/flightgraph/flightgraph/server"
)

// TestRaiseFileLimit: the soft limit of open files is raised to the hard one.
func TestRaiseFileLimit(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: lim.Max / 2, Max: lim.Max}); err != nil {
		t.Fatal(err)
	}
	if got := server.FileLimit(); got != lim.Max/2 {
		t.Fatalf("FileLimit = %d after lowering it to %d", got, lim.Max/2)
	}
	got, err := server.RaiseFileLimit()
	if err != nil || got != lim.Max || server.FileLimit() != lim.Max {
		t.Fatalf("RaiseFileLimit = %d, %v (FileLimit %d), want the hard limit %d", got, err, server.FileLimit(), lim.Max)
	}
}
