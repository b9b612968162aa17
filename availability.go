package flightgraph

// FlightAvailability is one itinerary of a requested connection with the seats left in each cabin
// on each of its flights (travel.Service.FlightsAvailability): the seats an offers search of the
// same instant sees, by the same rule.
type FlightAvailability struct {
	Bound    Bound
	Segments []*SegmentAvailability
	// Cabins are the cabins on board of every flight, from Economy up, each with the fewest seats
	// left on any of them.
	Cabins []*CabinSeats
}

// SegmentAvailability is one flight of an itinerary with the seats left in its cabins.
type SegmentAvailability struct {
	Flight *Flight
	Legs   []*FlightLeg
	// OriginCity and DestinationCity are the city codes of the flight's ends.
	OriginCity, DestinationCity string
	// Cabins are the cabins on board of every leg, from Economy up.
	Cabins []*CabinSeats
}

// CabinSeats is the seats left in a cabin: the fewest of any leg, 0 on a cancelled flight, not
// capped (an offer shows at most MaxSeatsPerBooking). Sellable says whether the passengers asked
// for fit: an offers search gives offers in the cabin exactly when every flight's cabin is
// sellable.
type CabinSeats struct {
	Cabin     CabinClass
	SeatsLeft int
	Sellable  bool
}
