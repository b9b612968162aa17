package dataset

// countryRow is one country of the demo network. Labels are kept in English (Name, upper case as
// the original APIs show them), French and Dutch so the REST layer can answer Accept-Language.
type countryRow struct {
	Code     string // ISO 3166-1 alpha-2, e.g. "NL"
	Name     string // English name in upper case, e.g. "NETHERLANDS"
	NameEN   string // English label in title case, e.g. "Netherlands"
	NameFR   string // French label, e.g. "Pays-Bas"
	NameNL   string // Dutch label, e.g. "Nederland"
	AreaCode string // one-letter world area: "N" (Netherlands/home), "E" (Europe), "A" (Americas), "F" (Africa), "M" (Middle East), "S" (Asia), "P" (Pacific/Oceania)
	Currency string // ISO 4217, e.g. "EUR"
	Euro     bool   // uses the euro
	EU       bool   // EU member state
	Schengen bool   // in the Schengen area
}

// cityRow is a city or metropolitan area, keyed by its IATA metropolitan or city code.
type cityRow struct {
	Code    string // IATA city/metropolitan code, e.g. "PAR", "LON", "AMS"
	Name    string // English name in upper case, e.g. "PARIS"
	NameEN  string // title case, e.g. "Paris"
	NameFR  string // French label, e.g. "Londres"
	NameNL  string // Dutch label, e.g. "Parijs"
	Country string // ISO country code
}

// airportRow is one real airport.
type airportRow struct {
	Code      string  // IATA airport code, e.g. "CDG"
	Name      string  // official name, e.g. "Paris Charles de Gaulle Airport"
	City      string  // IATA city/metropolitan code, e.g. "PAR"
	Latitude  float64 // decimal degrees, north positive
	Longitude float64 // decimal degrees, east positive
	TimeZone  string  // IANA zone, e.g. "Europe/Paris"
}
