package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/rest"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestCacheControl: every answer says how long it may be cached and by whom, on both edges. A
// GraphQL query's Cache-Control is the least maxAge of the fields it selects (public for a day
// for airports only, seconds as soon as a flight's status is in it, private with an offer's
// data, private and kept nowhere for the portal's), the same whether it came by GET or by POST
// (as gateways fetch), and its extensions.cacheControl gives each root field's hint; an answer
// with an error, a refusal and a mutation are no-store. A REST route's is its class's; its errors
// and refusals are no-store. A cacheable answer varies on the credentials and the point of sale.
func TestCacheControl(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		key := map[string]string{"api-key": s.demo.APIKey, "Accept": "application/graphql-response+json"}
		bearer := oaBearer(s.bearerToken(t, ""))
		bearer["Accept"] = key["Accept"]
		session := map[string]string{"Authorization": "Bearer " + s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword).token, "Accept": key["Accept"]}

		var board struct {
			Flights struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		if resp := s.query(t, `{ flights(origin: "AMS", date: "2026-11-22", first: 1) { edges { node { id } } } }`, nil); len(resp.Errors) > 0 {
			t.Fatalf("a flight: %+v", resp.Errors)
		} else {
			json.Unmarshal(resp.Data, &board)
		}
		flightID := board.Flights.Edges[0].Node.ID

		get := func(path string, headers map[string]string, query string) (int, http.Header, string) {
			t.Helper()
			return s.call(t, http.MethodGet, path+"?query="+url.QueryEscape(query), headers, "")
		}
		airports := `{ airports(first: 3) { totalCount edges { node { code name city { name } country { name } } } } }`
		for _, c := range []struct {
			name, path string
			headers    map[string]string
			query      string
			status     int
			want       string
			hints      []graph.CacheHint // nil: not checked
		}{
			{"airports only", "/graphql", key, airports, 200, "public, max-age=86400",
				[]graph.CacheHint{{Path: []string{"airports"}, MaxAge: 86400, Scope: "PUBLIC"}}},
			{"a flight as scheduled", "/graphql", key, `{ flight(id: "` + flightID + `") { designator legs { departure { scheduled } } } }`, 200, "public, max-age=3600", nil},
			{"with a flight's status", "/graphql", key, `{ airport(code: "AMS") { name } flight(id: "` + flightID + `") { designator status } }`, 200, "public, max-age=15",
				[]graph.CacheHint{{Path: []string{"airport"}, MaxAge: 86400, Scope: "PUBLIC"}, {Path: []string{"flight"}, MaxAge: 15, Scope: "PUBLIC"}}},
			{"with an offers field", "/graphql", bearer, `{ searchContext(origin: "AMS", destination: "NYC") { market } offersReferenceData { market } }`, 200, "private, max-age=60",
				[]graph.CacheHint{{Path: []string{"searchContext"}, MaxAge: 60, Scope: "PRIVATE"}, {Path: []string{"offersReferenceData"}, MaxAge: 86400, Scope: "PRIVATE"}}},
			{"the portal's", "/portal/graphql", session, `{ me { account { email } } }`, 200, "private, no-store",
				[]graph.CacheHint{{Path: []string{"me"}, MaxAge: 0, Scope: "PRIVATE"}}},
			{"an error beside data", "/graphql", key, `{ airport(code: "AMS") { name } b: airport(code: "QQQ") { name } }`, 200, "no-store", nil},
			{"an error alone", "/graphql", key, `{ airport(code: "QQQ") { name } }`, 200, "no-store", nil},
			{"a document that does not validate", "/graphql", key, `{ airport(code: "AMS") { nope } }`, 400, "no-store", nil},
			{"no credentials", "/graphql", map[string]string{"Accept": key["Accept"]}, airports, 401, "no-store", nil},
			{"a mutation over GET", "/graphql", key, `mutation { addToShoppingCart(cartId: "x", products: []) { id } }`, 405, "no-store", nil},
		} {
			code, h, body := get(c.path, c.headers, c.query)
			if code != c.status || h.Get("Cache-Control") != c.want {
				t.Errorf("GET %s, %s: %d with Cache-Control %q, want %d with %q: %.300s", c.path, c.name, code, h.Get("Cache-Control"), c.status, c.want, body)
			}
			vary := strings.Join(h.Values("Vary"), ", ")
			if cacheable := !strings.Contains(c.want, "no-store"); cacheable != strings.Contains(vary, "api-key, Authorization, Accept-Language, svc-travel-country") {
				t.Errorf("GET %s, %s: Vary %q", c.path, c.name, vary)
			}
			if c.hints == nil {
				continue
			}
			var resp struct {
				Extensions struct{ CacheControl graph.CacheExtension }
			}
			json.Unmarshal([]byte(body), &resp)
			if got, _ := json.Marshal(resp.Extensions.CacheControl); resp.Extensions.CacheControl.Version != 1 || !sameHints(resp.Extensions.CacheControl.Hints, c.hints) {
				t.Errorf("GET %s, %s: extensions.cacheControl %s, want %+v", c.path, c.name, got, c.hints)
			}
		}

		// POST: what a gateway's fetch reads; a mutation is never kept.
		code, h, body := s.call(t, http.MethodPost, "/graphql", key, jsonBody(airports, nil))
		if code != 200 || h.Get("Cache-Control") != "public, max-age=86400" {
			t.Errorf("POST airports: %d with Cache-Control %q: %.300s", code, h.Get("Cache-Control"), body)
		}
		code, h, body = s.call(t, http.MethodPost, "/graphql", bearer, jsonBody(`mutation { addToShoppingCart(cartId: "x", products: [{id: "INSURANCE", quantity: 1}]) { id } }`, nil))
		if h.Get("Cache-Control") != "no-store" {
			t.Errorf("POST a mutation: %d with Cache-Control %q: %.300s", code, h.Get("Cache-Control"), body)
		}
		// A successful mutation: nothing to keep either.
		code, h, body = s.call(t, http.MethodPost, "/portal/graphql", nil, jsonBody(`mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { token } }`,
			map[string]any{"e": s.demo.DeveloperEmail, "p": s.demo.DeveloperPassword}))
		if code != 200 || strings.Contains(body, `"errors"`) || h.Get("Cache-Control") != "no-store" {
			t.Errorf("POST a mutation: %d with Cache-Control %q: %.300s", code, h.Get("Cache-Control"), body)
		}
		// The hints are in the subgraph's SDL, for gateways to compose (TestSupergraphComposes),
		// and only where the caller's audience sees the type or field: a developer's SDL names
		// no staff type, hinted or not.
		sdl := s.subgraphSDL(t)
		for _, want := range []string{`@composeDirective(name: "@cacheControl")`, `type Airport @key(fields: "code") @api(product: "opendata") @entityResolver(multi: true) @cacheControl(maxAge: 86400) {`,
			`status: FlightStatus! @cacheControl(maxAge: 15)`, `type Offer @key(fields: "id") @api(product: "offers") @cacheControl(maxAge: 60, scope: PRIVATE) {`} {
			if !strings.Contains(sdl, want) {
				t.Errorf("the subgraph's SDL lacks %s", want)
			}
		}
		if strings.Contains(sdl, "CargoCapacity") {
			t.Error("a developer's SDL names CargoCapacity")
		}
		// Introspection is kept by ETag for the caller's audience, whatever the hints say.
		if _, h, _ := get("/graphql", key, `{ __schema { queryType { name } } }`); h.Get("Cache-Control") != "private, no-cache" || h.Get("ETag") == "" {
			t.Errorf("introspection: Cache-Control %q, ETag %q", h.Get("Cache-Control"), h.Get("ETag"))
		}

		// REST: each route by its class; errors and refusals no-store.
		rkey := map[string]string{"api-key": s.demo.APIKey}
		for _, c := range []struct {
			path    string
			headers map[string]string
			status  int
			want    string
		}{
			{"/opendata/flightoffers/reference-data", rkey, 200, "public, max-age=86400"},
			{"/opendata/schedule/v1/routes?origin=AMS", rkey, 200, "public, max-age=3600"},
			{"/opendata/flightstatus/" + url.PathEscape(flightID), rkey, 200, "public, max-age=15"},
			{"/opendata/offers/v1/reference-data", map[string]string{"Authorization": bearer["Authorization"]}, 200, "private, max-age=86400"},
			{"/opendata/flightstatus/v1/ping", rkey, 200, "no-store"},
			{"/opendata/flightstatus/20261122%2BXX%2B9998", rkey, 404, "no-store"},
			{"/opendata/flightoffers/reference-data", map[string]string{"svc-travel-country": "ZZ", "api-key": s.demo.APIKey}, 400, "no-store"},
			{"/opendata/flightoffers/reference-data", nil, 401, "no-store"},
			{"/opendata/nothing/here", rkey, 404, "no-store"},
		} {
			code, h, body := s.call(t, http.MethodGet, c.path, c.headers, "")
			if code != c.status || h.Get("Cache-Control") != c.want {
				t.Errorf("GET %s: %d with Cache-Control %q, want %d with %q: %.300s", c.path, code, h.Get("Cache-Control"), c.status, c.want, body)
			}
			vary := strings.Join(h.Values("Vary"), ", ")
			if cacheable := c.status == 200 && c.want != "no-store"; cacheable != strings.Contains(vary, "api-key, Authorization, Accept-Language, svc-travel-country, svc-travel-host") ||
				cacheable && !strings.Contains(vary, "Accept") {
				t.Errorf("GET %s: Vary %q", c.path, vary)
			}
		}
	})
}

