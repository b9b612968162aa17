package rest

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/travel"
)

// The offers API (/opendata/offers/v1/…). A search is a POST with the original's JSON body, or a
// GET with the same fields as query parameters (the HAL links of the answers use it); every offer
// it returns has an id that priceDetails, tax-breakdown and flightDetails read back.

// maxSearchBytes bounds an offers search body: nine passengers and two connections are well under
// a kilobyte.
const maxSearchBytes = 16 << 10

type (
	// searchBody is the original's offers search request.
	searchBody struct {
		CommercialCabins     []string         `json:"commercialCabins"`
		Passengers           []passengerBody  `json:"passengers"`
		RequestedConnections []connectionBody `json:"requestedConnections"`
		Currency             string           `json:"currency"`
		BookingFlow          string           `json:"bookingFlow"`
		DisplayPriceContent  string           `json:"displayPriceContent"`
		// DateInterval and Type make a lowest-fare search: YYYY-MM-DD/YYYY-MM-DD, DAY, MONTH or
		// OVERALL.
		DateInterval string `json:"dateInterval,omitempty"`
		Type         string `json:"type,omitempty"`
	}
	passengerBody struct {
		ID        int    `json:"id"`
		Type      string `json:"type"`
		BirthDate string `json:"birthDate,omitempty"`
	}
	connectionBody struct {
		DepartureDate string    `json:"departureDate"`
		Origin        placeBody `json:"origin"`
		Destination   placeBody `json:"destination"`
	}
	// placeBody names an airport or a city: {"airport": {"code": "AMS"}} or {"city": {"code": "PAR"}}.
	placeBody struct {
		Airport *placeRef `json:"airport,omitempty"`
		City    *placeRef `json:"city,omitempty"`
	}

	offerList struct {
		Itineraries []itineraryDoc `json:"itineraries"`
		Links       links          `json:"_links"`
	}
	itineraryDoc struct {
		Connections    []connectionDoc `json:"connections"`
		FlightProducts []productDoc    `json:"flightProducts"`
	}
	connectionDoc struct {
		Duration      string       `json:"duration"`
		NumberOfStops int          `json:"numberOfStops"`
		Segments      []segmentDoc `json:"segments"`
	}
	segmentDoc struct {
		FlightID          string        `json:"flightId"`
		Origin            offerPlaceDoc `json:"origin"`
		Destination       offerPlaceDoc `json:"destination"`
		CommercialCabin   string        `json:"commercialCabin"`
		MarketingFlight   marketingDoc  `json:"marketingFlight"`
		DepartureDateTime string        `json:"departureDateTime"`
		ArrivalDateTime   string        `json:"arrivalDateTime"`
		Duration          string        `json:"duration"`
		EquipmentType     string        `json:"equipmentType"`
		Distance          distance      `json:"distance"`
		SeatsLeft         int           `json:"seatsLeft"`
		// ConnectionDuration is the time on the ground before the next segment, if any.
		ConnectionDuration string `json:"connectionDuration,omitempty"`
	}
	offerPlaceDoc struct {
		Code string   `json:"code"`
		City placeRef `json:"city"`
	}
	marketingDoc struct {
		Number  string   `json:"number"`
		Carrier placeRef `json:"carrier"`
	}
	productDoc struct {
		ID              string    `json:"id"`
		Bound           string    `json:"bound"`
		CommercialCabin string    `json:"commercialCabin"`
		FareFamily      familyDoc `json:"fareFamily"`
		Price           priceDoc  `json:"price"`
		SeatsLeft       int       `json:"seatsLeft"`
		ExpiresAt       string    `json:"expiresAt"`
		// IncludedBaggage is each passenger type's baggage included in the fare, from the
		// baggage API's rules.
		IncludedBaggage []includedBagsDoc `json:"includedBaggage"`
		Links           offerLinks        `json:"_links"`
	}
	familyDoc struct {
		Code         string `json:"code"`
		Name         string `json:"name"`
		CheckedBags  int    `json:"checkedBags"`
		Changeable   bool   `json:"changeable"`
		Refundable   bool   `json:"refundable"`
		SeatChoice   bool   `json:"seatChoice"`
		LoungeAccess bool   `json:"loungeAccess"`
	}
	priceDoc struct {
		// DisplayPrice is what displayPriceContent asks for: one adult's price by default, all
		// passengers' with ALL_PAX, rounded up to a whole unit with ALL_PAX_ROUNDED.
		DisplayPrice           string        `json:"displayPrice"`
		TotalPrice             string        `json:"totalPrice"`
		TotalTaxes             string        `json:"totalTaxes"`
		Currency               string        `json:"currency"`
		PricePerPassengerTypes []paxPriceDoc `json:"pricePerPassengerTypes"`
	}
	paxPriceDoc struct {
		PassengerType string `json:"passengerType"`
		Count         int    `json:"count"`
		Fare          string `json:"fare"`
		Taxes         string `json:"taxes"`
		Total         string `json:"total"`
	}
	offerLinks struct {
		PriceDetails  link `json:"priceDetails"`
		TaxBreakdown  link `json:"taxBreakdown"`
		FlightDetails link `json:"flightDetails"`
	}

	priceDetailsDoc struct {
		Offer      productDoc    `json:"offer"`
		Connection connectionDoc `json:"connection"`
		Links      links         `json:"_links"`
	}
	taxBreakdownDoc struct {
		OfferID    string        `json:"offerId"`
		Currency   string        `json:"currency"`
		TotalTaxes string        `json:"totalTaxes"`
		Passengers []paxTaxesDoc `json:"passengers"`
		Links      links         `json:"_links"`
	}
	paxTaxesDoc struct {
		PassengerType string   `json:"passengerType"`
		Count         int      `json:"count"`
		Taxes         []taxDoc `json:"taxes"`
		Total         string   `json:"total"`
	}
	taxDoc struct {
		Code   string `json:"code"`
		Name   string `json:"name"`
		Amount string `json:"amount"`
	}
	calendarDoc struct {
		LowestFareOffers []lowestFareDoc `json:"lowestFareOffers"`
		Links            links           `json:"_links"`
	}
	lowestFareDoc struct {
		Period        string         `json:"period"`
		FlightProduct *productDoc    `json:"flightProduct,omitempty"`
		Connection    *connectionDoc `json:"connection,omitempty"`
	}
	upsellDoc struct {
		Offer        productDoc   `json:"offer"`
		UpsellOffers []productDoc `json:"upsellOffers"`
		Links        links        `json:"_links"`
	}
	boundsDoc struct {
		Outbound offerList  `json:"outbound"`
		Inbound  *offerList `json:"inbound,omitempty"`
		Links    links      `json:"_links"`
	}
	offerIDBody struct {
		OfferID             string `json:"offerId"`
		DisplayPriceContent string `json:"displayPriceContent"`
	}
	conditionsDoc struct {
		FareFamily familyDoc      `json:"fareFamily"`
		Conditions []conditionDoc `json:"conditions"`
		Links      links          `json:"_links"`
	}
	conditionDoc struct {
		Type        string     `json:"type"`
		Allowed     bool       `json:"allowed"`
		Fee         *amountDoc `json:"fee,omitempty"`
		Description string     `json:"description"`
	}
	amountDoc struct {
		Amount   string `json:"amount"`
		Currency string `json:"currency"`
	}
	flightDetailsDoc struct {
		Connection connectionDoc `json:"connection"`
		Links      links         `json:"_links"`
	}
)

