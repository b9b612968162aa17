package dataset

import (
	"sort"
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

// minuteOfDay is the minutes after midnight of a local "15:04" time.
func minuteOfDay(hhmm string) int {
	h, m := clock(hhmm)
	return h*60 + m
}

// TestHubBanks: each hub works in banks as the hub carriers schedule them. Nearly every departure
// from the hub leaves within half an hour of one of the day's banks, and from each of the big
// cities the carrier serves, a spoke flight arrives at the hub in time for every daily long-haul
// departure with a connection of 50 minutes to two hours. It logs the median connection from a
// spoke onto the hub's flight to New York. It fails on the network whose short-haul flights left
// evenly over fifteen hours.
func TestHubBanks(t *testing.T) {
	n := buildNetwork(Options{Seed: 1, Scale: 1}, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	for _, c := range n.carriers {
		hub := c.HubCode
		near, all := 0, 0
		var longHaul []int // departure minutes of the daily long-haul flights
		arrivals := map[string][]int{}
		for _, l := range n.schedule {
			if l.CarrierCode != c.Code {
				continue
			}
			if l.OriginCode == hub {
				all++
				dep := minuteOfDay(l.DepartureLocal)
				for _, b := range banks {
					if abs(dep-b) <= 30 {
						near++
						break
					}
				}
				if haulOf(float64(l.DistanceKm)) == "LONG" && l.Days == "1234567" && l.Sequence == 1 {
					longHaul = append(longHaul, dep)
				}
			}
			if l.DestinationCode == hub && haulOf(float64(l.DistanceKm)) != "LONG" {
				arrivals[l.OriginCode] = append(arrivals[l.OriginCode], minuteOfDay(l.ArrivalLocal))
			}
		}
		share := float64(near) / float64(all)
		t.Logf("%s at %s: %d of %d departures (%.0f%%) within 30 minutes of a bank; %d daily long-haul departures", c.Code, hub, near, all, 100*share, len(longHaul))
		if share < 0.9 {
			t.Errorf("%s at %s: only %.0f%% of the departures leave within 30 minutes of a bank", c.Code, hub, 100*share)
		}
		// connection is the shortest connection of at least 50 minutes from an arrival from spoke
		// onto a departure at minute dep, the day before counted.
		connection := func(spoke string, dep int) int {
			best := 1 << 30
			for _, a := range arrivals[spoke] {
				best = min(best, ((dep-a-50)%1440+1440)%1440+50)
			}
			return best
		}
		// The sample: the big cities near enough (up to 1,200 km, two hours' block) for their first
		// flight of the day, after the night curfew, to reach the first long-haul bank. The farther
		// ones are counted and logged.
		pairs, missing, far, farMissing := 0, 0, 0, 0
		for spoke := range arrivals {
			if !majorCities[spoke] {
				continue
			}
			near := c.HubCode != spoke && distanceKm(airportOf(spoke).Latitude, airportOf(spoke).Longitude, airportOf(hub).Latitude, airportOf(hub).Longitude) <= 1200
			for _, dep := range longHaul {
				m := connection(spoke, dep)
				if !near {
					far++
					if m > 120 {
						farMissing++
					}
					continue
				}
				pairs++
				if m > 120 {
					missing++
					t.Errorf("%s at %s: from %s the best connection onto the %02d:%02d long-haul departure takes %d minutes", c.Code, hub, spoke, dep/60, dep%60, m)
				}
			}
		}
		t.Logf("%s at %s: %d of %d connections from near big cities onto daily long-haul flights take over two hours; from far ones %d of %d", c.Code, hub, missing, pairs, farMissing, far)
		for _, l := range n.schedule {
			if l.CarrierCode != c.Code || l.OriginCode != hub || l.DestinationCode != "JFK" {
				continue
			}
			dep := minuteOfDay(l.DepartureLocal)
			var times []int
			for spoke := range arrivals {
				times = append(times, connection(spoke, dep))
			}
			sort.Ints(times)
			t.Logf("%s at %s: onto %s%d to JFK at %s, the median connection from %d spokes is %d minutes (quartiles %d and %d)",
				c.Code, hub, c.Code, l.FlightNumber, l.DepartureLocal, len(times), times[len(times)/2], times[len(times)/4], times[3*len(times)/4])
		}
	}
}

// airportOf is the airport row of code.
func airportOf(code string) airportRow {
	for _, a := range airports {
		if a.Code == code {
			return a
		}
	}
	panic("no airport " + code)
}

// abs is the absolute value of x.
func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
