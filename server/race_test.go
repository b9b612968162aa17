//go:build race

package server_test

// raceDetector tells tests that the race detector slows this build: argon2id takes four to five
// times as long under it.
const raceDetector = true