// availableOffers answers POST /opendata/offers/v1/available-offers: the outbound offers of the
// search (the inbound ones come from available-offers/all).
func (a *API) availableOffersPost(w http.ResponseWriter, r *http.Request) {
	var b searchBody
	if err := flightgraph.ReadJSON(w, r, maxSearchBytes, &b, "the body must be one offers search"); err != nil {
		a.Error(w, r, err)
		return
	}
	a.availableOffers(w, r, b)
}

// lowestFaresPost answers POST /opendata/offers/v1/lowest-fare-offers: the search's body with a
// dateInterval and a type (DAY, MONTH, OVERALL).
func (a *API) lowestFaresPost(w http.ResponseWriter, r *http.Request) {
	var b searchBody
	if err := flightgraph.ReadJSON(w, r, maxSearchBytes, &b, "the body must be one lowest-fare search"); err != nil {
		a.Error(w, r, err)
		return
	}
	a.lowestFares(w, r, b)
}

// lowestFaresGet answers GET /opendata/offers/v1/lowest-fare-offers: the search's fields as
// query parameters, as for available-offers, with dateInterval and type.
func (a *API) lowestFaresGet(w http.ResponseWriter, r *http.Request) {
	b := searchOfQuery(r.URL.Query())
	b.DateInterval, b.Type = r.URL.Query().Get("dateInterval"), r.URL.Query().Get("type")
	a.lowestFares(w, r, b)
}

