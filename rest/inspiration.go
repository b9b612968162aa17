package rest

import (
	"net/http"
	"net/url"

	"github.com/flightgraph/flightgraph"
)

type (
	inspirationDoc struct {
		Origin       inspirationPlaceDoc `json:"origin"`
		Month        string              `json:"month"`
		TravelClass  string              `json:"travelClass"`
		Currency     string              `json:"currency"`
		Destinations []destinationDoc    `json:"destinations"`
		Links        links               `json:"_links"`
	}
	// inspirationPlaceDoc is an origin or destination as the caller (or the inspiration) names
	// it: a city, or an airport with its city; labels in the request's language.
	inspirationPlaceDoc struct {
		Code    string        `json:"code"`
		Type    string        `json:"type"` // CITY or AIRPORT
		Label   string        `json:"label"`
		City    placeRef      `json:"city"`
		Country countryRefDoc `json:"country"`
	}
	countryRefDoc struct {
		Code  string `json:"code"`
		Label string `json:"label"`
	}
	destinationDoc struct {
		Destination   inspirationPlaceDoc `json:"destination"`
		LowestPrice   amountDoc           `json:"lowestPrice"`
		DepartureDate string              `json:"departureDate"`
		NumberOfStops int                 `json:"numberOfStops"`
		Links         destinationLinks    `json:"_links"`
	}
	// destinationLinks lead to the offers behind a destination's price: the search of its
	// departure date, which lists the offer, and the month's calendar, which gives the price.
	destinationLinks struct {
		Offers           link `json:"offers"`
		LowestFareOffers link `json:"lowestFareOffers"`
	}
)

// destinationsInspiration answers GET /opendata/inspire/v2/destinations/inspiration: where the
// flights from origin go in a month, each destination with the lowest price of the month for one
// adult in a travel class, cheapest first (travel.Service.Inspiration). Query parameters: origin,
// price (requires origin: DEST_400.000), currency, month (YYYY-MM), travelClass, destination,
// limit.
func (a *API) destinationsInspiration(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v := r.URL.Query()
	q := &flightgraph.InspirationQuery{Origin: v.Get("origin"), MaxPrice: v.Get("price"), Currency: v.Get("currency"), Month: v.Get("month"),
		Destination: v.Get("destination"), Limit: flightgraph.DefaultDestinations}
	if c := v.Get("travelClass"); c != "" {
		cabin, err := flightgraph.ParseCabinClass("travelClass", c)
		if err != nil {
			a.Error(w, r, err)
			return
		}
		q.Cabin = cabin
	}
	if n, ok, err := number(v, "limit"); err != nil {
		a.Error(w, r, err)
		return
	} else if ok {
		q.Limit = n
	}
	insp, err := a.Travel.Inspiration(ctx, q)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := inspirationOf(insp, language(ctx))
	out.Links = self(r)
	render(w, r, out)
}

// inspirationOf is an inspiration's document, labelled in lang, its destinations linked to the
// offers behind their prices: the search of the departure date and the month's calendar, for one
// adult in the cabin and currency.
func inspirationOf(insp *flightgraph.Inspiration, lang string) inspirationDoc {
	out := inspirationDoc{Origin: inspirationPlaceOf(insp.Origin, insp.OriginCity, insp.OriginCountry, lang), Month: insp.Month, TravelClass: string(insp.Cabin),
		Currency: insp.Currency, Destinations: make([]destinationDoc, len(insp.Destinations))}
	days := flightgraph.MonthDays(insp.Month)
	for i, d := range insp.Destinations {
		search := url.Values{"origin": {insp.Origin.Code}, "destination": {d.Code()}, "passengers": {"ADT"},
			"commercialCabins": {string(insp.Cabin)}, "currency": {insp.Currency}}
		calendar := url.Values{"dateInterval": {days[0] + "/" + days[len(days)-1]}, "type": {string(flightgraph.CalendarMonth)}}
		for k, vs := range search {
			calendar[k] = vs
		}
		search.Set("departureDate", d.DepartureDate())
		price := d.LowestPrice()
		out.Destinations[i] = destinationDoc{Destination: inspirationPlaceOf(d.Place, d.City, d.Country, lang), LowestPrice: amountDoc{price.Decimal(), price.Currency},
			DepartureDate: d.DepartureDate(), NumberOfStops: d.Stops(), Links: destinationLinks{
				Offers:           link{"/opendata/offers/v1/available-offers?" + search.Encode()},
				LowestFareOffers: link{"/opendata/offers/v1/lowest-fare-offers?" + calendar.Encode()}}}
	}
	return out
}

// inspirationPlaceOf describes a place of an inspiration: a city when its code is its city's, an
// airport otherwise; labelled with its city's label.
func inspirationPlaceOf(p *flightgraph.Place, city *flightgraph.City, country *flightgraph.Country, lang string) inspirationPlaceDoc {
	d := inspirationPlaceDoc{Code: p.Code, Type: "CITY", Label: city.Label(lang), City: placeRef{city.Code}, Country: countryRefDoc{Code: city.CountryCode}}
	if p.Code != city.Code {
		d.Type = "AIRPORT"
	}
	if country != nil {
		d.Country.Label = country.Label(lang)
	}
	return d
}
