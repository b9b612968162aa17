package flightgraph_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
)

func TestParseFlightID(t *testing.T) {
	for _, c := range []struct {
		in, want string
		code     string
	}{
		{"20261122+XX+1234", "20261122+XX+1234", ""},
		{"20261122+xx+12", "20261122+XX+0012", ""},
		{"20261122 XX 1509", "20261122+XX+1509", ""}, // '+' decoded to ' ' from a query string
		{"20261122+XX+1509D", "20261122+XX+1509D", ""},
		{"20261122+X1+0001", "20261122+X1+0001", ""},
		{"20261322+XX+1234", "", flightgraph.ECodeBadFormat},
		{"2026112+XX+1234", "", flightgraph.ECodeBadFormat},
		{"20261122+XXX+1234", "", flightgraph.ECodeBadFormat},
		{"20261122+12+1234", "", flightgraph.ECodeBadFormat},
		{"20261122+XX+12345", "", flightgraph.ECodeBadFormat},
		{"20261122+XX+0", "", flightgraph.ECodeBadFormat},
		{"20261122+XX", "", flightgraph.ECodeBadFormat},
		{"", "", flightgraph.ECodeBadFormat},
	} {
		id, err := flightgraph.ParseFlightID("id", c.in)
		if got := flightgraph.ErrorCode(err); got != c.code {
			t.Errorf("%q: code %q (%v), want %q", c.in, got, err, c.code)
		} else if err == nil && id.String() != c.want {
			t.Errorf("%q: %s, want %s", c.in, id, c.want)
		}
	}
}

// FuzzParseFlightID: any input is either refused with ECodeBadFormat naming the parameter, in a
// message of bounded length, or parsed to an id whose canonical form parses back to itself, with
// a real date, a carrier code and a number of 1 to 9999.
func FuzzParseFlightID(f *testing.F) {
	for _, s := range []string{"20261122+XX+1234", "20261122 xx 1509D", "20260229+XX+1", "20261322+XX+1234", "", "+++", strings.Repeat("9", 5000),
		"20261122+ſſ+1", "20261122 XX +12", "00000101+Xx+0001", "20240229+XX+9999Z", "20250229+XX+1", "20261131+XX+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := flightgraph.ParseFlightID("flightId", s)
		// The first implementation (strings.Split, time.Parse, strings.ToUpper, strconv.Atoi)
		// agrees, but that it took signed numbers ("20261122 XX +12") and carriers that upper-case
		// to two letters from other bytes ("ſſ"), which no flight is named by.
		ref, refErr := parseFlightIDReference(s)
		if err == nil && (refErr != nil || ref != id) || err != nil && refErr == nil && isASCII(s) && !strings.Contains(s, " +") {
			t.Fatalf("%q: %+v %v, the reference parses %+v %v", s, id, err, ref, refErr)
		}
		if fmt.Sprintf("%s+%s+%04d%s", strings.ReplaceAll(id.Date, "-", ""), id.Carrier, id.Number, id.Suffix) != id.String() {
			t.Fatalf("%+v: String %s", id, id)
		}
		if err != nil {
			var e *flightgraph.Error
			if !errors.As(err, &e) || e.Code != flightgraph.ECodeBadFormat || e.Parameter != "flightId" || len(e.Message) > flightgraph.MaxMessage+100 {
				t.Fatalf("%q: %#v", s, err)
			}
			return
		}
		if _, err := time.Parse(flightgraph.DateLayout, id.Date); err != nil || !flightgraph.IsCarrierCode(id.Carrier) || id.Number < 1 || id.Number > 9999 {
			t.Fatalf("%q: parsed to %+v", s, id)
		}
		again, err := flightgraph.ParseFlightID("flightId", id.String())
		if err != nil || again != id {
			t.Fatalf("%q: %+v, whose %s parses to %+v, %v", s, id, id, again, err)
		}
	})
}

