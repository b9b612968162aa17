package resolvers

import (
	"encoding/base64"
	"math"
	"strconv"
	"testing"

	"github.com/flightgraph/flightgraph"
)

// TestPage: Relay's first and after become a page; first out of 1–200 and a cursor this service
// did not make are refused with the catalogue's codes, naming the argument.
func TestPage(t *testing.T) {
	ptr := func(v int) *int { return &v }
	str := func(s string) *string { return &s }
	raw := func(s string) *string { c := base64.RawURLEncoding.EncodeToString([]byte(s)); return &c }
	for _, c := range []struct {
		name   string
		first  *int
		after  *string
		offset int
		limit  int
		code   string
	}{
		{"defaults", nil, nil, 0, flightgraph.DefaultPageSize, ""},
		{"after a cursor", ptr(5), str(encodeCursor(9)), 10, 5, ""},
		{"an empty cursor", ptr(5), str(""), 0, 5, ""},
		{"first 0", ptr(0), nil, 0, 0, flightgraph.ECodeInvalidParameter},
		{"first over the most", ptr(flightgraph.MaxPageSize + 1), nil, 0, 0, flightgraph.ECodeInvalidParameter},
		{"not base64", nil, str("!!"), 0, 0, flightgraph.ECodeBadFormat},
		{"another prefix", nil, raw("id:3"), 0, 0, flightgraph.ECodeBadFormat},
		{"a negative offset", nil, raw("offset:-2"), 0, 0, flightgraph.ECodeBadFormat},
		{"an offset that overflows", nil, raw("offset:" + strconv.Itoa(math.MaxInt)), 0, 0, flightgraph.ECodeBadFormat},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := page(c.first, c.after)
			if c.code != "" {
				if flightgraph.ErrorCode(err) != c.code {
					t.Fatalf("%v, want %s", err, c.code)
				}
				return
			}
			if err != nil || p.Offset != c.offset || p.Limit != c.limit {
				t.Fatalf("%+v %v, want offset %d limit %d", p, err, c.offset, c.limit)
			}
		})
	}
}

// FuzzPage: whatever a client sends as a cursor, page answers a page within bounds or the
// catalogue's refusal, never a negative offset.
func FuzzPage(f *testing.F) {
	for _, s := range []string{encodeCursor(0), encodeCursor(123), "", "b2Zmc2V0Oi0x", "!!"} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, after string, first int) {
		p, err := page(&first, &after)
		if err != nil {
			if code := flightgraph.ErrorCode(err); code != flightgraph.ECodeBadFormat && code != flightgraph.ECodeInvalidParameter {
				t.Fatalf("%q, %d: %v", after, first, err)
			}
			return
		}
		if p.Offset < 0 || p.Limit < 1 || p.Limit > flightgraph.MaxPageSize {
			t.Fatalf("%q, %d: page %+v out of bounds", after, first, p)
		}
	})
}
