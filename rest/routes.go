package rest

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// Route is one REST route: its method and pattern, the API product it belongs to ("" takes the
// product from the {api} path segment), and what one call of it weighs (the calls it is charged,
// and whether it is heavy work: flightgraph.Weight).
type Route struct {
	Pattern string
	Product string
	flightgraph.Weight
	handle func(*API) http.HandlerFunc
}

// light is the weight of most routes: one call, no heavy work.
var light = flightgraph.Weight{}

// heavy is the weight of a route that reads and prices many days or destinations: it is charged
// calls and runs in a heavy-work slot. The figures are the schema's (@api) for the same work.
func heavy(calls int) flightgraph.Weight { return flightgraph.Weight{Calls: calls, Heavy: true} }

// Routes lists every REST route. The OpenAPI document describes exactly these (a test holds
// them to it).
var Routes = []Route{
	{"GET /opendata/flightoffers/reference-data", "opendata", light, func(a *API) http.HandlerFunc { return a.referenceData }},
	{"GET /opendata/flightstatus", "flightstatus", light, func(a *API) http.HandlerFunc { return a.flights }},
	{"GET " + EventsPath, "flightstatus", light, func(a *API) http.HandlerFunc { return a.flightEvents }},
	{"GET /opendata/flightstatus/{id}", "flightstatus", light, func(a *API) http.HandlerFunc { return a.flight }},
	{"GET /opendata/inspire/v2/amenities", "inspire", light, func(a *API) http.HandlerFunc { return a.amenities }},
	{"GET /opendata/inspire/v2/destinations/inspiration", "inspire", heavy(5), func(a *API) http.HandlerFunc { return a.destinationsInspiration }},
	{"GET /opendata/schedule/v1/routes", "schedule", light, func(a *API) http.HandlerFunc { return a.routes }},
	{"GET /opendata/schedule/v1/flights", "schedule", light, func(a *API) http.HandlerFunc { return a.schedule }},
	{"POST /opendata/offers/v1/available-offers", "offers", light, func(a *API) http.HandlerFunc { return a.availableOffersPost }},
	{"GET /opendata/offers/v1/available-offers", "offers", light, func(a *API) http.HandlerFunc { return a.availableOffersGet }},
	{"POST /opendata/offers/v1/available-offers/all", "offers", light, func(a *API) http.HandlerFunc { return a.availableOffersAll }},
	{"GET /opendata/offers/v1/upsell-offers", "offers", light, func(a *API) http.HandlerFunc { return a.upsellGet }},
	{"POST /opendata/offers/v1/upsell-offers", "offers", light, func(a *API) http.HandlerFunc { return a.upsellPost }},
	{"POST /opendata/offers/v1/lowest-fare-offers", "offers", heavy(2), func(a *API) http.HandlerFunc { return a.lowestFaresPost }},
	{"GET /opendata/offers/v1/lowest-fare-offers", "offers", heavy(2), func(a *API) http.HandlerFunc { return a.lowestFaresGet }},
	{"GET /opendata/offers/v1/ticket-conditions", "offers", light, func(a *API) http.HandlerFunc { return a.ticketConditions }},
	{"GET /opendata/offers/v1/priceDetails", "offers", light, func(a *API) http.HandlerFunc { return a.priceDetails }},
	{"GET /opendata/offers/v1/tax-breakdown", "offers", light, func(a *API) http.HandlerFunc { return a.taxBreakdown }},
	{"GET /opendata/offers/v1/flightDetails", "offers", light, func(a *API) http.HandlerFunc { return a.flightDetails }},
	{"POST /opendata/offers/v1/shopping-carts", "offers", light, func(a *API) http.HandlerFunc { return a.newCart }},
	{"GET /opendata/offers/v1/shopping-carts/{cartId}", "offers", light, func(a *API) http.HandlerFunc { return a.cart }},
	{"GET /opendata/offers/v1/related-products", "offers", light, func(a *API) http.HandlerFunc { return a.relatedProducts }},
	{"POST /opendata/offers/v1/related-products/shopping-carts", "offers", light, func(a *API) http.HandlerFunc { return a.addProducts }},
	{"POST /opendata/offers/v1/mail-my-search", "offers", light, func(a *API) http.HandlerFunc { return a.mailMySearch }},
	{"GET /opendata/offers/v1/reference-data", "offers", light, func(a *API) http.HandlerFunc { return a.offersReferenceData }},
	{"GET /opendata/offers/v1/reference-data/deals", "offers", light, func(a *API) http.HandlerFunc { return a.dealsReference }},
	{"GET /opendata/offers/v1/search-context", "offers", light, func(a *API) http.HandlerFunc { return a.searchContext }},
	{"POST /opendata/offers/v1/flights-availability", "offers", light, func(a *API) http.HandlerFunc { return a.flightsAvailability }},
	{"POST /opendata/offers/v1/best-fare-offers", "offers", heavy(2), func(a *API) http.HandlerFunc { return a.bestFareOffers }},
	{"POST /opendata/offers/v1/best-fare-offers/all-deals", "offers", heavy(5), func(a *API) http.HandlerFunc { return a.allDeals }},
	// The metasearch partners' feed lives under the offers API's path, as the original's does,
	// but belongs to the partner API: a developer's key or token does not reach it.
	{"POST /opendata/offers/v1/bestOffers/feed", "metasearch", heavy(5), func(a *API) http.HandlerFunc { return a.bestOffersFeed }},
	{"GET /opendata/baggages/allowances", "baggage", light, func(a *API) http.HandlerFunc { return a.baggageAllowances }},
	// The six operations of the original path, each under the name the spec gives it
	// (baggageOperations: All Allowances without Loyalty, Base Allowances, …).
	{"GET /opendata/baggages/v1/all-allowances-without-loyalty", "baggage", light, func(a *API) http.HandlerFunc { return a.baggageOf(flightgraph.BaggageAll) }},
	{"GET /opendata/baggages/v1/base-allowances", "baggage", light, func(a *API) http.HandlerFunc { return a.baggageOf(flightgraph.BaggageBase) }},
	{"GET /opendata/baggages/v1/loyalty-allowances", "baggage", light, func(a *API) http.HandlerFunc { return a.baggageOf(flightgraph.BaggageLoyalty) }},
	{"GET /opendata/baggages/v1/paid-options-with-loyalty", "baggage", light, func(a *API) http.HandlerFunc { return a.baggageOf(flightgraph.BaggagePaidLoyalty) }},
	{"GET /opendata/baggages/v1/paid-options-without-loyalty", "baggage", light, func(a *API) http.HandlerFunc { return a.baggageOf(flightgraph.BaggagePaid) }},
	{"GET /opendata/baggages/v1/all-allowances-with-loyalty", "baggage", light, func(a *API) http.HandlerFunc { return a.baggageOf(flightgraph.BaggageAllLoyalty) }},
	{"GET /opendata/cargo/v1/flights/{flightId}/capacity", "cargo", light, func(a *API) http.HandlerFunc { return a.cargoCapacity }},
	{"GET /opendata/{api}/{version}/ping", "", light, func(a *API) http.HandlerFunc { return a.ping }},
}

