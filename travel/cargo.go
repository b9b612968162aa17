package travel

import (
	"context"
	"slices"

	"github.com/flightgraph/flightgraph"
)

// The cargo rule. A leg's belly capacity is its aircraft type's lower deck (holds below) less what
// the flight's expected passengers take of it:
//
//   - passengers: each cabin's seats times the cabin's load at departure (cabinLoad, the load the
//     offers engine sells from), rounded down;
//   - their checked bags: bagsPerMille of a passenger by haul and cabin, rounded to whole bags
//     per cabin, each planned at its allowance's size (checkedBagCm, 112 litres) and weight
//     (checkedKg: 23 kg, 32 in Business and First): the most a bag may be, so that what is
//     offered to cargo is not taken back at check-in;
//   - for the payload also the passengers themselves, at passengerKg each.
//
// Volume and payload left never go below zero; a cancelled leg has none. A flight's capacity is
// the least of its legs', since a shipment flies all of them. Every figure follows from the
// flight, so the answer is the same on every replica and at every time of asking.

// hold is an aircraft type's lower deck: the volume of its holds, containerised and bulk, in
// litres, and its maximum structural payload (maximum zero-fuel weight less a typical operating
// empty weight), in kg.
type hold struct{ litres, payloadKg int }

// holds are the lower decks of the fleet's types, by IATA type code: the manufacturers' published
// figures, rounded. A type without an entry has no cargo figures (FLIGHT_404.002);
// TestCargoHoldsCoverTheFleet holds the data set's types to having one.
var holds = map[string]hold{
	"E90": {22_500, 12_700},  // Embraer 190
	"E95": {25_600, 13_600},  // Embraer 195
	"295": {27_900, 16_150},  // Embraer 195-E2
	"223": {23_700, 18_700},  // Airbus A220-300
	"319": {27_600, 17_700},  // Airbus A319
	"320": {37_400, 19_900},  // Airbus A320
	"73W": {27_300, 17_550},  // Boeing 737-700
	"32N": {37_400, 20_000},  // Airbus A320neo
	"321": {51_700, 25_300},  // Airbus A321
	"73H": {44_000, 21_300},  // Boeing 737-800
	"332": {136_000, 49_400}, // Airbus A330-200: 26 LD3 and bulk
	"333": {162_800, 45_600}, // Airbus A330-300: 32 LD3 and bulk
	"359": {172_400, 53_300}, // Airbus A350-900: 36 LD3 and bulk
	"772": {160_100, 56_900}, // Boeing 777-200ER: 32 LD3 and bulk
	"77W": {201_600, 69_900}, // Boeing 777-300ER: 44 LD3 and bulk
	"789": {172_500, 52_550}, // Boeing 787-9: 36 LD3 and bulk
	"781": {191_900, 57_300}, // Boeing 787-10: 40 LD3 and bulk
}

// passengerKg is a passenger's standard mass with hand baggage (EASA's standard adult mass).
const passengerKg = 84

// checkedBagLitres is the volume of one checked bag at its allowance's size.
var checkedBagLitres = checkedBagCm[0] * checkedBagCm[1] * checkedBagCm[2] / 1000

// bagsPerMille is how many bags a thousand passengers of a cabin check on a flight of a haul: more
// the longer the trip, and more in the cabins whose fares include two.
func bagsPerMille(haul string, c flightgraph.CabinClass) int {
	n := map[string]int{"SHORT": 600, "MEDIUM": 800, "LONG": 1_100}[haul]
	switch c {
	case flightgraph.CabinBusiness, flightgraph.CabinFirst:
		n += 500
	case flightgraph.CabinPremium:
		n += 200
	}
	return n
}

