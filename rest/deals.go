package rest

import (
	"net/http"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Deals (best-fare-offers, best-fare-offers/all-deals, and the metasearch partners' bestOffers
// feed) and flights availability: POSTs with a JSON body in the offers search's style, answered
// by the same engine as available-offers, so a deal's flightProduct is an offer of its day's
// search, at its price.

const bestFaresPath = "/opendata/offers/v1/best-fare-offers"

type (
	// dealsBody is a deals search: from origin, to destinations (all deals: every destination
	// reached, in destinationZoneCode when given), over dateInterval, for passengers in
	// commercialCabins.
	dealsBody struct {
		Origin              placeBody       `json:"origin"`
		Destinations        []placeBody     `json:"destinations"`
		DestinationZoneCode string          `json:"destinationZoneCode"`
		DateInterval        string          `json:"dateInterval"`
		DealType            string          `json:"dealType"`
		CommercialCabins    []string        `json:"commercialCabins"`
		Passengers          []passengerBody `json:"passengers"`
		Currency            string          `json:"currency"`
		DisplayPriceContent string          `json:"displayPriceContent"`
		Limit               *int            `json:"limit"`
	}

	dealsDoc struct {
		Origin         inspirationPlaceDoc `json:"origin"`
		DateInterval   string              `json:"dateInterval"`
		DealType       string              `json:"dealType"`
		Currency       string              `json:"currency"`
		BestFareOffers []dealDoc           `json:"bestFareOffers"`
		Links          links               `json:"_links"`
	}
	feedDoc struct {
		Origin       inspirationPlaceDoc `json:"origin"`
		DateInterval string              `json:"dateInterval"`
		Currency     string              `json:"currency"`
		GeneratedAt  string              `json:"generatedAt"`
		BestOffers   []dealDoc           `json:"bestOffers"`
		Links        links               `json:"_links"`
	}
	dealDoc struct {
		Destination   inspirationPlaceDoc `json:"destination"`
		Zone          codeLabelDoc        `json:"zone"`
		Period        string              `json:"period"`
		DepartureDate string              `json:"departureDate,omitempty"`
		FlightProduct *productDoc         `json:"flightProduct,omitempty"`
		Connection    *connectionDoc      `json:"connection,omitempty"`
		Links         *dealOfferLinks     `json:"_links,omitempty"`
	}
	// dealOfferLinks lead to the search that lists a deal's offer: available-offers of its day.
	dealOfferLinks struct {
		Offers link `json:"offers"`
	}
)

// query is the body as the engine's deals query; limit defaults to DefaultDestinations.
func (b dealsBody) query() (*flightgraph.DealQuery, error) {
	switch b.DisplayPriceContent {
	case "", "ALL_PAX", "ALL_PAX_ROUNDED":
	default:
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "displayPriceContent", "displayPriceContent is ALL_PAX, ALL_PAX_ROUNDED, or empty for one adult")
	}
	q := &flightgraph.DealQuery{Origin: b.Origin.code(), Zone: b.DestinationZoneCode, DateInterval: b.DateInterval, Type: flightgraph.DealType(b.DealType),
		Currency: b.Currency, Limit: flightgraph.DefaultDestinations}
	if len(b.Destinations) > flightgraph.MaxDealDestinations {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "destinations", "at most %d destinations, got %d", flightgraph.MaxDealDestinations, len(b.Destinations))
	}
	for _, d := range b.Destinations {
		q.Destinations = append(q.Destinations, d.code())
	}
	if len(b.CommercialCabins) > len(flightgraph.CabinClasses) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "commercialCabins", "commercialCabins takes ECONOMY, PREMIUM, BUSINESS, FIRST, or ALL alone")
	}
	for _, c := range b.CommercialCabins {
		q.Cabins = append(q.Cabins, flightgraph.CabinClass(c))
	}
	if len(b.Passengers) > 2*flightgraph.MaxSeatsPerBooking {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "passengers", "at most %d passengers with a seat", flightgraph.MaxSeatsPerBooking)
	}
	for _, p := range b.Passengers {
		q.Passengers = append(q.Passengers, flightgraph.Passenger{ID: p.ID, Type: p.Type})
	}
	if b.Limit != nil {
		q.Limit = *b.Limit
	}
	return q, nil
}

