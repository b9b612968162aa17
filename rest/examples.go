package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/travel"
)

// Examples are, for each operation of the OpenAPI document, a request that succeeds at the instant
// they were made for: its parameters' values and its JSON body. The document carries them as the
// parameters' and request bodies' `example`s, so that Try it (and any OpenAPI tool) starts every
// form from a call that answers 2xx: dates inside the booking horizon by the server's clock (not
// the browser's, which may be another day), codes the data set has, and ids (a flight, an offer, a
// cart, a related product) that the server made for the purpose.
type Examples struct {
	// At is the server's instant the examples were made at.
	At time.Time
	// params holds, by route pattern ("GET /opendata/flightstatus"), the value of each parameter
	// the example request sends; parameters it leaves out are absent.
	params map[string]map[string]any
	// bodies holds, by route pattern, the example request's JSON body.
	bodies map[string]any
}

// The example request's places and days: a long-haul route the demo network flies every day, a
// departure a week ahead and a return a week after it, well inside the booking horizon.
const (
	exampleOrigin      = "AMS"
	exampleDestination = "NYC"
	exampleOutboundIn  = 7  // days from today
	exampleInboundIn   = 14 // days from today
	// exampleAircraft is an aircraft configuration of the demo fleet.
	exampleAircraft = "77W"
	// exampleEmail receives the example's mailed search: a domain reserved for examples (RFC 2606).
	exampleEmail = "developer@example.com"
)

// examplesMaxAge is how long made examples are served: an offer id is good for
// flightgraph.OfferValidity from its quote, so the examples are made again well before that (a
// document served at the end of the period, and kept by the browser for its max-age of five
// minutes, still carries live ids).
const examplesMaxAge = flightgraph.OfferValidity / 3

// exampleCache is an API's examples and the documents built with them, per audience.
type exampleCache struct {
	mu     sync.Mutex
	ex     *Examples
	docs   map[string]*openAPIDoc
	making bool // a remaking runs in the background
}

// examplesUsable is how long made examples may still be served while new ones are made in the
// background: their offer ids are good for flightgraph.OfferValidity, and a browser keeps the
// document for its max-age of five minutes.
const examplesUsable = flightgraph.OfferValidity - 10*time.Minute

// examples returns the API's examples. Older than examplesMaxAge by the API's clock, they are
// made again in the background while the old ones still serve (until examplesUsable), so that
// no request waits for the making; past that, or on first use, the request makes them. New
// examples forget the documents built with the old ones. Ids the data cannot give (an empty
// store) are left out, and logged: the rest of the examples still serve. The caller holds the
// cache's lock.
func (a *API) examples(ctx context.Context) *Examples {
	now := a.Now()
	c := &a.exampleCache
	if c.ex != nil && !now.Before(c.ex.At) {
		switch age := now.Sub(c.ex.At); {
		case age < examplesMaxAge:
			return c.ex
		case age < examplesUsable:
			if !c.making {
				c.making = true
				go func() {
					ex := a.makeExamplesLogged(context.WithoutCancel(ctx), now)
					c.mu.Lock()
					defer c.mu.Unlock()
					c.making = false
					if ex.At.After(c.ex.At) { // a request may have made newer ones meanwhile
						c.ex, c.docs = ex, nil
					}
				}()
			}
			return c.ex
		}
	}
	ex := a.makeExamplesLogged(context.WithoutCancel(ctx), now)
	c.ex, c.docs = ex, nil
	return ex
}

// makeExamplesLogged is makeExamples, its error logged.
func (a *API) makeExamplesLogged(ctx context.Context, now time.Time) *Examples {
	ex, err := a.makeExamples(ctx, now)
	if err != nil {
		a.Log.WarnContext(ctx, "openapi examples: some ids could not be made; their operations go without", "err", err)
	}
	return ex
}

