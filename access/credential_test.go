package access_test

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/flightgraph/flightgraph/access"
)

// BenchmarkHashGate verifies passwords with the real 19 MiB argon2id from 8 goroutines through a
// gate of DefaultHashConcurrency slots, under serve's GOGC, so that the cost of the gate's
// collections shows against the hashes themselves.
func BenchmarkHashGate(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	h := access.DefaultPasswordHasher
	stored := h.Hash("correct horse battery")
	g := access.NewHashGate(access.DefaultHashConcurrency)
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := g.Verify(context.Background(), h, "wrong password", stored); err != nil {
				b.Error(err)
			}
		}
	})
}