// readDeals reads a deals body; its errors are the body's.
func (a *API) readDeals(w http.ResponseWriter, r *http.Request) (dealsBody, *flightgraph.DealQuery, error) {
	var b dealsBody
	if err := flightgraph.ReadJSON(w, r, maxSearchBytes, &b, "the body must be one deals search"); err != nil {
		return b, nil, err
	}
	q, err := b.query()
	return b, q, err
}

// bestFareOffers answers POST /opendata/offers/v1/best-fare-offers: of each destination named
// (1 to 20), the cheapest offer over the interval's days its deal type keeps, with its
// connection; none when nothing is sold then.
func (a *API) bestFareOffers(w http.ResponseWriter, r *http.Request) {
	b, q, err := a.readDeals(w, r)
	if err == nil {
		var list *flightgraph.DealList
		if list, err = a.Travel.BestFares(r.Context(), q); err == nil {
			render(w, r, dealsDocOf(r, list, q, b.DisplayPriceContent))
			return
		}
	}
	a.Error(w, r, err)
}

// allDeals answers POST /opendata/offers/v1/best-fare-offers/all-deals: every destination the
// origin's flights reach over the interval (in destinationZoneCode, when given), each with its
// cheapest offer, cheapest first, at most limit (1 to 200, 50 when absent).
func (a *API) allDeals(w http.ResponseWriter, r *http.Request) {
	b, q, err := a.readDeals(w, r)
	if err == nil {
		var list *flightgraph.DealList
		if list, err = a.Travel.AllDeals(r.Context(), q); err == nil {
			render(w, r, dealsDocOf(r, list, q, b.DisplayPriceContent))
			return
		}
	}
	a.Error(w, r, err)
}

// bestOffersFeed answers POST /opendata/offers/v1/bestOffers/feed, for metasearch partners: of
// each destination named (1 to 20) and each day of the interval its deal type keeps, the cheapest
// offer of the day; days without one are left out.
func (a *API) bestOffersFeed(w http.ResponseWriter, r *http.Request) {
	b, q, err := a.readDeals(w, r)
	if err == nil {
		var list *flightgraph.DealList
		if list, err = a.Travel.BestOffersFeed(r.Context(), q); err == nil {
			lang := language(r.Context())
			out := feedDoc{Origin: inspirationPlaceOf(list.Origin.Place, list.Origin.City, list.Origin.Country, lang), DateInterval: list.DateInterval,
				Currency: list.Currency, GeneratedAt: a.Now().UTC().Format(time.RFC3339), BestOffers: dealDocsOf(list, q, b.DisplayPriceContent, lang), Links: self(r)}
			render(w, r, out)
			return
		}
	}
	a.Error(w, r, err)
}

func dealsDocOf(r *http.Request, list *flightgraph.DealList, q *flightgraph.DealQuery, display string) dealsDoc {
	lang := language(r.Context())
	return dealsDoc{Origin: inspirationPlaceOf(list.Origin.Place, list.Origin.City, list.Origin.Country, lang), DateInterval: list.DateInterval,
		DealType: string(list.Type), Currency: list.Currency, BestFareOffers: dealDocsOf(list, q, display, lang), Links: self(r)}
}

// dealDocsOf are a list's deals, each offer linked to the offers search of its day that lists it.
func dealDocsOf(list *flightgraph.DealList, q *flightgraph.DealQuery, display, lang string) []dealDoc {
	out := make([]dealDoc, 0, len(list.Deals))
	for _, d := range list.Deals {
		doc := dealDoc{Destination: inspirationPlaceOf(d.Destination.Place, d.Destination.City, d.Destination.Country, lang),
			Zone: codeLabelDoc{d.Zone.Code, d.Zone.Label(lang)}, Period: d.Period}
		if d.Offer != nil {
			p, c := productOf(d.Offer, display), connectionOf(d.Offer)
			doc.DepartureDate, doc.FlightProduct, doc.Connection = *d.DepartureDate(), &p, &c
			doc.Links = &dealOfferLinks{Offers: link{searchLink(q.Search(d.Destination.Code, doc.DepartureDate), display)}}
		}
		out = append(out, doc)
	}
	return out
}

