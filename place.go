package flightgraph

// Place is an origin or destination as a caller names it, resolved once: an airport code or a
// city code (PAR stands for CDG and ORY), with the airports it stands for. Filters carry places,
// not codes, so that a code is looked up once per request and the store matches airports.
type Place struct {
	Code string
	// Airports are the place's airports: the airport itself, or a city's; never empty.
	Airports []*Airport
}

// AirportCodes returns the codes of the place's airports; none for a nil place.
func (p *Place) AirportCodes() []string {
	if p == nil {
		return nil
	}
	codes := make([]string, len(p.Airports))
	for i, a := range p.Airports {
		codes[i] = a.Code
	}
	return codes
}

// TimeZone is the time zone of the place's local times: its airports share one.
func (p *Place) TimeZone() string { return p.Airports[0].TimeZone }