func (a *API) lowestFares(w http.ResponseWriter, r *http.Request, b searchBody) {
	q, err := b.search()
	if err != nil {
		a.Error(w, r, err)
		return
	}
	days, err := flightgraph.ParseDateInterval(b.DateInterval, a.Now().UTC().Truncate(24*time.Hour))
	if err != nil {
		a.Error(w, r, err)
		return
	}
	typ := flightgraph.CalendarType(strings.ToUpper(b.Type))
	if typ == "" {
		typ = flightgraph.CalendarDay
	}
	cal, err := a.Travel.LowestFares(r.Context(), q, 0, days, typ)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := calendarDoc{LowestFareOffers: make([]lowestFareDoc, len(cal)), Links: self(r)}
	for i, lf := range cal {
		out.LowestFareOffers[i].Period = lf.Period
		if lf.Offer != nil {
			p, c := productOf(lf.Offer, b.DisplayPriceContent), connectionOf(lf.Offer)
			out.LowestFareOffers[i].FlightProduct, out.LowestFareOffers[i].Connection = &p, &c
		}
	}
	render(w, r, out)
}

// availableOffersGet answers GET /opendata/offers/v1/available-offers: the search's fields as
// query parameters (origin, destination, departureDate, passengers as a list of types,
// commercialCabins, currency, displayPriceContent).
func (a *API) availableOffersGet(w http.ResponseWriter, r *http.Request) {
	a.availableOffers(w, r, searchOfQuery(r.URL.Query()))
}

// searchOfQuery reads a search's fields from query parameters.
func searchOfQuery(q url.Values) searchBody {
	b := searchBody{Currency: q.Get("currency"), DisplayPriceContent: q.Get("displayPriceContent"), BookingFlow: q.Get("bookingFlow"),
		RequestedConnections: []connectionBody{{DepartureDate: q.Get("departureDate"), Origin: placeBody{Airport: &placeRef{q.Get("origin")}},
			Destination: placeBody{Airport: &placeRef{q.Get("destination")}}}}}
	if c := q.Get("commercialCabins"); c != "" {
		b.CommercialCabins = strings.Split(c, ",")
	}
	if p := q.Get("passengers"); p != "" {
		for i, t := range strings.Split(p, ",") {
			b.Passengers = append(b.Passengers, passengerBody{ID: i + 1, Type: t})
		}
	}
	return b
}

func (a *API) availableOffers(w http.ResponseWriter, r *http.Request, b searchBody) {
	q, err := b.search()
	if err != nil {
		a.Error(w, r, err)
		return
	}
	offers, err := a.Travel.OffersFor(r.Context(), q, 0)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	render(w, r, groupOffers(offers, searchLink(q, b.DisplayPriceContent), b.DisplayPriceContent))
}

// availableOffersAll answers POST /opendata/offers/v1/available-offers/all: the offers of both
// bounds of a return search (of the one bound of a one-way search), each priced on its own, so
// that a trip's price is its two offers'.
func (a *API) availableOffersAll(w http.ResponseWriter, r *http.Request) {
	var b searchBody
	if err := flightgraph.ReadJSON(w, r, maxSearchBytes, &b, "the body must be one offers search"); err != nil {
		a.Error(w, r, err)
		return
	}
	q, err := b.search()
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := boundsDoc{Links: self(r)}
	for i := range max(len(q.Connections), 1) {
		offers, err := a.Travel.OffersFor(r.Context(), q, i)
		if err != nil {
			a.Error(w, r, err)
			return
		}
		list := groupOffers(offers, "", b.DisplayPriceContent)
		if i == 0 {
			list.Links = links{Self: link{Href: searchLink(q, b.DisplayPriceContent)}}
			out.Outbound = list
		} else {
			list.Links = links{Self: link{Href: r.URL.Path}}
			out.Inbound = &list
		}
	}
	render(w, r, out)
}