// makeExamples makes the examples of every operation for the instant now: dates counted from
// now's day (UTC), and a flight of today, an offer of the example search, a cart of it and a
// related product of it read from the data through the travel service, as a client would get
// them. The error names what could not be made; the examples returned then lack only that.
func (a *API) makeExamples(ctx context.Context, now time.Time) (*Examples, error) {
	now = now.UTC()
	today := now.Truncate(24 * time.Hour)
	day := func(n int) string { return today.AddDate(0, 0, n).Format(flightgraph.DateLayout) }
	out, in := day(exampleOutboundIn), day(exampleInboundIn)
	ex := &Examples{At: now, params: map[string]map[string]any{}, bodies: map[string]any{}}
	param := func(route string, kv ...any) {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		ex.params[route] = m
	}

	place := func(kind, code string) yaml.MapSlice {
		return obj(kind, obj("code", code))
	}
	adult := []any{obj("id", 1, "type", "ADT")}
	connection := func(date, from, to string) yaml.MapSlice {
		c := obj("departureDate", date, "origin", place("airport", from), "destination", place("city", to))
		if date == "" {
			return c[1:]
		}
		return c
	}
	oneWay := obj("commercialCabins", []any{"ALL"}, "passengers", adult,
		"requestedConnections", []any{connection(out, exampleOrigin, exampleDestination)})
	roundTrip := obj("commercialCabins", []any{"ALL"}, "passengers", adult,
		"requestedConnections", []any{connection(out, exampleOrigin, exampleDestination), connection(in, "JFK", "AMS")})
	calendar := obj("commercialCabins", []any{"ECONOMY"}, "passengers", adult,
		"requestedConnections", []any{connection("", exampleOrigin, exampleDestination)},
		"dateInterval", out+"/"+in, "type", "DAY")
	deals := obj("origin", place("city", exampleOrigin), "dateInterval", out+"/"+in,
		"commercialCabins", []any{"ECONOMY"}, "passengers", adult)

	// The hours of today's departures: from the hour now is in, six hours on.
	hour := now.Truncate(time.Hour)
	param("GET /opendata/flightstatus", "startRange", hour.Format("2006-01-02T15:04:05Z"),
		"endRange", hour.Add(6*time.Hour).Format("2006-01-02T15:04:05Z"), "origin", exampleOrigin)
	// The example origin's departures board as a stream of status events.
	param("GET /opendata/flightstatus/events", "departures", exampleOrigin)
	param("GET /opendata/inspire/v2/amenities", "aircraftConfiguration", exampleAircraft, "cabinClass", "BUSINESS")
	param("GET /opendata/inspire/v2/destinations/inspiration", "origin", exampleOrigin,
		"month", today.AddDate(0, 0, exampleOutboundIn).Format("2006-01"))
	param("GET /opendata/schedule/v1/routes", "origin", exampleOrigin)
	param("GET /opendata/schedule/v1/flights", "origin", exampleOrigin, "date", out)
	ex.bodies["POST /opendata/offers/v1/available-offers"] = oneWay
	param("GET /opendata/offers/v1/available-offers", "origin", exampleOrigin, "destination", exampleDestination,
		"departureDate", out, "passengers", "ADT", "commercialCabins", "ALL")
	ex.bodies["POST /opendata/offers/v1/available-offers/all"] = roundTrip
	ex.bodies["POST /opendata/offers/v1/lowest-fare-offers"] = calendar
	param("GET /opendata/offers/v1/lowest-fare-offers", "origin", exampleOrigin, "destination", exampleDestination,
		"passengers", "ADT", "commercialCabins", "ECONOMY", "dateInterval", out+"/"+in, "type", "DAY")
	ex.bodies["POST /opendata/offers/v1/mail-my-search"] = obj("email", exampleEmail, "search", oneWay)
	param("GET /opendata/offers/v1/search-context", "origin", exampleOrigin, "destination", exampleDestination, "departureDate", out)
	ex.bodies["POST /opendata/offers/v1/flights-availability"] = obj("requestedConnections",
		[]any{connection(out, exampleOrigin, exampleDestination)})
	toDestinations := append(slices.Clone(deals[:1]), append(yaml.MapSlice{{Key: "destinations",
		Value: []any{place("city", exampleDestination), place("city", "PAR")}}}, deals[1:]...)...)
	ex.bodies["POST /opendata/offers/v1/best-fare-offers"] = toDestinations
	ex.bodies["POST /opendata/offers/v1/best-fare-offers/all-deals"] = deals
	ex.bodies["POST /opendata/offers/v1/bestOffers/feed"] = toDestinations
	param("GET /opendata/baggages/allowances", "origin", exampleOrigin, "destination", "JFK", "travelClass", "ECONOMY",
		"departureDate", out)
	for _, op := range baggageOperations {
		// A client-credentials token names no customer: the loyalty types take the programme's tier.
		kv := []any{"origin", exampleOrigin, "destination", "JFK", "travelClass", "ECONOMY", "departureDate", out}
		if op.Type.NeedsTier() {
			kv = append(kv, "loyaltyProgram", "FGMILES_GOLD")
		}
		param(op.Pattern, kv...)
	}
	param("GET /opendata/{api}/{version}/ping", "api", "opendata", "version", versionOf("opendata"))

	var errs []string
	if id, err := a.exampleFlight(ctx, now); err != nil {
		errs = append(errs, "a flight of today: "+err.Error())
	} else {
		param("GET /opendata/flightstatus/{id}", "id", id)
		param("GET /opendata/cargo/v1/flights/{flightId}/capacity", "flightId", id)
	}
	if err := a.exampleOffer(ctx, ex, oneWay); err != nil {
		errs = append(errs, "an offer: "+err.Error())
	}
	if len(errs) > 0 {
		return ex, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return ex, nil
}

// exampleFlight is the id of the first flight from the example's origin that departs today from
// now on (or, late in the day, the first of the day).
func (a *API) exampleFlight(ctx context.Context, now time.Time) (string, error) {
	origin, err := a.Travel.Place(ctx, "origin", exampleOrigin)
	if err != nil {
		return "", err
	}
	f := flightgraph.FlightFilter{Origin: origin, Date: now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 1, Uncounted: true}}
	for _, from := range []time.Time{now, {}} {
		f.DepartureFrom = from
		flights, _, err := a.Travel.FindFlights(ctx, f)
		if err != nil {
			return "", err
		}
		if len(flights) > 0 {
			return flights[0].ID, nil
		}
	}
	return "", fmt.Errorf("no flight from %s today", exampleOrigin)
}