func TestLegStatusFollowsTheClock(t *testing.T) {
	dep := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	leg := &flightgraph.FlightLeg{ScheduledDep: dep, ScheduledArr: dep.Add(2 * time.Hour), DepartureOffset: 60, ArrivalOffset: 0}
	late := *leg
	late.DepartureDelay, late.ArrivalDelay = 45, 40
	cancelled := *leg
	cancelled.Cancelled = true
	for _, c := range []struct {
		name string
		leg  *flightgraph.FlightLeg
		at   time.Time
		want flightgraph.FlightStatus
	}{
		{"weeks before", leg, dep.Add(-14 * 24 * time.Hour), flightgraph.StatusScheduled},
		{"a day and more before", leg, dep.Add(-25 * time.Hour), flightgraph.StatusScheduled},
		{"hours before", leg, dep.Add(-3 * time.Hour), flightgraph.StatusOnTime},
		{"boarding", leg, dep.Add(-30 * time.Minute), flightgraph.StatusBoarding},
		{"off block", leg, dep, flightgraph.StatusDeparted},
		{"in the air", leg, dep.Add(time.Hour), flightgraph.StatusDeparted},
		{"on block", leg, dep.Add(2 * time.Hour), flightgraph.StatusArrived},
		{"late, days before", &late, dep.Add(-2 * 24 * time.Hour), flightgraph.StatusScheduled},
		{"late, hours before", &late, dep.Add(-3 * time.Hour), flightgraph.StatusDelayed},
		{"late, past scheduled time", &late, dep.Add(10 * time.Minute), flightgraph.StatusBoarding},
		{"late, left", &late, dep.Add(50 * time.Minute), flightgraph.StatusDeparted},
		{"cancelled", &cancelled, dep.Add(3 * time.Hour), flightgraph.StatusCancelled},
	} {
		if got := c.leg.StatusAt(c.at); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// Local times carry the airport's offset; the actual time appears once it has passed.
	d := leg.DepartureMovement()
	if a := d.ActualAt(dep.Add(-time.Hour)); d.Scheduled.Format(time.RFC3339) != "2026-11-22T13:00:00+01:00" || a != nil {
		t.Errorf("departure before it happened: %s, actual %v", d.Scheduled.Format(time.RFC3339), a)
	}
	if a := leg.ArrivalMovement().ActualAt(dep.Add(3 * time.Hour)); a == nil || !a.Equal(dep.Add(2*time.Hour)) {
		t.Errorf("arrival after it happened has actual %v", a)
	}
	if a := cancelled.DepartureMovement().ActualAt(dep.Add(3 * time.Hour)); a != nil {
		t.Errorf("a cancelled leg has an actual departure %v", a)
	}
	// A two-leg flight between its legs is under way, not scheduled.
	second := *leg
	second.ScheduledDep, second.ScheduledArr = dep.Add(4*time.Hour), dep.Add(6*time.Hour)
	if s := flightgraph.FlightStatusAt([]*flightgraph.FlightLeg{leg, &second}, dep.Add(3*time.Hour)); s != flightgraph.StatusDeparted {
		t.Errorf("between legs: %s, want DEPARTED", s)
	}
}

func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range flightgraph.Catalogue() {
		if seen[e.Code] || e.Status < 400 || e.Name == "" || e.Meaning == "" {
			t.Errorf("bad catalogue entry %+v", e)
		}
		seen[e.Code] = true
	}
	for code, status := range map[string]int{
		"INSP_400.000": 400, "INSP_406.000": 406, "INSP_500.008": 500, "WS_502.002": 502, "FLIGHT_404.002": 404, "DEST_400.000": 400,
	} {
		if e := flightgraph.Lookup(code); e.Code != code || e.Status != status {
			t.Errorf("%s: %+v, want status %d", code, e, status)
		}
	}
	if flightgraph.Lookup("NOPE").Code != flightgraph.ECodeInternal {
		t.Error("an unknown code must read as internal")
	}
}

