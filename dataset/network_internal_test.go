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

// TestAircraftFollowDemand: from each hub, the other hub and the big cities get larger aircraft
// than the small short-haul airports: per carrier, no big market gets fewer seats than any small
// one, and on average more.
func TestAircraftFollowDemand(t *testing.T) {
	n := buildNetwork(Options{Seed: 1, Scale: 1}, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	seats := map[string]int{}
	for _, c := range configurations {
		seats[c.Code] = seatsOf(c)
	}
	type sum struct{ seats, legs, min, max int }
	by := map[string]map[bool]*sum{} // carrier → big market → seats flown
	for _, l := range n.schedule {
		if !isHub(l.OriginCode) || haulOf(float64(l.DistanceKm)) != "SHORT" {
			continue
		}
		big := isHub(l.DestinationCode) || majorCities[l.DestinationCode]
		if by[l.CarrierCode] == nil {
			by[l.CarrierCode] = map[bool]*sum{true: {min: 1 << 30}, false: {min: 1 << 30}}
		}
		s := by[l.CarrierCode][big]
		n := seats[l.Configuration]
		s.seats, s.legs, s.min, s.max = s.seats+n, s.legs+1, min(s.min, n), max(s.max, n)
	}
	for carrier, m := range by {
		big, small := m[true], m[false]
		if big.legs == 0 || small.legs == 0 {
			t.Errorf("%s: %d legs to big markets, %d to small ones", carrier, big.legs, small.legs)
			continue
		}
		t.Logf("%s: big markets %d–%d seats (mean %d), small %d–%d (mean %d)", carrier, big.min, big.max, big.seats/big.legs, small.min, small.max, small.seats/small.legs)
		if big.min < small.max || big.seats/big.legs <= small.seats/small.legs {
			t.Errorf("%s: big markets get %d–%d seats, small ones %d–%d", carrier, big.min, big.max, small.min, small.max)
		}
	}
}
