package rest

import (
	"net/http"
	"net/url"

	"github.com/flightgraph/flightgraph"
)

type (
	referenceData struct {
		Market  string        `json:"market"`
		Country []countryData `json:"country"`
		Links   links         `json:"_links"`
	}
	countryData struct {
		Code                  string          `json:"code"`
		Label                 string          `json:"label"`
		MaximumNumberOfSeats  int             `json:"maximumNumberOfSeats"`
		MinimumNumberOfAdults int             `json:"minimumNumberOfAdults"`
		DefaultAirport        string          `json:"defaultAirport"`
		Origins               []string        `json:"origins"`
		Destinations          []string        `json:"destinations"`
		PassengerTypes        []passengerType `json:"passengerTypes"`
	}
	passengerType struct {
		Code  string `json:"code"`
		Label string `json:"label"`
	}

	// offersReferenceData is the offers API's reference data: the Open Data document's market and
	// countries, and what an offers search takes besides.
	offersReferenceData struct {
		Market           string               `json:"market"`
		Currency         string               `json:"currency"`
		Country          []countryData        `json:"country"`
		CommercialCabins []cabinDoc           `json:"commercialCabins"`
		FareFamilies     []fareFamilyDoc      `json:"fareFamilies"`
		PassengerTypes   []passengerTypeRules `json:"passengerTypes"`
		Currencies       []currencyDoc        `json:"currencies"`
		Links            referenceLinks       `json:"_links"`
	}
	cabinDoc struct {
		Code  string `json:"code"`
		Label string `json:"label"`
	}
	fareFamilyDoc struct {
		familyDoc
		CommercialCabin string `json:"commercialCabin"`
		Rank            int    `json:"rank"`
		MilesPercent    int    `json:"milesPercent"`
	}
	// passengerTypeRules is a passenger type with the rules a search holds it to.
	passengerTypeRules struct {
		Code        string `json:"code"`
		Label       string `json:"label"`
		MinAge      int    `json:"minAge"`
		MaxAge      *int   `json:"maxAge,omitempty"`
		Seat        bool   `json:"seat"`
		Accompanied bool   `json:"accompanied"`
	}
	currencyDoc struct {
		Code     string `json:"code"`
		Decimals int    `json:"decimals"`
	}
	referenceLinks struct {
		Self  link `json:"self"`
		Deals link `json:"deals"`
	}
)

// DefaultMarket is the point of sale when the request names none.
const DefaultMarket = flightgraph.DefaultMarket

// referenceData answers GET /opendata/flightoffers/reference-data: the market (point of sale) and
// each country of the network with its airports as origins, the airports they fly to, and the
// passenger types, labelled in the request's language.
func (a *API) referenceData(w http.ResponseWriter, r *http.Request) {
	rd, err := a.Travel.ReferenceData(r.Context())
	if err != nil {
		a.Error(w, r, err)
		return
	}
	render(w, r, referenceData{Market: rd.Market, Country: countriesOf(rd, language(r.Context())), Links: self(r)})
}

// offersReferenceData answers GET /opendata/offers/v1/reference-data: the Open Data reference
// data of the market (the same document, from the same code), with the market's currency, the
// cabins, fare families, passenger types with their rules, and the currencies a search takes.
func (a *API) offersReferenceData(w http.ResponseWriter, r *http.Request) {
	rd, err := a.Travel.ReferenceData(r.Context())
	if err != nil {
		a.Error(w, r, err)
		return
	}
	lang := language(r.Context())
	out := offersReferenceData{Market: rd.Market, Currency: rd.Currency, Country: countriesOf(rd, lang),
		CommercialCabins: cabinsOf(rd.Cabins, lang), FareFamilies: fareFamiliesOf(rd.FareFamilies), PassengerTypes: passengerRulesOf(rd.PassengerTypes, lang),
		Links: referenceLinks{Self: link{r.URL.RequestURI()}, Deals: link{"/opendata/offers/v1/reference-data/deals"}}}
	for _, c := range rd.Currencies {
		out.Currencies = append(out.Currencies, currencyDoc{c.Code, c.Digits})
	}
	render(w, r, out)
}

// countriesOf is the reference data's countries in the original's shape, labelled in lang.
func countriesOf(rd *flightgraph.ReferenceData, lang string) []countryData {
	types := make([]passengerType, len(rd.PassengerTypes))
	for i, t := range rd.PassengerTypes {
		types[i] = passengerType{Code: t.Code, Label: t.Label(lang)}
	}
	out := []countryData{}
	for _, c := range rd.Countries {
		cd := countryData{Code: c.Code, Label: c.Label(lang), MaximumNumberOfSeats: rd.MaxSeats, MinimumNumberOfAdults: rd.MinAdults,
			DefaultAirport: c.DefaultAirport.Code, Origins: codesOf(c.Origins), Destinations: codesOf(c.Destinations), PassengerTypes: types}
		out = append(out, cd)
	}
	return out
}

