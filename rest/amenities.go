package rest

import (
	"net/http"
	"strings"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/travel"
)

type (
	amenityList struct {
		AircraftConfiguration string        `json:"aircraftConfiguration"`
		Amenities             []amenityDoc  `json:"amenities"`
		Flight                *flightRefDoc `json:"flight,omitempty"`
		Links                 links         `json:"_links"`
	}
	amenityDoc struct {
		CabinClass      string `json:"cabinClass"`
		CabinClassLabel string `json:"cabinClassLabel"`
		Category        string `json:"category"`
		Feature         string `json:"feature"`
		Name            string `json:"name"`
		Description     string `json:"description"`
		Weight          int    `json:"weight"`
	}
	flightRefDoc struct {
		ID            string `json:"id"`
		Carrier       string `json:"carrier"`
		FlightNumber  int    `json:"flightNumber"`
		DepartureDate string `json:"departureDate"`
	}
)

// amenities answers GET /opendata/inspire/v2/amenities: by aircraft configuration (acv), or by
// flight (carrier, flightNumber, departureDate), with an optional cabinClass, category and limit;
// results by business weight.
func (a *API) amenities(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	var (
		class    flightgraph.CabinClass
		category flightgraph.AmenityCategory
		limit    int
		err      error
	)
	if v := q.Get("cabinClass"); v != "" {
		if class, err = flightgraph.ParseCabinClass("cabinClass", v); err != nil {
			a.Error(w, r, err)
			return
		}
	}
	if v := q.Get("category"); v != "" {
		category = flightgraph.AmenityCategory(strings.ToUpper(v))
		switch category {
		case flightgraph.AmenitySeat, flightgraph.AmenityMeal, flightgraph.AmenityEntertainment, flightgraph.AmenityConnectivity, flightgraph.AmenityComfort:
		default:
			a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "category", "category is seat, meal, entertainment, connectivity or comfort, got %q", v))
			return
		}
	}
	if n, ok, err := number(q, "limit"); err != nil {
		a.Error(w, r, err)
		return
	} else if ok {
		if limit = n; limit < 1 || limit > 100 {
			a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "limit", "limit must be between 1 and 100"))
			return
		}
	}
	out := amenityList{Links: self(r), Amenities: []amenityDoc{}}
	var list []*flightgraph.Amenity
	switch acv, flight := q.Get("aircraftConfiguration"), q.Get("flightNumber"); {
	case flight != "":
		date := q.Get("departureDate")
		if date == "" {
			a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "departureDate", "a flight needs its departureDate"))
			return
		}
		carrier := strings.ToUpper(q.Get("carrier"))
		if carrier == "" {
			carrier = flightgraph.PointOfSaleFromContext(ctx).Brand
		}
		if carrier == "" {
			a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "carrier", "a flight needs its carrier, or an svc-travel-host header"))
			return
		}
		n, _, err := number(q, "flightNumber")
		if err != nil {
			a.Error(w, r, err)
			return
		}
		out.AircraftConfiguration, list, err = a.Travel.FlightAmenities(ctx, travel.FlightAmenityQuery{Carrier: carrier, FlightNumber: n, Date: date,
			CabinClass: class, Category: category, Limit: limit})
		if err != nil {
			a.Error(w, r, err)
			return
		}
		out.Flight = &flightRefDoc{ID: flightgraph.FlightID{Date: date, Carrier: carrier, Number: n}.String(), Carrier: carrier, FlightNumber: n, DepartureDate: date}
	case acv != "":
		list, err = a.Travel.Amenities(ctx, travel.AmenityQuery{Configuration: acv, CabinClass: class, Category: category, Limit: limit})
		if err != nil {
			a.Error(w, r, err)
			return
		}
		out.AircraftConfiguration = strings.ToUpper(acv)
	default:
		a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "aircraftConfiguration", "give an aircraftConfiguration, or a flightNumber with its departureDate"))
		return
	}
	for _, am := range list {
		out.Amenities = append(out.Amenities, amenityDoc{CabinClass: string(am.CabinClass), CabinClassLabel: pick(cabinLabels[am.CabinClass], language(ctx)),
			Category: strings.ToLower(string(am.Category)), Feature: am.Feature, Name: am.Name, Description: am.Description, Weight: am.Weight})
	}
	render(w, r, out)
}
