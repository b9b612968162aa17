package server

import "runtime/debug"

// Runtime defaults for a latency-bound API server. A GraphQL answer allocates a great many small,
// short-lived objects (gqlgen builds a field context and often a goroutine per field), while the
// live heap stays small; at Go's default GOGC=100 the collector then runs several times per
// large query. GCPercent trades memory for latency, and MemoryLimit keeps that trade bounded: near
// the limit the collector runs as often as it must.
const (
	GCPercent   = 400
	MemoryLimit = 1 << 30 // 1 GiB
)

// TuneRuntime applies GCPercent and MemoryLimit unless the operator set GOGC or GOMEMLIMIT, which
// keep their usual meaning. It returns the settings in force, for the start-up log.
func TuneRuntime(getenv func(string) string) (gcPercent int, memoryLimit int64) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit)
	}
	gcPercent = debug.SetGCPercent(-1)
	debug.SetGCPercent(gcPercent)
	return gcPercent, debug.SetMemoryLimit(-1)
}
