package travel

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/flightgraph/flightgraph"
)

// The fare rules. Every figure is deterministic: a price follows from the flight, the cabin, the
// family, the passenger type and the instant it is quoted at, so the same offer costs the same in
// every operation and on every replica. Amounts are euro cents; each rule multiplies in
// thousandths and rounds once (flightgraph.ScalePerMille).

// Base fares of a cabin over a distance: a fixed part and a part per kilometre, in euro cents, for
// Economy; the other cabins are multiples of it.
const (
	fareFixedCents = 3_500
	fareCentsPerKm = 9
)

var cabinPerMille = map[flightgraph.CabinClass]int64{
	flightgraph.CabinEconomy:  1000,
	flightgraph.CabinPremium:  1900,
	flightgraph.CabinBusiness: 3800,
	flightgraph.CabinFirst:    6500,
}

// Booking lead: the fewer days before departure, the dearer.
func leadPerMille(days int) int64 {
	switch {
	case days <= 3:
		return 1500
	case days <= 7:
		return 1300
	case days <= 14:
		return 1150
	case days <= 30:
		return 1000
	case days <= 60:
		return 920
	}
	return 850
}

// The departure's local weekday: Fridays and Sundays are in demand, Tuesdays and Wednesdays not.
var weekdayPerMille = [7]int64{
	time.Sunday: 1080, time.Monday: 1000, time.Tuesday: 930, time.Wednesday: 930,
	time.Thursday: 1000, time.Friday: 1100, time.Saturday: 960,
}

// The cabin's load: an emptier flight sells cheaper (800‰ empty, 1300‰ full).
func loadPerMille(load int64) int64 { return 800 + load/2 }

// MinBookingLead is how long before departure a flight is still sold.
const MinBookingLead = 2 * time.Hour

// Connections at a hub take at least MinConnection and at most MaxConnection on the ground: a
// spoke's flights do not all meet a long-haul bank, so an overnight connection is sold as the
// network's ticketing rules allow (24 hours), after the quicker ones.
const (
	MinConnection = 50 * time.Minute
	MaxConnection = 24 * time.Hour
)

// finalLoad is the share of seats a flight has sold at departure, in thousandths (620–959): a
// property of the flight, so that every search sees the same.
func finalLoad(flightID string) int64 { return 620 + int64(hash(flightID)%340) }

// cabinLoad is the share of a cabin's seats sold at an instant, in thousandths: the flight's
// final load, of which 45% is sold 150 days or more before departure and the rest sells
// linearly until departure; the front cabins sell a little less.
func cabinLoad(flightID string, cabin flightgraph.CabinClass, until time.Duration) int64 {
	days := min(max(int64(until/(24*time.Hour)), 0), 150)
	load := finalLoad(flightID) * (1000 - 550*days/150) / 1000
	switch cabin {
	case flightgraph.CabinFirst:
		load -= 120
	case flightgraph.CabinBusiness:
		load -= 60
	case flightgraph.CabinPremium:
		load -= 30
	}
	return min(max(load, 0), 1000)
}

// seatsLeft is how many of a cabin's seats are unsold at that load.
func seatsLeft(seats int, load int64) int { return int(int64(seats) * (1000 - load) / 1000) }

// baseFareCents is one passenger's base fare for one flight: the cabin's fare over the distance,
// times the family, the booking lead, the weekday, the load and the passenger type, rounded to
// whole euros.
func baseFareCents(km int, family *flightgraph.FareFamily, pt *flightgraph.PassengerType, lead time.Duration, weekday time.Weekday, load int64) int64 {
	cents := flightgraph.ScalePerMille(fareFixedCents+fareCentsPerKm*int64(km),
		cabinPerMille[family.Cabin], family.PerMille, leadPerMille(int(lead/(24*time.Hour))), weekdayPerMille[weekday], loadPerMille(load), pt.PerMille)
	return flightgraph.ScalePerMille(cents, 10) * 100 // whole euros: cents/100 rounded, back in cents
}

// charges are one passenger's taxes and charges for a departure from an airport on a flight of a
// haul: the airport's passenger service and security charges, the country's departure tax where
// it levies one, and the carrier's surcharge. An infant on a lap pays a tenth of the surcharge
// only.
func charges(a *flightgraph.Airport, country *flightgraph.Country, haul string, cabin flightgraph.CabinClass, pt *flightgraph.PassengerType) []*flightgraph.PriceLine {
	var lines []*flightgraph.PriceLine
	if pt.Seat {
		psc := 800 + int64(hash("PSC"+a.Code)%2_200)
		if a.Hub {
			psc += 700
		}
		lines = append(lines,
			&flightgraph.PriceLine{Code: "PSC", Name: fmt.Sprintf("Passenger service charge, %s (%s)", a.Name, a.Code), Amount: flightgraph.Euros(psc)},
			&flightgraph.PriceLine{Code: "SEC", Name: fmt.Sprintf("Security charge, %s (%s)", a.Name, a.Code), Amount: flightgraph.Euros(250 + int64(hash("SEC"+a.Code)%900))})
		if country != nil && hash("TAX"+country.Code)%2 == 0 {
			tax := 750 + int64(hash("TAXR"+country.Code)%1_500)
			switch haul {
			case "MEDIUM":
				tax *= 2
			case "LONG":
				tax *= 4
			}
			if cabin != flightgraph.CabinEconomy {
				tax *= 2 // premium cabins pay the higher band, as most departure taxes do
			}
			lines = append(lines, &flightgraph.PriceLine{Code: country.Code, Name: fmt.Sprintf("Departure tax, %s", country.LabelEN), Amount: flightgraph.Euros(tax)})
		}
	}
	yq := map[string]int64{"SHORT": 1_200, "MEDIUM": 3_000, "LONG": 8_500}[haul]
	yq = flightgraph.ScalePerMille(yq, map[flightgraph.CabinClass]int64{flightgraph.CabinEconomy: 1000, flightgraph.CabinPremium: 1300,
		flightgraph.CabinBusiness: 1800, flightgraph.CabinFirst: 2200}[cabin])
	if !pt.Seat {
		yq = flightgraph.ScalePerMille(yq, 100)
	}
	return append(lines, &flightgraph.PriceLine{Code: "YQ", Name: "Carrier-imposed surcharge", Amount: flightgraph.Euros(yq)})
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}
