package travel_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/flightgraph/flightgraph/travel"
)

// TestFaresFollowTheReference holds the fare rules to the public reference levels: in each
// distance band, the median one-way base fare of each Economy family, over flights, booking
// leads from a week to the booking horizon and every weekday, falls inside the reference table's
// range (travel.FareReference).
func TestFaresFollowTheReference(t *testing.T) {
	for _, band := range travel.FareReference {
		to := band.ToKm
		if to == 0 {
			to = 12_000
		}
		for code, want := range band.Ranges {
			fam, err := flightgraph.FareFamilyOf("family", code)
			if err != nil {
				t.Fatal(err)
			}
			var fares []int64
			for km := band.FromKm + 50; km < to; km += (to - band.FromKm) / 7 {
				for _, days := range []int{7, 14, 30, 60, 90, 150, 200, 270, 330} {
					for wd := time.Sunday; wd <= time.Saturday; wd++ {
						id := fmt.Sprintf("20270101+XX+%04d", km%9999+days)
						fares = append(fares, travel.BaseFareEuros(id, km, fam, time.Duration(days)*24*time.Hour, wd))
					}
				}
			}
			slices.Sort(fares)
			median := fares[len(fares)/2]
			t.Logf("%s, %s: median EUR %d, reference %d to %d", band.Name, code, median, want[0], want[1])
			if median < want[0] || median > want[1] {
				t.Errorf("%s, %s: median base fare EUR %d, outside the reference's %d to %d", band.Name, code, median, want[0], want[1])
			}
		}
	}
}

// TestTaxLinesFollowTheReference: every named departure tax line of an offer equals the
// reference table (travel.DepartureTax) for its country, haul and cabin, on departures from the
// Netherlands, France, Germany and the United Kingdom, short and long haul, in Economy and
// Business; and a country without a departure tax has no line.
func TestTaxLinesFollowTheReference(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		e := newEngine(t, dialect)
		ctx := context.Background()
		seen := map[string]int{}
		for _, c := range []struct{ origin, destination string }{
			{"AMS", "LHR"}, {"AMS", "JFK"}, {"CDG", "JFK"}, {"CDG", "LHR"}, {"LHR", "AMS"}, {"FRA", "AMS"}, {"MAD", "AMS"},
		} {
			offers, err := e.OffersFor(ctx, search(c.origin, c.destination, 3), 0)
			if err != nil {
				t.Fatalf("%s-%s: %v", c.origin, c.destination, err)
			}
			for _, o := range offers {
				for _, p := range o.Price.Passengers {
					for _, line := range p.Taxes {
						if !strings.HasPrefix(line.Name, "Departure tax") {
							continue
						}
						// Which leg the line is of: the first whose origin's country it names.
						found := false
						for _, seg := range o.Segments {
							for _, l := range seg.Legs {
								want, ok := travel.DepartureTax(line.Code, seg.Flight.Haul, o.Cabin)
								if ok && countryOf(t, e, l.OriginCode) == line.Code {
									found = true
									if line.Amount.String() != flightgraph.Euros(want).String() {
										t.Errorf("%s: %s %s %s is %s, the table says %s", o.ID, line.Code, seg.Flight.Haul, o.Cabin, line.Amount, flightgraph.Euros(want))
									}
								}
							}
						}
						if !found {
							t.Errorf("%s: a departure tax line %s %q of no departure's country", o.ID, line.Code, line.Name)
						}
						seen[line.Code]++
					}
				}
			}
			if c.origin == "MAD" && seen["ES"] > 0 {
				t.Errorf("Spain levies no departure tax, yet %d lines", seen["ES"])
			}
		}
		for _, code := range []string{"NL", "FR", "GB", "DE"} {
			if seen[code] == 0 {
				t.Errorf("no %s departure tax line in the offers", code)
			}
		}
		t.Logf("departure tax lines checked: %v", seen)
	})
}

// countryOf is an airport's country.
func countryOf(t *testing.T, e *engine, code string) string {
	t.Helper()
	a, err := e.Airport(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	return a.CountryCode
}