// groupOffers groups offers by itinerary, in their order.
func groupOffers(offers []*flightgraph.Offer, selfHref, display string) offerList {
	out := offerList{Itineraries: []itineraryDoc{}, Links: links{Self: link{Href: selfHref}}}
	at := map[string]int{}
	for _, o := range offers {
		key := itineraryKey(o)
		i, ok := at[key]
		if !ok {
			i, at[key] = len(out.Itineraries), len(out.Itineraries)
			out.Itineraries = append(out.Itineraries, itineraryDoc{Connections: []connectionDoc{connectionOf(o)}})
		}
		out.Itineraries[i].FlightProducts = append(out.Itineraries[i].FlightProducts, productOf(o, display))
	}
	return out
}

// search is the body as the engine's search; ECodeMissingParameter, ECodeBadFormat or
// ECodeInvalidParameter for what the original would refuse.
func (b searchBody) search() (*flightgraph.OfferSearch, error) {
	if len(b.CommercialCabins) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "commercialCabins", "commercialCabins is required: ECONOMY, PREMIUM, BUSINESS, FIRST, or ALL alone")
	}
	switch strings.ToUpper(b.BookingFlow) {
	case "", "LEISURE", "CORPORATE":
	case "REWARD", "STAFF":
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "bookingFlow", "%s fares are not sold through this API; use LEISURE or CORPORATE", strings.ToUpper(b.BookingFlow))
	default:
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "bookingFlow", "bookingFlow is LEISURE, CORPORATE, REWARD or STAFF")
	}
	switch b.DisplayPriceContent {
	case "", "ALL_PAX", "ALL_PAX_ROUNDED":
	default:
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "displayPriceContent", "displayPriceContent is ALL_PAX, ALL_PAX_ROUNDED, or empty for one adult")
	}
	q := &flightgraph.OfferSearch{Currency: b.Currency}
	for _, c := range b.CommercialCabins {
		q.Cabins = append(q.Cabins, flightgraph.CabinClass(c))
	}
	for _, p := range b.Passengers {
		q.Passengers = append(q.Passengers, flightgraph.Passenger{ID: p.ID, Type: p.Type})
	}
	for _, c := range b.RequestedConnections {
		q.Connections = append(q.Connections, flightgraph.RequestedConnection{DepartureDate: c.DepartureDate, Origin: c.Origin.code(), Destination: c.Destination.code()})
	}
	return q, nil
}

func (p placeBody) code() string {
	switch {
	case p.Airport != nil:
		return p.Airport.Code
	case p.City != nil:
		return p.City.Code
	}
	return ""
}

// searchLink is the GET form of a one-way search.
func searchLink(q *flightgraph.OfferSearch, display string) string {
	c := q.Connections[0]
	types := make([]string, len(q.Passengers))
	for i, p := range q.Passengers {
		types[i] = strings.ToUpper(p.Type)
	}
	cabins := "ALL"
	if len(q.Cabins) > 0 {
		cs := make([]string, len(q.Cabins))
		for i, k := range q.Cabins {
			cs[i] = string(k)
		}
		cabins = strings.Join(cs, ",")
	}
	// The parameters in url.Values.Encode's order (by name), without its map and sort: a deals
	// answer links a search per destination.
	var b strings.Builder
	b.Grow(192)
	b.WriteString("/opendata/offers/v1/available-offers")
	sep := byte('?')
	add := func(name, value string) {
		b.WriteByte(sep)
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(value))
		sep = '&'
	}
	add("commercialCabins", cabins)
	if q.Currency != "" {
		add("currency", q.Currency)
	}
	add("departureDate", c.DepartureDate)
	add("destination", c.Destination)
	if display != "" {
		add("displayPriceContent", display)
	}
	add("origin", c.Origin)
	add("passengers", strings.Join(types, ","))
	return b.String()
}

func itineraryKey(o *flightgraph.Offer) string {
	var ids []string
	for _, s := range o.Segments {
		ids = append(ids, s.Flight.ID)
	}
	return strings.Join(ids, " ")
}

