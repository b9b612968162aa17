package travel

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// marketCurrency is the currency of the point of sale's market: its own when it sells in a
// country of the network, DefaultMarket's otherwise, else euros.
func (s *Service) marketCurrency(ctx context.Context, pos flightgraph.PointOfSale) (string, error) {
	if pos.Currency != "" {
		return pos.Currency, nil
	}
	c, err := s.MarketCountry(ctx, pos.Market())
	if err != nil || c == nil || c.Currency == "" {
		return flightgraph.PricingCurrency, err
	}
	if _, err := flightgraph.CurrencyOf("currency", c.Currency); err != nil {
		return flightgraph.PricingCurrency, nil
	}
	return c.Currency, nil
}

// ReferenceData is the offers reference data of the request's market (flightgraph.ReferenceData):
// every country of the network that has airports, each with its airports as origins, its default
// airport (its hub, else its first) and the airports they fly to nonstop; the cabins, fare
// families, passenger types and currencies that searches take. It reads the reference snapshot
// under serve, so it costs no round trip there.
func (s *Service) ReferenceData(ctx context.Context) (*flightgraph.ReferenceData, error) {
	pos := flightgraph.PointOfSaleFromContext(ctx)
	cur, err := s.marketCurrency(ctx, pos)
	if err != nil {
		return nil, err
	}
	countries, err := s.Places.Countries(ctx)
	if err != nil {
		return nil, err
	}
	airports, err := s.Places.Airports(ctx)
	if err != nil {
		return nil, err
	}
	routes, err := s.Network.AllRoutes(ctx)
	if err != nil {
		return nil, err
	}
	byCode, byCountry := map[string]*flightgraph.Airport{}, map[string][]*flightgraph.Airport{}
	for _, a := range airports {
		byCode[a.Code] = a
		byCountry[a.CountryCode] = append(byCountry[a.CountryCode], a)
	}
	dests := map[string][]*flightgraph.Airport{}
	for _, rt := range routes {
		from, to := byCode[rt.OriginCode], byCode[rt.DestinationCode]
		if from != nil && to != nil && !slices.Contains(dests[from.CountryCode], to) {
			dests[from.CountryCode] = append(dests[from.CountryCode], to)
		}
	}
	out := &flightgraph.ReferenceData{Market: pos.Market(), Currency: cur, Cabins: cabinsUp(flightgraph.CabinClasses),
		FareFamilies: flightgraph.FareFamilies, PassengerTypes: flightgraph.PassengerTypes, Currencies: flightgraph.Currencies(),
		MaxSeats: flightgraph.MaxSeatsPerBooking, MinAdults: flightgraph.MinAdults}
	for _, c := range countries {
		aps := byCountry[c.Code]
		if len(aps) == 0 {
			continue
		}
		mc := &flightgraph.MarketCountry{Country: c, DefaultAirport: aps[0], Origins: aps, Destinations: dests[c.Code]}
		if i := slices.IndexFunc(aps, func(a *flightgraph.Airport) bool { return a.Hub }); i >= 0 {
			mc.DefaultAirport = aps[i]
		}
		slices.SortFunc(mc.Destinations, func(a, b *flightgraph.Airport) int { return strings.Compare(a.Code, b.Code) })
		out.Countries = append(out.Countries, mc)
	}
	return out, nil
}

