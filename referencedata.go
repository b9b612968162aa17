package flightgraph

import "time"

// DefaultMarket is the market of a request whose point of sale names none.
const DefaultMarket = "NL"

// Market is the country a point of sale sells in: its Country, DefaultMarket when it has none.
func (pos PointOfSale) Market() string {
	if pos.Country == "" {
		return DefaultMarket
	}
	return pos.Country
}

// ReferenceData is what an offers search form needs of a market (travel.Service.ReferenceData):
// the countries of the network with the airports they fly from and to, the cabins and their fare
// families, the passenger types with their codes, and the currencies prices are given in.
type ReferenceData struct {
	// Market is the point of sale's country (DefaultMarket when it names none), Currency its
	// currency: the one offers are priced in unless a search names another.
	Market   string
	Currency string
	// Countries are the countries of the network that have airports, by code.
	Countries      []*MarketCountry
	Cabins         []CabinClass
	FareFamilies   []*FareFamily
	PassengerTypes []*PassengerType
	Currencies     []Currency
	// MaxSeats is the most passengers with a seat a search takes, MinAdults the fewest adults
	// that accompanied types need.
	MaxSeats  int
	MinAdults int
}

// MarketCountry is a country of the network: its airports, the one a search form starts from
// (its hub, else its first), and the airports its airports fly to nonstop.
type MarketCountry struct {
	*Country
	DefaultAirport *Airport
	Origins        []*Airport
	Destinations   []*Airport
}

// Zone is a world area that deals group destinations by: a country's AreaCode.
type Zone struct {
	Code string
	Labels
}

// Zones are the network's world areas.
var Zones = []*Zone{
	{"N", Labels{"Netherlands", "Pays-Bas", "Nederland"}},
	{"E", Labels{"Europe", "Europe", "Europa"}},
	{"A", Labels{"Americas", "Amériques", "Amerika"}},
	{"F", Labels{"Africa", "Afrique", "Afrika"}},
	{"M", Labels{"Middle East", "Moyen-Orient", "Midden-Oosten"}},
	{"S", Labels{"Asia", "Asie", "Azië"}},
	{"P", Labels{"Pacific", "Pacifique", "Oceanië"}},
}

// ZoneOf returns the zone of an area code; a zone of its own, labelled with the code, for one the
// list lacks.
func ZoneOf(areaCode string) *Zone {
	for _, z := range Zones {
		if z.Code == areaCode {
			return z
		}
	}
	return &Zone{Code: areaCode, Labels: Labels{areaCode, areaCode, areaCode}}
}

// LabelledPlace is a place as answers show it: with the city of its (first) airport and that
// city's country, which label it.
type LabelledPlace struct {
	*Place
	City    *City
	Country *Country
}

// IsAirport reports whether the place is an airport named by its own code rather than a city.
func (p *Place) IsAirport() bool {
	return p.Airports[0].Code == p.Code && p.Airports[0].CityCode != p.Code
}

// PlaceType is CITY or AIRPORT, as the original's reference data types a place.
func (p *Place) PlaceType() string {
	if p.IsAirport() {
		return "AIRPORT"
	}
	return "CITY"
}

// SearchContext is what a search between two places may ask for, from where it is sold
// (travel.Service.SearchContext): the point of sale and its currency, the days that can be
// searched, the ways to travel (nonstop, through which hubs), the cabins and their families, and
// the passenger types with their rules.
type SearchContext struct {
	Market, Currency, Language, Host string
	Origin, Destination              *LabelledPlace
	// DepartureDate is the date asked about, "" for none: ConnectionOption.Itineraries and Cabins
	// then follow the network's routes rather than that day's flights.
	DepartureDate string
	// FirstDate and LastDate bound the departure dates a search or a calendar takes.
	FirstDate, LastDate string
	Connections         []*ConnectionOption
	// Cabins are those on board (on the date, with seats left) of some itinerary, from Economy up;
	// without a date, every cabin.
	Cabins         []CabinClass
	FareFamilies   []*FareFamily
	PassengerTypes []*PassengerType
	MaxSeats       int
	MinAdults      int
	OfferValidity  time.Duration
}

// ConnectionOption is one way from the origin to the destination: nonstop, or with one stop at a
// hub.
type ConnectionOption struct {
	// Via is the hub of a one-stop option, nil for nonstop.
	Via *Airport
	// Carriers are the codes of the carriers flying its routes.
	Carriers []string
	// Itineraries counts the option's itineraries on the context's date, nil without a date.
	Itineraries *int
}

// Stops is the option's number of stops.
func (c *ConnectionOption) Stops() int {
	if c.Via == nil {
		return 0
	}
	return 1
}

// DefaultAirportCode is the code of the country's default airport.
func (c *MarketCountry) DefaultAirportCode() string { return c.DefaultAirport.Code }

// OriginCodes are the codes of the country's airports.
func (c *MarketCountry) OriginCodes() []string { return airportCodes(c.Origins) }

// DestinationCodes are the codes of the airports the country's airports fly to nonstop.
func (c *MarketCountry) DestinationCodes() []string { return airportCodes(c.Destinations) }

func airportCodes(airports []*Airport) []string {
	out := make([]string, len(airports))
	for i, a := range airports {
		out[i] = a.Code
	}
	return out
}

// Localized is the place's label in a language (English when none): its city's.
func (p *LabelledPlace) Localized(language *Language) string { return p.City.Localized(language) }

// OfferValidityISO is OfferValidity in ISO 8601.
func (sc *SearchContext) OfferValidityISO() string { return ISODuration(sc.OfferValidity) }
