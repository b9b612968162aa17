package flightgraph_test

import (
	"strconv"
	"testing"

	"github.com/flightgraph/flightgraph"
)

// FuzzParsePosition: a position a client resumes from (the after argument, Last-Event-ID) is
// either a decimal number that round-trips, or refused with INSP_400.002, never a panic nor a
// negative position.
func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{"", "0", "1", "42", "9223372036854775807", "9223372036854775808", "-1", "+1", "1e3", " 1", "０", "00012"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := flightgraph.ParsePosition("after", s)
		if err != nil {
			if flightgraph.ErrorCode(err) != flightgraph.ECodeBadFormat {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("%q: negative position %d", s, n)
		}
		if s != "" {
			if m, err := strconv.ParseInt(s, 10, 64); err != nil || m != n {
				t.Fatalf("%q parsed as %d", s, n)
			}
		}
	})
}