func codesOf(airports []*flightgraph.Airport) []string {
	out := make([]string, len(airports))
	for i, a := range airports {
		out[i] = a.Code
	}
	return out
}

func cabinsOf(cabins []flightgraph.CabinClass, lang string) []cabinDoc {
	out := make([]cabinDoc, len(cabins))
	for i, c := range cabins {
		out[i] = cabinDoc{Code: string(c), Label: pick(cabinLabels[c], lang)}
	}
	return out
}

func fareFamiliesOf(fams []*flightgraph.FareFamily) []fareFamilyDoc {
	out := make([]fareFamilyDoc, len(fams))
	for i, f := range fams {
		out[i] = fareFamilyDoc{familyDoc: familyOf(f), CommercialCabin: string(f.Cabin), Rank: f.Rank, MilesPercent: f.MilesPercent}
	}
	return out
}

func passengerRulesOf(types []*flightgraph.PassengerType, lang string) []passengerTypeRules {
	out := make([]passengerTypeRules, len(types))
	for i, t := range types {
		out[i] = passengerTypeRules{Code: t.Code, Label: t.Label(lang), MinAge: t.MinAge, Seat: t.Seat, Accompanied: t.Accompanied}
		if t.MaxAge > 0 {
			out[i].MaxAge = &t.MaxAge
		}
	}
	return out
}

type (
	dealsReferenceDoc struct {
		Market    string           `json:"market"`
		Currency  string           `json:"currency"`
		Origins   []dealOriginDoc  `json:"origins"`
		Months    []string         `json:"months"`
		DealTypes []cabinDoc       `json:"dealTypes"`
		Links     dealsRefLinksDoc `json:"_links"`
	}
	dealOriginDoc struct {
		Origin               typedPlaceDoc `json:"origin"`
		DestinationZoneCodes []string      `json:"destinationZoneCodes"`
		DestinationsByZone   []zoneDoc     `json:"destinationsByZone"`
		Links                dealLinksDoc  `json:"_links"`
	}
	// typedPlaceDoc is a place as the original's deals reference names it.
	typedPlaceDoc struct {
		Code  string `json:"code"`
		Type  string `json:"type"` // CITY or AIRPORT (RAILWAY_STATION in the original; the network has none)
		Label string `json:"label"`
	}
	zoneDoc struct {
		Zone         codeLabelDoc    `json:"zone"`
		Destinations []typedPlaceDoc `json:"destinations"`
	}
	codeLabelDoc struct {
		Code  string `json:"code"`
		Label string `json:"label"`
	}
	dealLinksDoc struct {
		AllDeals link `json:"allDeals"`
	}
	dealsRefLinksDoc struct {
		Self           link `json:"self"`
		BestFareOffers link `json:"bestFareOffers"`
	}
)

// dealsReference answers GET /opendata/offers/v1/reference-data/deals: the market's origins, each
// with the places it reaches by zone, the months with flights, and the deal types.
func (a *API) dealsReference(w http.ResponseWriter, r *http.Request) {
	ref, err := a.Travel.DealsReference(r.Context())
	if err != nil {
		a.Error(w, r, err)
		return
	}
	lang := language(r.Context())
	out := dealsReferenceDoc{Market: ref.Market, Currency: ref.Currency, Origins: []dealOriginDoc{}, Months: ref.Months,
		Links: dealsRefLinksDoc{Self: link{r.URL.RequestURI()}, BestFareOffers: link{bestFaresPath}}}
	for _, k := range ref.Types {
		out.DealTypes = append(out.DealTypes, cabinDoc{Code: string(k.Code), Label: k.Label(lang)})
	}
	for _, o := range ref.Origins {
		d := dealOriginDoc{Origin: typedPlaceOf(o.Origin, lang), DestinationZoneCodes: []string{}, DestinationsByZone: []zoneDoc{},
			Links: dealLinksDoc{AllDeals: link{bestFaresPath + "/all-deals"}}}
		for _, z := range o.Zones {
			zd := zoneDoc{Zone: codeLabelDoc{z.Zone.Code, z.Zone.Label(lang)}}
			for _, p := range z.Destinations {
				zd.Destinations = append(zd.Destinations, typedPlaceOf(p, lang))
			}
			d.DestinationZoneCodes = append(d.DestinationZoneCodes, z.Zone.Code)
			d.DestinationsByZone = append(d.DestinationsByZone, zd)
		}
		out.Origins = append(out.Origins, d)
	}
	render(w, r, out)
}