// CargoCapacity returns the belly cargo capacity of a flight by id, the input named flightId. It
// returns ECodeBadFormat for a malformed id, ECodeFlightNotFound for an unknown flight,
// ECodeFlightConfiguration when a leg's aircraft, or its type's cargo figures, are unknown, and
// ECodeCabinClassUnknown when its cabins are. Four round trips: the flight, its legs, their
// aircraft and their cabins.
func (s *Service) CargoCapacity(ctx context.Context, id string) (*flightgraph.CargoCapacity, error) {
	fid, err := flightgraph.ParseFlightID("flightId", id)
	if err != nil {
		return nil, err
	}
	f, err := one(ctx, s.shop().FlightsByIDs, fid.String(), flightgraph.ParamErrorf(flightgraph.ECodeFlightNotFound, "flightId", "flight %s is not found", fid))
	if err != nil {
		return nil, err
	}
	legs, err := s.shop().LegsByFlightIDs(ctx, []string{f.ID})
	if err != nil {
		return nil, err
	}
	var configs []string
	for _, l := range legs[0] {
		if !slices.Contains(configs, l.ConfigurationCode) {
			configs = append(configs, l.ConfigurationCode)
		}
	}
	aircraft, err := s.Aircraft.AircraftByConfigurations(ctx, configs)
	if err != nil {
		return nil, err
	}
	cabins, err := s.Aircraft.CabinsByConfigurations(ctx, configs)
	if err != nil {
		return nil, err
	}
	c := &flightgraph.CargoCapacity{Flight: f}
	for _, l := range legs[0] {
		i := slices.Index(configs, l.ConfigurationCode)
		leg, err := cargoLeg(f, l, aircraft[i], cabins[i])
		if err != nil {
			return nil, err
		}
		c.Legs = append(c.Legs, leg)
	}
	if len(c.Legs) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeFlightConfiguration, "flightId", "flight %s has no legs to carry cargo on", f.ID)
	}
	c.VolumeLitres, c.PayloadKg = c.Legs[0].VolumeLitres, c.Legs[0].PayloadKg
	for _, l := range c.Legs[1:] {
		c.VolumeLitres, c.PayloadKg = min(c.VolumeLitres, l.VolumeLitres), min(c.PayloadKg, l.PayloadKg)
	}
	return c, nil
}

// cargoLeg applies the cargo rule to one leg of f flown by aircraft a with its cabins.
func cargoLeg(f *flightgraph.Flight, l *flightgraph.FlightLeg, a *flightgraph.Aircraft, cabins []*flightgraph.Cabin) (*flightgraph.CargoLeg, error) {
	if a == nil {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeFlightConfiguration, "flightId",
			"the aircraft configuration %s of leg %d of %s is not found", l.ConfigurationCode, l.Sequence, f.ID)
	}
	h, ok := holds[a.TypeCode]
	if !ok {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeFlightConfiguration, "flightId",
			"aircraft type %s (%s) of leg %d of %s has no cargo figures", a.TypeCode, a.TypeName, l.Sequence, f.ID)
	}
	if len(cabins) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeCabinClassUnknown, "flightId",
			"the cabins of %s, which flies leg %d of %s, cannot be determined", a.Configuration, l.Sequence, f.ID)
	}
	leg := &flightgraph.CargoLeg{Sequence: l.Sequence, OriginCode: l.OriginCode, DestinationCode: l.DestinationCode,
		ConfigurationCode: a.Configuration, AircraftTypeCode: a.TypeCode, AircraftTypeName: a.TypeName, Cancelled: l.Cancelled,
		HoldVolumeLitres: h.litres, MaxPayloadKg: h.payloadKg}
	for _, c := range cabins {
		leg.Seats += c.Seats
		if l.Cancelled {
			continue
		}
		pax := int(int64(c.Seats) * cabinLoad(f.ID, c.CabinClass, 0) / 1000)
		bags := (pax*bagsPerMille(f.Haul, c.CabinClass) + 500) / 1000
		leg.ExpectedPassengers += pax
		leg.ExpectedBags += bags
		leg.BaggageKg += bags * int(checkedKg(c.CabinClass))
	}
	if l.Cancelled {
		return leg, nil
	}
	leg.PassengerKg = leg.ExpectedPassengers * passengerKg
	leg.BaggageVolumeLitres = leg.ExpectedBags * checkedBagLitres
	leg.VolumeLitres = max(h.litres-leg.BaggageVolumeLitres, 0)
	leg.PayloadKg = max(h.payloadKg-leg.PassengerKg-leg.BaggageKg, 0)
	return leg, nil
}
