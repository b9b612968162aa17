//go:build !unix

package server_test

import "time"

// processCPU is not measured here: benchmarks report no CPU time per request.
func processCPU() time.Duration { return 0 }