// TestReadmeListsCatalogue keeps the README's error table and the code's catalogue one list.
func TestReadmeListsCatalogue(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range flightgraph.Catalogue() {
		if strings.HasPrefix(e.Code, "INSP_500.00") && e.Code >= "INSP_500.001" {
			continue // listed as one range row
		}
		if !strings.Contains(string(readme), "| "+e.Code+" | "+strconv.Itoa(e.Status)+" |") {
			t.Errorf("README's error table lacks %s (%d)", e.Code, e.Status)
		}
	}
}

func TestISODuration(t *testing.T) {
	for d, want := range map[time.Duration]string{45 * time.Minute: "PT45M", 3 * time.Hour: "PT3H", 160 * time.Minute: "PT2H40M", 0: "PT0H",
		59*time.Minute + 59*time.Second: "PT59M", 25*time.Hour + time.Minute: "PT25H1M"} {
		if got := flightgraph.ISODuration(d); got != want {
			t.Errorf("%v: %s, want %s", d, got, want)
		}
	}
}

// TestDesignator: the carrier, the number padded to four digits, and the suffix, as
// fmt.Sprintf("%s%04d%s") spells them (the form Designator replaced for its cost).
func TestDesignator(t *testing.T) {
	for _, f := range []flightgraph.Flight{{CarrierCode: "XX", FlightNumber: 7}, {CarrierCode: "XX", FlightNumber: 1234}, {CarrierCode: "YY", FlightNumber: 56, Suffix: "A"},
		{CarrierCode: "XX", FlightNumber: 12345}, {CarrierCode: "XX", FlightNumber: 0}, {CarrierCode: "XX", FlightNumber: -3}} {
		if got, want := f.Designator(), fmt.Sprintf("%s%04d%s", f.CarrierCode, f.FlightNumber, f.Suffix); got != want {
			t.Errorf("%+v: %s, want %s", f, got, want)
		}
	}
}

// TestFiltersNormalizeCarriers: every filter upper-cases its carrier and refuses a malformed one.
func TestFiltersNormalizeCarriers(t *testing.T) {
	r, s, f := flightgraph.RouteFilter{Carrier: " yy "}, flightgraph.ScheduleFilter{Carrier: "xx"}, flightgraph.FlightFilter{Carrier: "yY"}
	if err := errors.Join(r.Validate(), s.Validate(), f.Validate()); err != nil || r.Carrier != "YY" || s.Carrier != "XX" || f.Carrier != "YY" {
		t.Fatalf("carriers %q %q %q, %v", r.Carrier, s.Carrier, f.Carrier, err)
	}
	for _, err := range []error{(&flightgraph.RouteFilter{Carrier: "y"}).Validate(), (&flightgraph.ScheduleFilter{Carrier: "y-"}).Validate(), (&flightgraph.FlightFilter{Carrier: "yyy"}).Validate()} {
		if flightgraph.ErrorCode(err) != flightgraph.ECodeBadFormat {
			t.Errorf("malformed carrier: %v, want %s", err, flightgraph.ECodeBadFormat)
		}
	}
}

// parseFlightIDReference is flightgraph.ParseFlightID as first written, for FuzzParseFlightID.
func parseFlightIDReference(s string) (flightgraph.FlightID, error) {
	bad := errors.New("bad")
	parts := strings.Split(s, "+")
	if len(parts) != 3 || len(parts[0]) != 8 {
		parts = strings.Split(s, " ")
		if len(parts) != 3 || len(parts[0]) != 8 {
			return flightgraph.FlightID{}, bad
		}
	}
	d, err := time.Parse("20060102", parts[0])
	if err != nil {
		return flightgraph.FlightID{}, bad
	}
	carrier := strings.ToUpper(parts[1])
	if !flightgraph.IsCarrierCode(carrier) {
		return flightgraph.FlightID{}, bad
	}
	num, suffix := parts[2], ""
	if n := len(num); n > 0 && num[n-1] >= 'A' && num[n-1] <= 'Z' {
		num, suffix = num[:n-1], num[n-1:]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || n > 9999 || len(num) > 4 {
		return flightgraph.FlightID{}, bad
	}
	return flightgraph.FlightID{Date: d.Format(flightgraph.DateLayout), Carrier: carrier, Number: n, Suffix: suffix}, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
