package dataset

// carrierRow is one of the two neutral demo carriers, each based at one hub. Its code is also a
// valid svc-travel-host value.
type carrierRow struct {
	Code string // two-character airline designator, e.g. "XX"
	Name string
	Hub  string // IATA airport code of its hub
}

// aircraftTypeRow is an aircraft type of the demo fleet.
type aircraftTypeRow struct {
	Code      string // IATA type code, e.g. "772"
	ICAO      string // ICAO type designator, e.g. "B772"
	Name      string // e.g. "BOEING 777-200/200 ER"
	Haul      string // "SH", "MH" or "LH": the hauls it is flown on
	SpeedKmh  int    // typical block speed used for block times
	RangeKm   int    // routes longer than this are not given to it
	WifiShare int    // percent of the type's configurations that have wifi (informative)
}

// configurationRow is an aircraft configuration version (ACV): a cabin layout of one type for one
// carrier. Code is the ACV (three characters, e.g. "77S", "332", "E90"), unique over all carriers.
type configurationRow struct {
	Code    string
	Type    string // aircraftTypeRow.Code
	Carrier string // carrierRow.Code
	Name    string // marketing name of the layout, e.g. "777-200 Long-haul 2024 cabin"
	Wifi    bool
	Cabins  []cabinRow
}

// cabinRow is one cabin of a configuration.
type cabinRow struct {
	Class   string // "ECONOMY", "PREMIUM", "BUSINESS" or "FIRST"
	Seats   int
	Product string // productRow.Code: the cabin product whose amenities this cabin offers
}

// productRow is a cabin product: the seat, meal and service offer of one cabin class on one kind of
// aircraft, shared by every configuration that installs it.
type productRow struct {
	Code      string // e.g. "LH-BUSINESS-2024"
	Class     string // cabin class
	Amenities []amenityRow
}

// amenityRow is one amenity of a cabin product, with rich text content.
type amenityRow struct {
	Category    string // "seat", "meal", "entertainment", "connectivity" or "comfort"
	Feature     string // on-board feature code: "SEAT", "FLATBED", "POWER", "USB", "IFE", "WIFI", "MEALS", "BAR", "AMENITY_KIT", "LOUNGE", "PRIORITY", ...
	Name        string // short title
	Description string // rich text: 1-3 sentences of marketing-quality copy, may contain simple Markdown (**bold**, lists)
	Weight      int    // business weight: higher sorts first
}
