//go:build !linux

package server

// RaiseFileLimit leaves the file limit alone outside Linux (Go's os package raises it at start
// on the other Unix systems) and reports it as unknown (0).
func RaiseFileLimit() (uint64, error) { return 0, nil }

// FileLimit is unknown (0) outside Linux: DefaultMaxConns then gives FallbackMaxConns.
func FileLimit() uint64 { return 0 }
