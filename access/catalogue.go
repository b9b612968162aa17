package access

import "github.com/flightgraph/flightgraph"

// Products is the built-in catalogue of APIs. Public products have the Default plan; partner and
// internal ones a plan of their own. Synced into the store at start-up (SyncCatalogue).
var Products = []*flightgraph.Product{
	{Slug: "opendata", Name: "Open Data", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthAPIKey,
		Description: "Reference data: airports, cities, countries and the offers reference data.",
		Operations:  []string{"GET /opendata/flightoffers/reference-data", "query airport, airports, city, cities, country, countries"}},
	{Slug: "flightstatus", Name: "Flight Status", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthAPIKey,
		Description: "Operational flights and their status, by route, date or flight number.",
		Operations:  []string{"GET /opendata/flightstatus", "GET /opendata/flightstatus/{id}", "query flight, flights, flightStatus"}},
	{Slug: "inspire", Name: "Amenities", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthAPIKey,
		Description: "Aircraft configurations, cabins and their amenities; destination inspiration.",
		Operations:  []string{"GET /opendata/inspire/v2/amenities", "query aircraft, fleet, amenities"}},
	{Slug: "schedule", Name: "Network and Schedule", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthAPIKey,
		Description: "The network's routes and the flight schedule.",
		Operations:  []string{"GET /opendata/schedule/v1/routes", "GET /opendata/schedule/v1/flights", "query routes, carriers"}},
	{Slug: "offers", Name: "Offers", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthOAuth,
		Grants:      []flightgraph.Grant{flightgraph.GrantClientCredentials},
		Description: "Flight offers: search, pricing, taxes, conditions and shopping carts.",
		Operations:  []string{"GET /opendata/offers/v1/ping"}},
	{Slug: "baggage", Name: "Baggage allowance", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthOAuth,
		Grants:      []flightgraph.Grant{flightgraph.GrantClientCredentials, flightgraph.GrantPassword},
		Description: "Baggage allowances before booking; loyalty allowances need a customer's password-grant token.",
		Operations:  []string{"GET /opendata/baggage/v1/ping"}},
	{Slug: "metasearch", Name: "Metasearch", Visibility: flightgraph.VisibilityPartner, Auth: flightgraph.AuthAPIKey,
		Description: "Availability and fares for metasearch partners.",
		Operations:  []string{"GET /opendata/metasearch/v1/ping"}},
	{Slug: "cargo", Name: "Cargo", Visibility: flightgraph.VisibilityInternal, Auth: flightgraph.AuthOAuth,
		Grants:      []flightgraph.Grant{flightgraph.GrantClientCredentials},
		Description: "Cargo capacity and bookings, for internal staff.",
		Operations:  []string{"GET /opendata/cargo/v1/ping"}},
}

// standardPlans are the plans of the built-in products.
func standardPlans() []*flightgraph.Plan {
	var out []*flightgraph.Plan
	for _, p := range Products {
		switch p.Visibility {
		case flightgraph.VisibilityPublic:
			out = append(out, &flightgraph.Plan{ID: "plan_" + p.Slug + "_default", Product: p.Slug, Name: flightgraph.DefaultPlan, Limits: flightgraph.DefaultLimits})
		case flightgraph.VisibilityPartner:
			out = append(out, &flightgraph.Plan{ID: "plan_" + p.Slug + "_partner", Product: p.Slug, Name: "Partner", Limits: flightgraph.Limits{PerSecond: 50, PerDay: 500_000}})
		case flightgraph.VisibilityInternal:
			out = append(out, &flightgraph.Plan{ID: "plan_" + p.Slug + "_internal", Product: p.Slug, Name: "Internal", Limits: flightgraph.Limits{PerSecond: 100, PerDay: 1_000_000}})
		}
	}
	return out
}

// product returns the built-in product with this slug, or nil.
func product(slug string) *flightgraph.Product {
	for _, p := range Products {
		if p.Slug == slug {
			return p
		}
	}
	return nil
}
