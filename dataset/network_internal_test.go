package dataset

import (
	"testing"
	"time"
)

// TestNoRouteTooShortToFly: no scheduled leg is shorter than an airline would fly, and no domestic
// one shorter than the train takes (noAirRoute); the shortest routes left are real cross-border
// hops. It fails on the network that scheduled AMS–Rotterdam (45 km).
func TestNoRouteTooShortToFly(t *testing.T) {
	n := buildNetwork(Options{Seed: 1, Scale: 1}, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	country := func(airport string) string {
		for _, a := range airports {
			if a.Code == airport {
				return countryOfCity(a.City)
			}
		}
		t.Fatalf("no airport %s", airport)
		return ""
	}
	shortest := 1 << 30
	for _, l := range n.schedule {
		domestic := country(l.OriginCode) == country(l.DestinationCode)
		if l.DistanceKm < minAirRouteKm || domestic && l.DistanceKm < minDomesticKm {
			t.Errorf("%s %d %s-%s is scheduled over %d km (domestic %v)", l.CarrierCode, l.FlightNumber, l.OriginCode, l.DestinationCode, l.DistanceKm, domestic)
		}
		shortest = min(shortest, l.DistanceKm)
	}
	t.Logf("the shortest scheduled leg: %d km", shortest)
}

// TestFrequencyFollowsDemand: from each hub, a big city gets more flights a day than any small one.
func TestFrequencyFollowsDemand(t *testing.T) {
	n := buildNetwork(Options{Seed: 1, Scale: 1}, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	for _, r := range n.routes {
		if r.Haul != "SHORT" || !isHub(r.OriginCode) || isHub(r.DestinationCode) {
			continue
		}
		daily := float64(r.WeeklyFlights) / 7
		if majorCities[r.DestinationCode] && daily < 7.9 || !majorCities[r.DestinationCode] && daily > 8.1 {
			t.Errorf("%s %s-%s: %.1f flights a day (a big city: %v)", r.CarrierCode, r.OriginCode, r.DestinationCode, daily, majorCities[r.DestinationCode])
		}
	}
}
