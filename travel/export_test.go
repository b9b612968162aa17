package travel

import (
	"time"

	"github.com/flightgraph/flightgraph"
)

// SetCandidateBounds lowers the bounds of a search's candidate flights for a test, until restore.
func SetCandidateBounds(perDay, rows int) (restore func()) {
	d, r := maxCandidates, maxCandidateRows
	maxCandidates, maxCandidateRows = perDay, rows
	return func() { maxCandidates, maxCandidateRows = d, r }
}

// CargoHold returns the lower deck figures of an aircraft type: its volume in litres and its
// maximum payload in kg; ok is false for a type without any.
func CargoHold(typeCode string) (litres, payloadKg int, ok bool) {
	h, ok := holds[typeCode]
	return h.litres, h.payloadKg, ok
}

// BaseFareEuros is one adult's base fare in whole euros for a flight of km in a family, booked
// lead before departure, leaving on weekday, as the flight id's load prices it.
func BaseFareEuros(flightID string, km int, family *flightgraph.FareFamily, lead time.Duration, weekday time.Weekday) int64 {
	load := cabinLoad(flightID, family.Cabin, lead)
	adult, _ := flightgraph.PassengerTypeOf("type", "ADT")
	return baseFareCents(km, family, adult, lead, weekday, load) / 100
}