func connectionOf(o *flightgraph.Offer) connectionDoc {
	c := connectionDoc{Duration: o.Duration(), NumberOfStops: len(o.Segments) - 1, Segments: make([]segmentDoc, 0, len(o.Segments))}
	for _, s := range o.Segments {
		first, last := s.Legs[0], s.Legs[len(s.Legs)-1]
		d := segmentDoc{FlightID: s.Flight.ID, Origin: offerPlaceDoc{Code: s.Flight.OriginCode}, Destination: offerPlaceDoc{Code: s.Flight.DestinationCode},
			CommercialCabin: string(o.Cabin), MarketingFlight: marketingDoc{Number: s.Flight.Designator()[2:], Carrier: placeRef{s.Flight.CarrierCode}},
			DepartureDateTime: flightgraph.LocalTime(first.ScheduledDep, first.DepartureOffset).Format(time.RFC3339),
			ArrivalDateTime:   flightgraph.LocalTime(last.ScheduledArr, last.ArrivalOffset).Format(time.RFC3339),
			Duration:          flightgraph.ISODuration(s.Flight.ArrivalUTC.Sub(s.Flight.DepartureUTC)), EquipmentType: first.ConfigurationCode,
			Distance: distance{s.DistanceKm, "KM"}, SeatsLeft: s.SeatsLeft}
		d.Origin.City.Code, d.Destination.City.Code = s.OriginCity, s.DestinationCity
		if s.ConnectionMinutes > 0 {
			d.ConnectionDuration = flightgraph.ISODuration(time.Duration(s.ConnectionMinutes) * time.Minute)
		}
		c.Segments = append(c.Segments, d)
	}
	return c
}

func productOf(o *flightgraph.Offer, display string) productDoc {
	p := productDoc{ID: o.ID, Bound: string(o.Bound), CommercialCabin: string(o.Cabin), SeatsLeft: o.SeatsLeft, ExpiresAt: o.ExpiresAt.Format(time.RFC3339),
		FareFamily: familyOf(o.Family),
		Price:      priceDoc{TotalPrice: o.Price.Total.Decimal(), Currency: o.Price.Total.Currency, PricePerPassengerTypes: make([]paxPriceDoc, 0, len(o.Price.Passengers))}}
	taxes := flightgraph.Money{Currency: o.Price.Total.Currency}
	for _, pp := range o.Price.Passengers {
		p.Price.PricePerPassengerTypes = append(p.Price.PricePerPassengerTypes, paxPriceDoc{PassengerType: pp.Type, Count: pp.Count,
			Fare: pp.Base.Decimal(), Taxes: pp.TaxTotal.Decimal(), Total: pp.Total.Decimal()})
		taxes = taxes.Add(pp.TaxTotal.Times(pp.Count))
	}
	p.Price.TotalTaxes = taxes.Decimal()
	p.Price.DisplayPrice = o.DisplayPrice(display).Decimal()
	for _, b := range travel.IncludedBaggage(o) {
		p.IncludedBaggage = append(p.IncludedBaggage, includedBagsDoc{PassengerType: b.PassengerType, Products: bagProducts(b.Products)})
	}
	q := "?offerId=" + url.QueryEscape(o.ID)
	p.Links = offerLinks{PriceDetails: link{"/opendata/offers/v1/priceDetails" + q}, TaxBreakdown: link{"/opendata/offers/v1/tax-breakdown" + q},
		FlightDetails: link{"/opendata/offers/v1/flightDetails" + q}}
	return p
}

func familyOf(f *flightgraph.FareFamily) familyDoc {
	return familyDoc{Code: f.Code, Name: f.Name, CheckedBags: f.CheckedBags, Changeable: f.Changeable, Refundable: f.Refundable,
		SeatChoice: f.SeatChoice, LoungeAccess: f.LoungeAccess}
}

// offerOf reads the offerId parameter back into its offer.
func (a *API) offerOf(r *http.Request) (*flightgraph.Offer, error) {
	id := r.URL.Query().Get("offerId")
	if id == "" {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "offerId", "offerId is required: the id of an offer a search returned")
	}
	return a.Travel.Offer(r.Context(), "offerId", id)
}