// DealsReference is the deals reference data of the request's market: its cities that flights
// leave from, each with the cities it reaches nonstop or with one stop through a hub on the
// network's routes, by zone; the months, from this one to DealMonths-1 ahead, that have flights
// from those cities; and the deal types. Places come from the snapshot under serve; the months
// cost one round trip each, at most DealMonths, whatever the number of flights (the first flight
// of each month is read, if any).
func (s *Service) DealsReference(ctx context.Context) (*flightgraph.DealsReference, error) {
	pos := flightgraph.PointOfSaleFromContext(ctx)
	cur, err := s.marketCurrency(ctx, pos)
	if err != nil {
		return nil, err
	}
	airports, err := s.Places.Airports(ctx)
	if err != nil {
		return nil, err
	}
	routes, err := s.Network.AllRoutes(ctx)
	if err != nil {
		return nil, err
	}
	hubs, err := s.hubCodes(ctx)
	if err != nil {
		return nil, err
	}
	byCode := map[string]*flightgraph.Airport{}
	for _, a := range airports {
		byCode[a.Code] = a
	}
	to := map[string][]string{} // airport → the airports it flies to nonstop
	for _, rt := range routes {
		to[rt.OriginCode] = append(to[rt.OriginCode], rt.DestinationCode)
	}
	var cities []string
	for _, a := range airports {
		if a.CountryCode == pos.Market() && len(to[a.Code]) > 0 && !slices.Contains(cities, a.CityCode) {
			cities = append(cities, a.CityCode)
		}
	}
	slices.Sort(cities)
	origins, err := s.placesOf(ctx, cities)
	if err != nil {
		return nil, err
	}
	origins = slices.DeleteFunc(origins, func(p *flightgraph.Place) bool { return p == nil })
	out := &flightgraph.DealsReference{Market: pos.Market(), Currency: cur, Types: flightgraph.DealKinds}
	var all []*flightgraph.Place
	reach := make([][]*flightgraph.Place, len(origins))
	for i, o := range origins {
		var codes []string
		add := func(code string) {
			if a := byCode[code]; a != nil && !slices.Contains(o.AirportCodes(), code) && !slices.Contains(codes, a.CityCode) {
				codes = append(codes, a.CityCode)
			}
		}
		for _, from := range o.AirportCodes() {
			for _, hop := range to[from] {
				add(hop)
				if slices.Contains(hubs, hop) {
					for _, next := range to[hop] {
						add(next)
					}
				}
			}
		}
		slices.Sort(codes)
		places, err := s.placesOf(ctx, codes)
		if err != nil {
			return nil, err
		}
		reach[i] = slices.DeleteFunc(places, func(p *flightgraph.Place) bool { return p == nil || overlaps(o, p) })
		all = append(append(all, o), reach[i]...)
	}
	labelled, err := s.labelled(ctx, all)
	if err != nil {
		return nil, err
	}
	for i := range origins {
		origin, dests := labelled[0], labelled[1:1+len(reach[i])]
		labelled = labelled[1+len(reach[i]):]
		do := &flightgraph.DealOrigin{Origin: origin}
		for _, z := range flightgraph.Zones {
			dz := &flightgraph.DealZone{Zone: z}
			for _, d := range dests {
				if d.Country.AreaCode == z.Code {
					dz.Destinations = append(dz.Destinations, d)
				}
			}
			if len(dz.Destinations) > 0 {
				do.Zones = append(do.Zones, dz)
			}
		}
		out.Origins = append(out.Origins, do)
	}
	if out.Months, err = s.dealMonths(ctx, origins); err != nil {
		return nil, err
	}
	return out, nil
}

// dealMonths are the months, from this one to DealMonths-1 ahead, in which a flight leaves one
// of origins at least MinBookingLead from now: one read of at most one flight a month.
func (s *Service) dealMonths(ctx context.Context, origins []*flightgraph.Place) ([]string, error) {
	if len(origins) == 0 {
		return []string{}, nil
	}
	now := s.Now().UTC()
	from := unionOf(origins)
	this := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	months := []string{}
	for i := range flightgraph.DealMonths {
		first := this.AddDate(0, i, 0)
		last := first.AddDate(0, 1, -1)
		f := flightgraph.FlightFilter{Origin: from, Date: first.Format(flightgraph.DateLayout), LastDate: last.Format(flightgraph.DateLayout),
			DepartureFrom: now.Add(MinBookingLead), Page: flightgraph.Page{Limit: 1, Uncounted: true}}
		found, _, err := s.shop().FindFlights(ctx, f)
		if err != nil {
			return nil, err
		}
		if len(found) > 0 {
			months = append(months, first.Format(flightgraph.MonthLayout))
		}
	}
	return months, nil
}

