//go:build !race

package server_test

// raceDetector tells tests that the race detector slows this build.
const raceDetector = false