// sameHints reports whether two lists of hints are equal.
func sameHints(a, b []graph.CacheHint) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestCacheClasses: the same data has the same policy on both edges, and every REST route that
// serves a GraphQL field's data is in that field's class: a flight's status, the schedule, the
// reference data, the offers reference.
func TestCacheClasses(t *testing.T) {
	for _, c := range []struct {
		route string
		want  flightgraph.CachePolicy
	}{
		{"GET /opendata/flightstatus/{id}", flightgraph.CacheStatus},
		{"GET /opendata/flightstatus", flightgraph.CacheStatus},
		{"GET /opendata/schedule/v1/routes", flightgraph.CacheSchedule},
		{"GET /opendata/schedule/v1/flights", flightgraph.CacheSchedule},
		{"GET /opendata/inspire/v2/amenities", flightgraph.CacheReference},
		{"GET /opendata/offers/v1/available-offers", flightgraph.CacheQuote},
		{"GET /opendata/offers/v1/shopping-carts/{cartId}", flightgraph.CacheQuote},
		{"GET /opendata/cargo/v1/flights/{flightId}/capacity", flightgraph.CacheStatus.AsPrivate()},
		{"POST /opendata/offers/v1/available-offers", flightgraph.NoStore},
		{"GET /opendata/{api}/{version}/ping", flightgraph.NoStore},
	} {
		if got := rest.RouteCache[c.route]; got != c.want {
			t.Errorf("%s: %+v, want %+v", c.route, got, c.want)
		}
	}
	// Every route a policy names exists, and every GET but the pings has one, if only no-store.
	routes := map[string]bool{}
	for _, rt := range rest.Routes {
		routes[rt.Pattern] = true
		if _, ok := rest.RouteCache[rt.Pattern]; !ok && strings.HasPrefix(rt.Pattern, "GET ") && !strings.HasSuffix(rt.Pattern, "/ping") {
			t.Errorf("%s declares no cache policy in rest.RouteCache (rest/cache.go)", rt.Pattern)
		}
	}
	for p := range rest.RouteCache {
		if !routes[p] {
			t.Errorf("rest.RouteCache names %s, which is no route", p)
		}
	}
}