// hubCodes are the codes of the network's hubs, each once.
func (s *Service) hubCodes(ctx context.Context) ([]string, error) {
	carriers, err := s.Network.Carriers(ctx)
	if err != nil {
		return nil, err
	}
	var hubs []string
	for _, c := range carriers {
		if !slices.Contains(hubs, c.HubCode) {
			hubs = append(hubs, c.HubCode)
		}
	}
	return hubs, nil
}

// SearchContext answers what a search from origin to destination (airport or city codes, both
// required) may ask for where the request sells (flightgraph.SearchContext). With a departure
// date (today to today + 360), its connection options and cabins are that day's, read as a search
// reads them (three round trips); without one, the network's routes', read from the snapshot
// under serve.
//
// Errors: ECodeMissingParameter without origin or destination; ECodeBadFormat for a malformed
// code or date; ECodeIATANotFound for an unknown code; ECodeInvalidParameter for the same place
// twice or a date outside the booking window.
func (s *Service) SearchContext(ctx context.Context, origin, destination, date string) (*flightgraph.SearchContext, error) {
	if strings.TrimSpace(origin) == "" {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "origin", "origin is required: an airport or city code")
	}
	if strings.TrimSpace(destination) == "" {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "destination", "destination is required: an airport or city code")
	}
	now := s.Now().UTC().Truncate(time.Second)
	today := now.Truncate(24 * time.Hour)
	first, last := today.Format(flightgraph.DateLayout), today.AddDate(0, 0, 360).Format(flightgraph.DateLayout)
	if date != "" {
		d, err := flightgraph.ParseDate("departureDate", date)
		if err != nil {
			return nil, err
		}
		if date = d.Format(flightgraph.DateLayout); date < first || date > last {
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "departureDate", "departureDate is from %s to %s", first, last)
		}
	}
	o, d, err := s.Ends(ctx, origin, destination)
	if err != nil {
		return nil, err
	}
	if overlaps(o, d) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "destination", "the origin and destination are the same place")
	}
	pos := flightgraph.PointOfSaleFromContext(ctx)
	cur, err := s.marketCurrency(ctx, pos)
	if err != nil {
		return nil, err
	}
	ends, err := s.labelled(ctx, []*flightgraph.Place{o, d})
	if err != nil {
		return nil, err
	}
	sc := &flightgraph.SearchContext{Market: pos.Market(), Currency: cur, Language: string(pos.Language), Host: pos.Brand,
		Origin: ends[0], Destination: ends[1], DepartureDate: date, FirstDate: first, LastDate: last,
		PassengerTypes: flightgraph.PassengerTypes, MaxSeats: flightgraph.MaxSeatsPerBooking, MinAdults: flightgraph.MinAdults,
		OfferValidity: flightgraph.OfferValidity}
	if date == "" {
		sc.Cabins = cabinsUp(flightgraph.CabinClasses)
		if sc.Connections, err = s.routeOptions(ctx, o, d); err != nil {
			return nil, err
		}
	} else if err := s.dayOptions(ctx, sc, now); err != nil {
		return nil, err
	}
	for _, c := range sc.Cabins {
		sc.FareFamilies = append(sc.FareFamilies, flightgraph.FamiliesOf(c)...)
	}
	return sc, nil
}