// exampleOffer searches as the one-way example does and fills in the examples of the operations
// that take an offer, a cart or a related product: the first offer found, a cart of it, and that
// cart with the first of its related products.
func (a *API) exampleOffer(ctx context.Context, ex *Examples, oneWay yaml.MapSlice) error {
	var b searchBody
	if err := remarshal(oneWay, &b); err != nil {
		return err
	}
	q, err := b.search()
	if err != nil {
		return err
	}
	offers, err := a.Travel.OffersFor(ctx, q, 0)
	if err != nil {
		return err
	}
	if len(offers) == 0 {
		return fmt.Errorf("the example search %s→%s finds none", exampleOrigin, exampleDestination)
	}
	o := offers[0]
	for _, route := range []string{"GET /opendata/offers/v1/upsell-offers", "GET /opendata/offers/v1/ticket-conditions",
		"GET /opendata/offers/v1/priceDetails", "GET /opendata/offers/v1/tax-breakdown", "GET /opendata/offers/v1/flightDetails",
		"GET /opendata/offers/v1/related-products"} {
		ex.params[route] = map[string]any{"offerId": o.ID}
	}
	ex.bodies["POST /opendata/offers/v1/upsell-offers"] = obj("offerId", o.ID)
	ex.bodies["POST /opendata/offers/v1/shopping-carts"] = obj("offerIds", []any{o.ID})
	cart, err := a.Travel.NewCart(ctx, []string{o.ID}, nil)
	if err != nil {
		return err
	}
	ex.params["GET /opendata/offers/v1/shopping-carts/{cartId}"] = map[string]any{"cartId": cart.ID}
	related := travel.RelatedProducts(o)
	if len(related) == 0 {
		return fmt.Errorf("the example offer has no related products")
	}
	ex.bodies["POST /opendata/offers/v1/related-products/shopping-carts"] = obj("cartId", cart.ID,
		"products", []any{obj("id", related[0].ID, "quantity", 1)})
	return nil
}

// apply writes the examples into the document: each parameter's example (of the parameters the
// operation declares itself, not the shared headers it refers to) and each JSON request body's.
func (ex *Examples) apply(doc yaml.MapSlice) {
	if ex == nil {
		return
	}
	for _, rt := range Routes {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		op := member(doc, "paths", path, strings.ToLower(method))
		if op == nil {
			continue // hidden from this audience
		}
		values := ex.params[rt.Pattern]
		params, _ := member(op, "parameters").([]any)
		for i, p := range params {
			pm, ok := p.(yaml.MapSlice)
			if !ok {
				continue
			}
			name, _ := member(pm, "name").(string)
			v, ok := values[name]
			if !ok {
				continue
			}
			// The live example takes the place of the static ones (`example` and `examples`
			// exclude each other), which name flights and days of the past.
			kept := make(yaml.MapSlice, 0, len(pm)+1)
			for _, item := range pm {
				if item.Key != "example" && item.Key != "examples" {
					kept = append(kept, item)
				}
			}
			params[i] = append(kept, yaml.MapItem{Key: "example", Value: v})
		}
		body, ok := ex.bodies[rt.Pattern]
		if !ok {
			continue
		}
		if media, ok := member(op, "requestBody", "content", "application/json").(yaml.MapSlice); ok && !set(media, "example", body) {
			set(member(op, "requestBody", "content"), "application/json", append(media, yaml.MapItem{Key: "example", Value: body}))
		}
	}
}

// obj is an ordered JSON object of keys and values, in the order given.
func obj(kv ...any) yaml.MapSlice {
	m := make(yaml.MapSlice, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m = append(m, yaml.MapItem{Key: kv[i], Value: kv[i+1]})
	}
	return m
}

// remarshal decodes v, an example, into the type a handler decodes its body into.
func remarshal(v any, into any) error {
	raw, err := yaml.MarshalWithOptions(v, yaml.JSON())
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}