// Operations are the REST operations of every product, as Routes declare them: each route of a
// product's, and the ping of every product at its version.
func Operations() []flightgraph.Operation {
	var ops []flightgraph.Operation
	for _, rt := range Routes {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		if rt.Product != "" {
			ops = append(ops, flightgraph.Operation{Product: rt.Product, Edge: method, Name: path, Title: titleOf(rt.Pattern), Weight: rt.Weight})
			continue
		}
		for _, p := range access.Products { // a route of every product: {api} names it
			name := strings.NewReplacer("{api}", APIName(p.Slug), "{version}", versionOf(p.Slug)).Replace(path)
			ops = append(ops, flightgraph.Operation{Product: p.Slug, Edge: method, Name: name})
		}
	}
	return ops
}

// Register adds every route to mux. Middleware order, outermost first: the route's cache policy
// (RouteCache: set on the answer as it is written, no-store on any refusal or error), the access
// guard (it authenticates, authorizes the product and applies its limits), then the header contract
// (Accept, Accept-Language, svc-travel-country, svc-travel-host), then the handler, which
// requires its product of the guard's pass once more before it does any work.
func (a *API) Register(mux *http.ServeMux) {
	for _, rt := range Routes {
		product := rt.Product
		productOf := func(r *http.Request) string {
			if product == "" {
				return productOfAPI(r.PathValue("api"))
			}
			return product
		}
		weight := rt.Weight
		classify := func(r *http.Request) (access.Charge, error) {
			p := productOf(r)
			if weight == light {
				return access.Light(p), nil
			}
			heavy := weight.Heavy
			if heavy {
				arrived(r)
				// A call a kept quote answers does no heavy work: charged as ever, it takes no
				// heavy-work slot, so that it never waits behind, or is shed for, the searches
				// that make quotes (answered serves it).
				heavy = !a.quoteKept(r, rt.Pattern)
			}
			return access.Charge{Products: []string{p}, Calls: map[string]int{p: weight.Charged()}, Heavy: heavy}, nil
		}
		handle := a.answered(rt.Pattern, RouteCache[rt.Pattern], rt.Weight.Heavy, rt.handle(a))
		required := func(w http.ResponseWriter, r *http.Request) {
			if err := access.Require(r.Context(), productOf(r)); err != nil {
				a.Log.ErrorContext(r.Context(), "defect: a REST handler was reached without its API admitted",
					"requestId", flightgraph.RequestIDFromContext(r.Context()), "path", r.URL.Path, "err", err)
				a.Error(w, r, err)
				return
			}
			handle(w, r)
		}
		mux.Handle(rt.Pattern, cached(RouteCache[rt.Pattern], withQuoteHit(a.Guard.Middleware(classify, a.Error)(a.contract(http.HandlerFunc(required))))))
	}
}

// arrived reads what arrives of a heavy call's body (at most maxSearchBytes+1 bytes, as sent)
// before the call takes a heavy-work slot, so that a client who sends its headers and then
// dribbles its body, or never sends it, holds no slot while nothing runs. The handler reads the
// same bytes, and the same read error after them, from r.Body as it would have (peek).
func arrived(r *http.Request) { peek(r) }

// peek reads r's body, at most maxSearchBytes+1 bytes of it, and puts them back: whoever reads
// r.Body next reads the same bytes, and the same read error after them. whole reports that the
// body ended within maxSearchBytes without an error (no body is a whole empty one).
func peek(r *http.Request) (body []byte, whole bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	got, err := io.ReadAll(io.LimitReader(r.Body, maxSearchBytes+1))
	rest := io.Reader(r.Body)
	if err != nil {
		rest = errReader{err}
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(got), rest), r.Body}
	return got, err == nil && len(got) <= maxSearchBytes
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
