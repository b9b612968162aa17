package rest

import (
	"net/http"
)

// Route is one REST route: its method and pattern, and the API product it belongs to ("" takes
// the product from the {api} path segment).
type Route struct {
	Pattern string
	Product string
	handle  func(*API) http.HandlerFunc
}

// Routes lists every REST route. The OpenAPI document describes exactly these (a test holds
// them to it).
var Routes = []Route{
	{"GET /opendata/flightoffers/reference-data", "opendata", func(a *API) http.HandlerFunc { return a.referenceData }},
	{"GET /opendata/flightstatus", "flightstatus", func(a *API) http.HandlerFunc { return a.flights }},
	{"GET /opendata/flightstatus/{id}", "flightstatus", func(a *API) http.HandlerFunc { return a.flight }},
	{"GET /opendata/inspire/v2/amenities", "inspire", func(a *API) http.HandlerFunc { return a.amenities }},
	{"GET /opendata/schedule/v1/routes", "schedule", func(a *API) http.HandlerFunc { return a.routes }},
	{"GET /opendata/schedule/v1/flights", "schedule", func(a *API) http.HandlerFunc { return a.schedule }},
	{"GET /opendata/{api}/{version}/ping", "", func(a *API) http.HandlerFunc { return a.ping }},
}

// Register adds every route to mux. Middleware order, outermost first: the access guard (it
// authenticates, authorizes the product and applies its limits), then the header contract
// (Accept, Accept-Language, svc-travel-country, svc-travel-host), then the handler.
func (a *API) Register(mux *http.ServeMux) {
	for _, rt := range Routes {
		product := rt.Product
		classify := func(r *http.Request) ([]string, error) {
			if product == "" {
				return []string{r.PathValue("api")}, nil
			}
			return []string{product}, nil
		}
		mux.Handle(rt.Pattern, a.Guard.Middleware(classify, a.Error)(a.contract(rt.handle(a))))
	}
}