// routeOptions are the ways from o to d on the network's routes: nonstop where a route joins
// them, and through each hub (but theirs) that a route from o reaches and a route from reaches
// d; nonstop first, then by hub.
func (s *Service) routeOptions(ctx context.Context, o, d *flightgraph.Place) ([]*flightgraph.ConnectionOption, error) {
	routes, err := s.Network.AllRoutes(ctx)
	if err != nil {
		return nil, err
	}
	hubs, err := s.hubCodes(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(hubs)
	carriers := func(from, to []string) []string {
		var out []string
		for _, rt := range routes {
			if slices.Contains(from, rt.OriginCode) && slices.Contains(to, rt.DestinationCode) && !slices.Contains(out, rt.CarrierCode) {
				out = append(out, rt.CarrierCode)
			}
		}
		return out
	}
	var out []*flightgraph.ConnectionOption
	if cs := carriers(o.AirportCodes(), d.AirportCodes()); len(cs) > 0 {
		out = append(out, &flightgraph.ConnectionOption{Carriers: cs})
	}
	var vias []string
	for _, h := range hubs {
		if !slices.Contains(o.AirportCodes(), h) && !slices.Contains(d.AirportCodes(), h) {
			vias = append(vias, h)
		}
	}
	airports, err := s.Places.AirportsByCodes(ctx, vias)
	if err != nil {
		return nil, err
	}
	for i, h := range vias {
		in, on := carriers(o.AirportCodes(), []string{h}), carriers([]string{h}, d.AirportCodes())
		if len(in) == 0 || len(on) == 0 || airports[i] == nil {
			continue
		}
		for _, c := range on {
			if !slices.Contains(in, c) {
				in = append(in, c)
			}
		}
		out = append(out, &flightgraph.ConnectionOption{Via: airports[i], Carriers: in})
	}
	return out, nil
}

// dayOptions sets a context's connection options and cabins from its date's itineraries, as a
// search finds them at now: the options by hub (nonstop first), each with its carriers and
// number of itineraries; the cabins on board of some itinerary with a seat left, from Economy up.
func (s *Service) dayOptions(ctx context.Context, sc *flightgraph.SearchContext, now time.Time) error {
	c := flightgraph.RequestedConnection{DepartureDate: sc.DepartureDate, Origin: sc.Origin.Code, Destination: sc.Destination.Code,
		OriginPlace: sc.Origin.Place, DestinationPlace: sc.Destination.Place}
	cur, _ := flightgraph.CurrencyOf("currency", flightgraph.PricingCurrency)
	its, refs, err := s.day(ctx, c, now, cur)
	if err != nil {
		return err
	}
	byVia := map[string]*flightgraph.ConnectionOption{}
	var vias []string
	cabins := map[flightgraph.CabinClass]bool{}
	for _, it := range its {
		via := ""
		if len(it.flights) > 1 {
			via = it.flights[1].OriginCode
		}
		opt := byVia[via]
		if opt == nil {
			opt = &flightgraph.ConnectionOption{Itineraries: new(int)}
			byVia[via] = opt
			vias = append(vias, via)
		}
		*opt.Itineraries++
		for _, f := range it.flights {
			if !slices.Contains(opt.Carriers, f.CarrierCode) {
				opt.Carriers = append(opt.Carriers, f.CarrierCode)
			}
		}
		for _, cabin := range flightgraph.CabinClasses {
			if a := availabilityOf(refs, it, []flightgraph.CabinClass{cabin}, 1, now); len(a.Cabins) > 0 && a.Cabins[0].Sellable {
				cabins[cabin] = true
			}
		}
	}
	slices.Sort(vias)
	hubs, err := s.Places.AirportsByCodes(ctx, vias)
	if err != nil {
		return err
	}
	for i, v := range vias {
		opt := byVia[v]
		if v != "" {
			if opt.Via = hubs[i]; opt.Via == nil {
				opt.Via = &flightgraph.Airport{Code: v}
			}
		}
		sc.Connections = append(sc.Connections, opt)
	}
	for _, cabin := range cabinsUp(flightgraph.CabinClasses) {
		if cabins[cabin] {
			sc.Cabins = append(sc.Cabins, cabin)
		}
	}
	slices.SortStableFunc(sc.Connections, func(a, b *flightgraph.ConnectionOption) int { return cmp.Compare(a.Stops(), b.Stops()) })
	return nil
}