// upsellGet answers GET /opendata/offers/v1/upsell-offers?offerId=…, and upsellPost the same
// with {"offerId"} as the body: the offer and what it can be upgraded to, the same flights in
// dearer families and cabins, priced as the search would have priced them.
func (a *API) upsellGet(w http.ResponseWriter, r *http.Request) {
	a.upsell(w, r, offerIDBody{OfferID: r.URL.Query().Get("offerId"), DisplayPriceContent: r.URL.Query().Get("displayPriceContent")})
}

func (a *API) upsellPost(w http.ResponseWriter, r *http.Request) {
	var b offerIDBody
	if err := flightgraph.ReadJSON(w, r, maxSearchBytes, &b, "the body must be one object {offerId}"); err != nil {
		a.Error(w, r, err)
		return
	}
	a.upsell(w, r, b)
}

func (a *API) upsell(w http.ResponseWriter, r *http.Request, b offerIDBody) {
	if b.OfferID == "" {
		a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "offerId", "offerId is required: the id of an offer a search returned"))
		return
	}
	o, ups, err := a.Travel.Upsell(r.Context(), "offerId", b.OfferID)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := upsellDoc{Offer: productOf(o, b.DisplayPriceContent), UpsellOffers: []productDoc{}, Links: self(r)}
	for _, u := range ups {
		out.UpsellOffers = append(out.UpsellOffers, productOf(u, b.DisplayPriceContent))
	}
	render(w, r, out)
}

// ticketConditions answers GET /opendata/offers/v1/ticket-conditions: the conditions of an
// offer's fare family (offerId), or of a family on a trip (origin, destination, departureDate,
// fareFamily, currency).
func (a *API) ticketConditions(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	fam, conds, err := a.Travel.TicketConditions(r.Context(), travel.ConditionsQuery{OfferID: v.Get("offerId"), ReservationIdentifier: v.Get("reservationIdentifier"), Origin: v.Get("origin"),
		Destination: v.Get("destination"), DepartureDate: v.Get("departureDate"), Family: v.Get("fareFamily"), Currency: v.Get("currency")})
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := conditionsDoc{FareFamily: familyOf(fam), Links: self(r)}
	for _, c := range conds {
		d := conditionDoc{Type: c.Type, Allowed: c.Allowed, Description: c.Description}
		if c.Fee != nil {
			d.Fee = &amountDoc{c.Fee.Decimal(), c.Fee.Currency}
		}
		out.Conditions = append(out.Conditions, d)
	}
	render(w, r, out)
}

// priceDetails answers GET /opendata/offers/v1/priceDetails?offerId=…: the offer priced again, as
// the search priced it.
func (a *API) priceDetails(w http.ResponseWriter, r *http.Request) {
	o, err := a.offerOf(r)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	render(w, r, priceDetailsDoc{Offer: productOf(o, r.URL.Query().Get("displayPriceContent")), Connection: connectionOf(o), Links: self(r)})
}

// taxBreakdown answers GET /opendata/offers/v1/tax-breakdown?offerId=…: each passenger type's
// taxes, charges and surcharges, line by line; they sum to the offer's taxes.
func (a *API) taxBreakdown(w http.ResponseWriter, r *http.Request) {
	o, err := a.offerOf(r)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := taxBreakdownDoc{OfferID: o.ID, Currency: o.Price.Total.Currency, Links: self(r)}
	total := flightgraph.Money{Currency: o.Price.Total.Currency}
	for _, p := range o.Price.Passengers {
		d := paxTaxesDoc{PassengerType: p.Type, Count: p.Count, Total: p.TaxTotal.Decimal(), Taxes: []taxDoc{}}
		for _, l := range p.Taxes {
			d.Taxes = append(d.Taxes, taxDoc{Code: l.Code, Name: l.Name, Amount: l.Amount.Decimal()})
		}
		out.Passengers = append(out.Passengers, d)
		total = total.Add(p.TaxTotal.Times(p.Count))
	}
	out.TotalTaxes = total.Decimal()
	render(w, r, out)
}

// flightDetails answers GET /opendata/offers/v1/flightDetails?offerId=…: the offer's connection
// and its segments, in the original's flight-details shape.
func (a *API) flightDetails(w http.ResponseWriter, r *http.Request) {
	o, err := a.offerOf(r)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	render(w, r, flightDetailsDoc{Connection: connectionOf(o), Links: self(r)})
}
