package rest

import (
	"net/http"
	"slices"

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
)

// DefaultMarket is the point of sale when the request names none.
const DefaultMarket = "NL"

// referenceData answers GET /opendata/flightoffers/reference-data: the market (point of sale) and
// each country of the network with its airports as origins, the airports they fly to, and the
// passenger types, labelled in the request's language.
func (a *API) referenceData(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	pos, lang := flightgraph.PointOfSaleFromContext(ctx), language(ctx)
	countries, err := a.Travel.Countries(ctx)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	airports, err := a.Travel.Places.Airports(ctx)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	routes, err := a.Travel.Network.AllRoutes(ctx)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	market := pos.Country
	if market == "" {
		market = DefaultMarket
	}
	byCountry := map[string][]*flightgraph.Airport{}
	countryOf := map[string]string{}
	for _, ap := range airports {
		byCountry[ap.CountryCode] = append(byCountry[ap.CountryCode], ap)
		countryOf[ap.Code] = ap.CountryCode
	}
	dests := map[string][]string{}
	for _, rt := range routes {
		c := countryOf[rt.OriginCode]
		if !slices.Contains(dests[c], rt.DestinationCode) {
			dests[c] = append(dests[c], rt.DestinationCode)
		}
	}
	var types []passengerType
	for _, code := range []string{"ADT", "YTH", "CHD", "INF"} {
		types = append(types, passengerType{Code: code, Label: pick(passengerLabels[code], lang)})
	}
	out := referenceData{Market: market, Links: self(r), Country: []countryData{}}
	for _, c := range countries {
		aps := byCountry[c.Code]
		if len(aps) == 0 {
			continue
		}
		cd := countryData{Code: c.Code, Label: c.Label(lang), MaximumNumberOfSeats: 9, MinimumNumberOfAdults: 1,
			DefaultAirport: aps[0].Code, Destinations: dests[c.Code], PassengerTypes: types}
		for _, ap := range aps {
			cd.Origins = append(cd.Origins, ap.Code)
			if ap.Hub {
				cd.DefaultAirport = ap.Code
			}
		}
		slices.Sort(cd.Destinations)
		if cd.Destinations == nil {
			cd.Destinations = []string{}
		}
		out.Country = append(out.Country, cd)
	}
	render(w, r, out)
}
