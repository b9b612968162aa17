package flightgraph

// CargoCapacity is the belly cargo one flight can still take, for the internal Cargo API: on each
// leg, what its aircraft type's lower deck holds (volume) and may carry (payload), less what the
// passengers the flight is expected to carry take of it (their bags, and for the payload their own
// mass). A shipment flies the whole flight, so the flight's figures are the least of its legs'.
// travel.Service.CargoCapacity works it out; the rule is in travel/cargo.go.
type CargoCapacity struct {
	Flight *Flight
	// VolumeLitres and PayloadKg are what the flight can take end to end.
	VolumeLitres int
	PayloadKg    int
	Legs         []*CargoLeg
}

// CargoLeg is the belly cargo capacity of one leg.
type CargoLeg struct {
	Sequence          int
	OriginCode        string
	DestinationCode   string
	ConfigurationCode string
	AircraftTypeCode  string // IATA, e.g. 77W
	AircraftTypeName  string
	// Cancelled legs carry nothing: their capacity is zero.
	Cancelled bool
	// HoldVolumeLitres and MaxPayloadKg are the aircraft type's: its lower deck's volume
	// (containerised and bulk) and its maximum structural payload.
	HoldVolumeLitres int
	MaxPayloadKg     int
	// Seats are the configuration's; ExpectedPassengers those the flight is expected to carry
	// (its load at departure), with their ExpectedBags checked.
	Seats              int
	ExpectedPassengers int
	ExpectedBags       int
	// PassengerKg is the passengers' standard mass with their hand baggage; BaggageKg and
	// BaggageVolumeLitres are their checked bags'.
	PassengerKg         int
	BaggageKg           int
	BaggageVolumeLitres int
	// VolumeLitres and PayloadKg are what is left for cargo, never below zero.
	VolumeLitres int
	PayloadKg    int
}

// m3 is a volume in litres in cubic metres.
func m3(litres int) float64 { return float64(litres) / 1000 }

// VolumeM3 is the flight's cargo volume in cubic metres.
func (c *CargoCapacity) VolumeM3() float64 { return m3(c.VolumeLitres) }

// HoldVolumeM3 is the aircraft type's lower deck volume in cubic metres.
func (l *CargoLeg) HoldVolumeM3() float64 { return m3(l.HoldVolumeLitres) }

// BaggageVolumeM3 is the checked bags' volume in cubic metres.
func (l *CargoLeg) BaggageVolumeM3() float64 { return m3(l.BaggageVolumeLitres) }

// VolumeM3 is the leg's cargo volume in cubic metres.
func (l *CargoLeg) VolumeM3() float64 { return m3(l.VolumeLitres) }