type (
	availabilityDoc struct {
		FlightsAvailability []itineraryAvailabilityDoc `json:"flightsAvailability"`
		Links               links                      `json:"_links"`
	}
	itineraryAvailabilityDoc struct {
		Bound         string                   `json:"bound"`
		NumberOfStops int                      `json:"numberOfStops"`
		Cabins        []cabinSeatsDoc          `json:"cabins"`
		Segments      []segmentAvailabilityDoc `json:"segments"`
		Links         dealOfferLinks           `json:"_links"`
	}
	segmentAvailabilityDoc struct {
		FlightID          string          `json:"flightId"`
		Origin            offerPlaceDoc   `json:"origin"`
		Destination       offerPlaceDoc   `json:"destination"`
		MarketingFlight   marketingDoc    `json:"marketingFlight"`
		DepartureDateTime string          `json:"departureDateTime"`
		ArrivalDateTime   string          `json:"arrivalDateTime"`
		EquipmentType     string          `json:"equipmentType"`
		Cabins            []cabinSeatsDoc `json:"cabins"`
	}
	cabinSeatsDoc struct {
		CommercialCabin string `json:"commercialCabin"`
		SeatsLeft       int    `json:"seatsLeft"`
		Sellable        bool   `json:"sellable"`
	}
)

// flightsAvailability answers POST /opendata/offers/v1/flights-availability: the offers search's
// body (commercialCabins all and passengers one adult when absent); for each requested
// connection, each itinerary the search finds with the seats left in each cabin on each flight,
// and whether the passengers fit.
func (a *API) flightsAvailability(w http.ResponseWriter, r *http.Request) {
	var b searchBody
	if err := flightgraph.ReadJSON(w, r, maxSearchBytes, &b, "the body must be one availability search"); err != nil {
		a.Error(w, r, err)
		return
	}
	if len(b.CommercialCabins) == 0 {
		b.CommercialCabins = []string{"ALL"}
	}
	if len(b.Passengers) == 0 {
		b.Passengers = []passengerBody{{ID: 1, Type: "ADT"}}
	}
	q, err := b.search()
	if err != nil {
		a.Error(w, r, err)
		return
	}
	avail, err := a.Travel.FlightsAvailability(r.Context(), q)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := availabilityDoc{FlightsAvailability: []itineraryAvailabilityDoc{}, Links: self(r)}
	for _, it := range avail {
		d := itineraryAvailabilityDoc{Bound: string(it.Bound), NumberOfStops: len(it.Segments) - 1, Cabins: cabinSeatsOf(it.Cabins)}
		for _, s := range it.Segments {
			sd := segmentAvailabilityDoc{FlightID: s.Flight.ID, Origin: offerPlaceDoc{Code: s.Flight.OriginCode, City: placeRef{s.OriginCity}},
				Destination:     offerPlaceDoc{Code: s.Flight.DestinationCode, City: placeRef{s.DestinationCity}},
				MarketingFlight: marketingDoc{Number: s.Flight.Designator()[2:], Carrier: placeRef{s.Flight.CarrierCode}}, Cabins: cabinSeatsOf(s.Cabins)}
			if len(s.Legs) > 0 {
				first, last := s.Legs[0], s.Legs[len(s.Legs)-1]
				sd.DepartureDateTime = flightgraph.LocalTime(first.ScheduledDep, first.DepartureOffset).Format(time.RFC3339)
				sd.ArrivalDateTime = flightgraph.LocalTime(last.ScheduledArr, last.ArrivalOffset).Format(time.RFC3339)
				sd.EquipmentType = first.ConfigurationCode
			}
			d.Segments = append(d.Segments, sd)
		}
		c := q.Connections[0]
		if it.Bound == flightgraph.Inbound {
			c = q.Connections[1]
		}
		one := *q
		one.Connections = []flightgraph.RequestedConnection{c}
		d.Links.Offers = link{searchLink(&one, "")}
		out.FlightsAvailability = append(out.FlightsAvailability, d)
	}
	render(w, r, out)
}

func cabinSeatsOf(cs []*flightgraph.CabinSeats) []cabinSeatsDoc {
	out := []cabinSeatsDoc{}
	for _, c := range cs {
		out = append(out, cabinSeatsDoc{string(c.Cabin), c.SeatsLeft, c.Sellable})
	}
	return out
}
