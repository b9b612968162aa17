//go:build linux

package server

import "syscall"

// RaiseFileLimit raises the process's soft limit of open files (RLIMIT_NOFILE) to its hard limit,
// and returns the soft limit then in force. Go's os package does the same when a program starts
// (since Go 1.19); doing it here as well keeps it when that changes, and gives the figure the
// start-up log reports and DefaultMaxConns derives the cap of connections from.
func RaiseFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		raised := syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			return lim.Cur, err
		}
		lim = raised
	}
	return lim.Cur, nil
}

// FileLimit is the process's soft limit of open files, 0 if it cannot be read.
func FileLimit() uint64 {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return 0
	}
	return lim.Cur
}
