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

// TestTaxLinesFollowTheReference holds every named tax and charge line to the tables: a
// departure tax line equals departureTaxes for its departure's country, haul and cabin; a
// passenger service charge line equals airportCharges for its airport's country and whether the
// destination is near (travel.Near); a security charge line equals the table's, and there is
// none where the table says the passenger charge includes security. Every country of the
// network has a row with its source named.
func TestTaxLinesFollowTheReference(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		e := newEngine(t, dialect)
		ctx := context.Background()
		countries, err := e.Places.Countries(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byCode := map[string]*flightgraph.Country{}
		for _, c := range countries {
			byCode[c.Code] = c
			if row, ok := travel.AirportCharges(c.Code); !ok || row.Source == "" || row.Near <= 0 || row.Far < row.Near {
				t.Errorf("country %s: airport charges row %+v (want one, with a source, near ≤ far)", c.Code, row)
			}
		}
		seen := map[string]int{}
		for _, c := range []struct{ origin, destination string }{
			{"AMS", "LHR"}, {"AMS", "JFK"}, {"CDG", "JFK"}, {"CDG", "LHR"}, {"LHR", "AMS"}, {"FRA", "AMS"}, {"MAD", "AMS"}, {"JFK", "AMS"}, {"DUB", "CDG"},
		} {
			offers, err := e.OffersFor(ctx, search(c.origin, c.destination, 3), 0)
			if err != nil {
				t.Fatalf("%s-%s: %v", c.origin, c.destination, err)
			}
			for _, o := range offers {
				// The departures of the offer, by their airport's code.
				type departure struct {
					country *flightgraph.Country
					near    bool
					haul    string
				}
				departures := map[string]departure{}
				for _, seg := range o.Segments {
					for _, l := range seg.Legs {
						from, to := byCode[countryOf(t, e, l.OriginCode)], byCode[countryOf(t, e, l.DestinationCode)]
						departures[l.OriginCode] = departure{from, travel.Near(from, to), seg.Flight.Haul}
					}
				}
				for _, p := range o.Price.Passengers {
					security := map[string]bool{}
					for _, line := range p.Taxes {
						seen[line.Code]++
						switch {
						case line.Code == "PSC" || line.Code == "SEC":
							code := line.Name[strings.LastIndex(line.Name, "(")+1 : len(line.Name)-1]
							d, ok := departures[code]
							if !ok {
								t.Fatalf("%s: %s line %q of no departure of the offer", o.ID, line.Code, line.Name)
							}
							row, _ := travel.AirportCharges(d.country.Code)
							want := row.Security
							if line.Code == "PSC" {
								want = row.Far
								if d.near {
									want = row.Near
								}
							} else {
								security[code] = true
							}
							if line.Amount.String() != flightgraph.Euros(want).String() {
								t.Errorf("%s: %s %q is %s, the table says %s (near %v)", o.ID, line.Code, line.Name, line.Amount, flightgraph.Euros(want), d.near)
							}
						case strings.HasPrefix(line.Name, "Departure tax"):
							found := false
							for _, d := range departures {
								if d.country.Code != line.Code {
									continue
								}
								found = true
								want, _ := travel.DepartureTax(line.Code, d.haul, o.Cabin)
								if line.Amount.String() != flightgraph.Euros(want).String() {
									t.Errorf("%s: %s %s %s is %s, the table says %s", o.ID, line.Code, d.haul, o.Cabin, line.Amount, flightgraph.Euros(want))
								}
							}
							if !found {
								t.Errorf("%s: a departure tax line %s %q of no departure's country", o.ID, line.Code, line.Name)
							}
						}
					}
					if p.Type != "INF" {
						for code, d := range departures {
							if row, _ := travel.AirportCharges(d.country.Code); (row.Security > 0) != security[code] {
								t.Errorf("%s %s: security line from %s %v, the table's security charge %d", o.ID, p.Type, code, security[code], row.Security)
							}
						}
					}
				}
			}
			if c.origin == "MAD" && seen["ES"] > 0 {
				t.Errorf("Spain levies no departure tax, yet %d lines", seen["ES"])
			}
		}
		for _, code := range []string{"NL", "FR", "GB", "DE", "PSC", "SEC"} {
			if seen[code] == 0 {
				t.Errorf("no %s line in the offers", code)
			}
		}
		t.Logf("tax and charge lines checked: %v", seen)
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
