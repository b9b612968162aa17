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

// charges are one passenger's taxes and charges for a departure from an airport to a
// destination country on a flight of a haul: the airport's passenger service and security
// charges (airportCharges), the country's departure tax where it levies one (departureTaxes),
// and the carrier's surcharge. An infant on a lap pays a tenth of the surcharge only.
func charges(a *flightgraph.Airport, country *flightgraph.Country, near bool, haul string, cabin flightgraph.CabinClass, pt *flightgraph.PassengerType) []*flightgraph.PriceLine {
	var lines []*flightgraph.PriceLine
	if pt.Seat && country != nil {
		if c, ok := AirportCharges(country.Code); ok {
			psc := c.Far
			if near {
				psc = c.Near
			}
			lines = append(lines, &flightgraph.PriceLine{Code: "PSC", Name: fmt.Sprintf("Passenger service charge, %s (%s)", a.Name, a.Code), Amount: flightgraph.Euros(psc)})
			if c.Security > 0 {
				lines = append(lines, &flightgraph.PriceLine{Code: "SEC", Name: fmt.Sprintf("Security charge, %s (%s)", a.Name, a.Code), Amount: flightgraph.Euros(c.Security)})
			}
		}
		if tax, ok := DepartureTax(country.Code, haul, cabin); ok {
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

// departureTaxes are the passenger taxes on departures that countries of the network levy, per
// departing passenger, in euro cents, by haul (SHORT, MEDIUM, LONG: the distance bands below) and
// for Economy and for the cabins ahead of it. Countries that are not listed levy none. The rates
// are the published ones in force in 2025, rounded to the cent; SHORT stands for the first band,
// MEDIUM for the second and LONG for the last:
//
//   - NL: vliegbelasting (Wet belastingen op milieugrondslag, ch. IVb), EUR 29.40 per departing
//     passenger in 2025 whatever the distance or cabin (Belastingdienst, "Vliegbelasting").
//   - DE: Luftverkehrsteuer (LuftVStG § 11, rates from 1 May 2024): EUR 15.53, 39.34 and 70.83
//     for distance bands 1, 2 and 3, whatever the cabin.
//   - FR: taxe de solidarité sur les billets d'avion (loi de finances 2025, from 1 March 2025):
//     EUR 7.40 / 15.00 / 40.00 in Economy to Europe / intermediate / long haul; EUR 30 / 80 / 120
//     in the cabins ahead.
//   - GB: Air Passenger Duty 2025-26 (HMRC rates): GBP 13 / 90 / 94 reduced rate (Economy) and
//     GBP 28 / 244 / 253 standard rate (cabins ahead) for bands A, B and C, at EUR 1.17 per GBP.
//   - AT: Flugabgabe (FlugAbgG § 5, from 2021): EUR 12 per departing passenger.
//   - IT: addizionale comunale sui diritti d'imbarco (L. 350/2003 and successors): EUR 6.50 per
//     departing passenger outside Rome.
var departureTaxes = map[string]struct{ economy, ahead [3]int64 }{
	"NL": {[3]int64{2_940, 2_940, 2_940}, [3]int64{2_940, 2_940, 2_940}},
	"DE": {[3]int64{1_553, 3_934, 7_083}, [3]int64{1_553, 3_934, 7_083}},
	"FR": {[3]int64{740, 1_500, 4_000}, [3]int64{3_000, 8_000, 12_000}},
	"GB": {[3]int64{1_521, 10_530, 10_998}, [3]int64{3_276, 28_548, 29_601}},
	"AT": {[3]int64{1_200, 1_200, 1_200}, [3]int64{1_200, 1_200, 1_200}},
	"IT": {[3]int64{650, 650, 650}, [3]int64{650, 650, 650}},
}

// DepartureTax is the departure tax a passenger with a seat pays leaving a country on a flight of
// a haul in a cabin, in euro cents, from departureTaxes; ok is false where the country levies
// none.
func DepartureTax(country, haul string, cabin flightgraph.CabinClass) (cents int64, ok bool) {
	t, ok := departureTaxes[country]
	if !ok {
		return 0, false
	}
	band := map[string]int{"SHORT": 0, "MEDIUM": 1, "LONG": 2}[haul]
	if cabin == flightgraph.CabinEconomy {
		return t.economy[band], true
	}
	return t.ahead[band], true
}

// FareBand is a distance band of the fare reference: typical published one-way base fares in
// Economy (before taxes, charges and carrier surcharges), in whole euros, per fare family.
type FareBand struct {
	Name         string
	FromKm, ToKm int // ToKm excluded; 0 for no end
	// Ranges hold each Economy family's typical range (ECONOMY_LIGHT, ECONOMY_STANDARD,
	// ECONOMY_FLEX): the median fare the engine quotes over a year of booking leads falls in it.
	Ranges map[string][2]int64
}

// FareReference is the table the fare rules are held to (TestFaresFollowTheReference). The
// ranges are typical one-way Economy base fares (before taxes, charges and surcharges) booked
// weeks to months ahead, as the network carriers' route fare pages show them, 2024-2025; band by
// band, the pages are:
//
//   - under 800 km: KLM "Flights from Amsterdam to London" (klm.com, AMS-LHR), Air France
//     "Paris - Nice" (airfrance.com, ORY/CDG-NCE), Lufthansa "Frankfurt - Munich"
//     (lufthansa.com, FRA-MUC), British Airways "London to Paris" (britishairways.com, LHR-CDG);
//   - 800 to 2,000 km: KLM "Amsterdam - Barcelona" and "Amsterdam - Rome", Air France
//     "Paris - Lisbon", British Airways "London to Madrid";
//   - 2,000 to 4,500 km: KLM "Amsterdam - Tel Aviv" and "Amsterdam - Cairo", Air France
//     "Paris - Marrakech" and "Paris - Dakar", Lufthansa "Frankfurt - Dubai";
//   - 4,500 to 8,000 km: KLM "Amsterdam - New York", Air France "Paris - Montreal", Lufthansa
//     "Frankfurt - Chicago", British Airways "London to Boston";
//   - 8,000 km and more: KLM "Amsterdam - Tokyo" and "Amsterdam - Sao Paulo", Air France
//     "Paris - Los Angeles" and "Paris - Singapore".
//
// IATA's average passenger yield (about 8 to 9 US cents per revenue passenger kilometre, IATA
// Industry Statistics fact sheets 2024 and 2025) brackets the long-haul bands. A fare page shows
// the lowest fares of the coming months; the ranges are what those pages show for each family,
// not a tariff.
var FareReference = []FareBand{
	{"domestic and near Europe, under 800 km", 0, 800, map[string][2]int64{"ECONOMY_LIGHT": {40, 150}, "ECONOMY_STANDARD": {60, 200}, "ECONOMY_FLEX": {100, 350}}},
	{"Europe, 800 to 2,000 km", 800, 2_000, map[string][2]int64{"ECONOMY_LIGHT": {70, 250}, "ECONOMY_STANDARD": {90, 320}, "ECONOMY_FLEX": {150, 500}}},
	{"medium haul, 2,000 to 4,500 km", 2_000, 4_500, map[string][2]int64{"ECONOMY_LIGHT": {150, 450}, "ECONOMY_STANDARD": {200, 550}, "ECONOMY_FLEX": {300, 800}}},
	{"long haul, 4,500 to 8,000 km", 4_500, 8_000, map[string][2]int64{"ECONOMY_LIGHT": {300, 800}, "ECONOMY_STANDARD": {380, 950}, "ECONOMY_FLEX": {550, 1_400}}},
	{"ultra long haul, 8,000 km and more", 8_000, 0, map[string][2]int64{"ECONOMY_LIGHT": {400, 1_100}, "ECONOMY_STANDARD": {500, 1_300}, "ECONOMY_FLEX": {700, 1_900}}},
}