func typedPlaceOf(p *flightgraph.LabelledPlace, lang string) typedPlaceDoc {
	return typedPlaceDoc{Code: p.Code, Type: p.PlaceType(), Label: p.City.Label(lang)}
}

type (
	searchContextDoc struct {
		PointOfSale      pointOfSaleDoc      `json:"pointOfSale"`
		Origin           contextPlaceDoc     `json:"origin"`
		Destination      contextPlaceDoc     `json:"destination"`
		DepartureDate    string              `json:"departureDate,omitempty"`
		BookingWindow    bookingWindowDoc    `json:"bookingWindow"`
		Connections      []connectionOption  `json:"connections"`
		CommercialCabins []cabinDoc          `json:"commercialCabins"`
		FareFamilies     []fareFamilyDoc     `json:"fareFamilies"`
		Passengers       passengerContextDoc `json:"passengers"`
		OfferValidity    string              `json:"offerValidity"`
		Links            searchContextLinks  `json:"_links"`
	}
	pointOfSaleDoc struct {
		Market   string `json:"market"`
		Currency string `json:"currency"`
		Language string `json:"language"`
		Host     string `json:"host,omitempty"`
	}
	contextPlaceDoc struct {
		typedPlaceDoc
		Airports []string `json:"airports"`
	}
	bookingWindowDoc struct {
		FirstDate string `json:"firstDate"`
		LastDate  string `json:"lastDate"`
	}
	connectionOption struct {
		NumberOfStops int       `json:"numberOfStops"`
		Via           *placeRef `json:"via,omitempty"`
		Carriers      []string  `json:"carriers"`
		Itineraries   *int      `json:"itineraries,omitempty"`
	}
	passengerContextDoc struct {
		MaximumNumberOfSeats  int                  `json:"maximumNumberOfSeats"`
		MinimumNumberOfAdults int                  `json:"minimumNumberOfAdults"`
		PassengerTypes        []passengerTypeRules `json:"passengerTypes"`
	}
	searchContextLinks struct {
		Self             link  `json:"self"`
		AvailableOffers  *link `json:"availableOffers,omitempty"`
		LowestFareOffers link  `json:"lowestFareOffers"`
	}
)

// searchContext answers GET /opendata/offers/v1/search-context?origin=…&destination=…[&departureDate=…]:
// what a search between the two places may ask for where the request sells.
func (a *API) searchContext(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	sc, err := a.Travel.SearchContext(r.Context(), v.Get("origin"), v.Get("destination"), v.Get("departureDate"))
	if err != nil {
		a.Error(w, r, err)
		return
	}
	lang := language(r.Context())
	place := func(p *flightgraph.LabelledPlace) contextPlaceDoc {
		return contextPlaceDoc{typedPlaceDoc: typedPlaceOf(p, lang), Airports: p.AirportCodes()}
	}
	out := searchContextDoc{PointOfSale: pointOfSaleDoc{sc.Market, sc.Currency, sc.Language, sc.Host}, Origin: place(sc.Origin), Destination: place(sc.Destination),
		DepartureDate: sc.DepartureDate, BookingWindow: bookingWindowDoc{sc.FirstDate, sc.LastDate}, Connections: []connectionOption{},
		CommercialCabins: cabinsOf(sc.Cabins, lang), FareFamilies: fareFamiliesOf(sc.FareFamilies),
		Passengers:    passengerContextDoc{sc.MaxSeats, sc.MinAdults, passengerRulesOf(sc.PassengerTypes, lang)},
		OfferValidity: flightgraph.ISODuration(sc.OfferValidity)}
	for _, c := range sc.Connections {
		o := connectionOption{NumberOfStops: c.Stops(), Carriers: c.Carriers, Itineraries: c.Itineraries}
		if c.Via != nil {
			o.Via = &placeRef{c.Via.Code}
		}
		out.Connections = append(out.Connections, o)
	}
	search := url.Values{"origin": {sc.Origin.Code}, "destination": {sc.Destination.Code}, "passengers": {"ADT"}, "commercialCabins": {"ALL"}}
	calendar := url.Values{"dateInterval": {sc.FirstDate + "/" + sc.LastDate}}
	for k, vs := range search {
		calendar[k] = vs
	}
	out.Links = searchContextLinks{Self: link{r.URL.RequestURI()}, LowestFareOffers: link{"/opendata/offers/v1/lowest-fare-offers?" + calendar.Encode()}}
	if sc.DepartureDate != "" {
		search.Set("departureDate", sc.DepartureDate)
		out.Links.AvailableOffers = &link{"/opendata/offers/v1/available-offers?" + search.Encode()}
	}
	render(w, r, out)
}
