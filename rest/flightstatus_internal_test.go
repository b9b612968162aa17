package rest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestFormatTime: formatTime is Format(timeLayout) for any instant in any zone, offsets of
// half and quarter hours, seconds and negative ones included; offsetString is %c%02d%02d.
func TestFormatTime(t *testing.T) {
	var zones []*time.Location
	for _, name := range []string{"UTC", "Europe/Amsterdam", "America/St_Johns", "Asia/Kathmandu", "Pacific/Kiritimati", "America/Adak"} {
		if loc, err := time.LoadLocation(name); err == nil {
			zones = append(zones, loc)
		}
	}
	zones = append(zones, time.FixedZone("lmt", -(17*60+30)), time.FixedZone("sec", 59), time.FixedZone("neg", -30), time.FixedZone("far", 14*3600))
	r := rand.New(rand.NewPCG(1, 2))
	lo, hi := time.Date(-20, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()/1e3, time.Date(10020, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()/1e3
	for i := range 200000 {
		at := time.UnixMicro(lo + r.Int64N(hi-lo)).Add(time.Duration(r.IntN(1000)))
		if i%3 == 0 { // the years flights fly in
			at = time.Date(2020+r.IntN(20), time.Month(1+r.IntN(12)), 1+r.IntN(31), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1e9), time.UTC)
		}
		at = at.In(zones[i%len(zones)])
		if got, want := formatTime(at), at.Format(timeLayout); got != want {
			t.Fatalf("%v: %s, want %s", at, got, want)
		}
	}
	for m := -48 * 60; m <= 48*60; m++ {
		sign, abs := '+', m
		if m < 0 {
			sign, abs = '-', -m
		}
		if got, want := offsetString(m), fmt.Sprintf("%c%02d%02d", sign, abs/60, abs%60); got != want {
			t.Fatalf("%d minutes: %s, want %s", m, got, want)
		}
	}
}
