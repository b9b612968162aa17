package server_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// getGraphQL sends a query as GraphQL over GET with the headers and returns the answer.
func (s *testServer) getGraphQL(t *testing.T, query string, vars map[string]any, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	q := url.Values{"query": {query}}
	if vars != nil {
		b, _ := json.Marshal(vars)
		q.Set("variables", string(b))
	}
	h := map[string]string{"Accept": "application/json"}
	maps.Copy(h, headers)
	return s.call(t, http.MethodGet, "/graphql?"+q.Encode(), h, "")
}

// TestSchemaAnswersConditional: an operation that reads the schema only (introspection,
// _service) is answered from memory with an ETag, and a GET whose If-None-Match names it answers
// 304 with no body. The ETag follows the document, its variables and the media type; a POST gets
// it too but no 304; an operation that calls an API has none.
func TestSchemaAnswersConditional(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := map[string]string{"api-key": s.demo.APIKey}
	tagged := func(query string, vars map[string]any, headers map[string]string) (string, string) {
		t.Helper()
		code, h, body := s.getGraphQL(t, query, vars, headers)
		vary := strings.Join(h.Values("Vary"), ", ")
		if code != http.StatusOK || h.Get("ETag") == "" || !strings.HasPrefix(h.Get("Cache-Control"), "private") || !strings.Contains(vary, "Authorization") {
			t.Fatalf("GET %.40s: %d, ETag %q, Cache-Control %q, Vary %q: %.200s", query, code, h.Get("ETag"), h.Get("Cache-Control"), vary, body)
		}
		return h.Get("ETag"), body
	}
	for _, q := range []string{graph.IntrospectionQuery, `{ _service { sdl } }`} {
		etag, body := tagged(q, nil, key)
		if again, second := tagged(q, nil, key); again != etag || second != body {
			t.Errorf("%.40s: a second answer differs: ETag %s then %s", q, etag, again)
		}
		for _, inm := range []string{etag, `W/` + etag, `"x", ` + etag} {
			code, h, body := s.getGraphQL(t, q, nil, map[string]string{"api-key": s.demo.APIKey, "If-None-Match": inm})
			if code != http.StatusNotModified || body != "" || h.Get("ETag") != etag {
				t.Errorf("%.40s with If-None-Match %s: %d with %d bytes, ETag %q; want 304 with none", q, inm, code, len(body), h.Get("ETag"))
			}
		}
		// A POST carries the ETag, but If-None-Match does not make it a 304.
		code, h, posted := s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": s.demo.APIKey, "If-None-Match": etag, "Accept": "application/json"}, jsonBody(q, nil))
		if code != http.StatusOK || h.Get("ETag") != etag || posted != body {
			t.Errorf("%.40s by POST: %d, ETag %q; want 200, %s and the same answer", q, code, h.Get("ETag"), etag)
		}
	}
	// The document's variables and the media type are part of what the ETag names.
	typeOf := `query($n: String!) { __type(name: $n) { name fields { name } } }`
	flight, flightBody := tagged(typeOf, map[string]any{"n": "Flight"}, key)
	airport, airportBody := tagged(typeOf, map[string]any{"n": "Airport"}, key)
	if flight == airport || !strings.Contains(flightBody, `"Flight"`) || !strings.Contains(airportBody, `"Airport"`) {
		t.Errorf("two variables, ETags %s and %s: %.80s / %.80s", flight, airport, flightBody, airportBody)
	}
	if other, _ := tagged(typeOf, map[string]any{"n": "Flight"}, map[string]string{"api-key": s.demo.APIKey, "Accept": "application/graphql-response+json"}); other == flight {
		t.Errorf("one ETag for two media types: %s", flight)
	}
	// An operation that calls an API is not kept: it has no ETag.
	if code, h, body := s.getGraphQL(t, `{ __schema { queryType { name } } fleet { configuration } }`, nil, key); code != http.StatusOK || h.Get("ETag") != "" {
		t.Errorf("an operation calling an API: %d, ETag %q: %.200s", code, h.Get("ETag"), body)
	}
}

// TestSchemaAnswersAfterBudgets: the cache is asked only after the call was held to its caller's
// uncharged budgets, so a kept answer is no way around them: a key nobody approved gets a 403, not
// the kept answer nor a 304, and a key past its share gets 429s.
func TestSchemaAnswersAfterBudgets(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Uncharged, c.DefaultPlans = access.UnchargedLimits{}, true })
	key := approvedKey(t, s, "schedule")
	_, h, _ := s.getGraphQL(t, graph.IntrospectionQuery, nil, map[string]string{"api-key": key.APIKey})
	etag := h.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	pending := map[string]string{"api-key": pendingKey(t, s), "If-None-Match": etag}
	if code, _, body := s.getGraphQL(t, graph.IntrospectionQuery, nil, pending); code != http.StatusForbidden || gqlCode(t, body) != flightgraph.ECodeNotApproved {
		t.Errorf("a key nobody approved, with the ETag: %d %.200s; want 403 %s", code, body, flightgraph.ECodeNotApproved)
	}
	per := access.DefaultUncharged.PerCredential.PerSecond
	notModified, limited := 0, 0
	for range per + 2 { // the clock is frozen: one second
		code, _, _ := s.getGraphQL(t, graph.IntrospectionQuery, nil, map[string]string{"api-key": key.APIKey, "If-None-Match": etag})
		switch code {
		case http.StatusNotModified:
			notModified++
		case http.StatusTooManyRequests:
			limited++
		}
	}
	if notModified != per-1 || limited != 3 { // the first GET took a place too
		t.Errorf("%d × 304 and %d × 429 of %d conditional GETs past one GET, want %d and 3", notModified, limited, per+2, per-1)
	}
}

// TestSuggestionsFollowAudience, as an attacker: a mistyped field gets validation's "Did you
// mean …?" only of what the caller may see. A developer is never told of the partners' or the
// staff's fields and types, a partner not of the staff's; staff see them all; anonymous callers
// get no suggestion.
func TestSuggestionsFollowAudience(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	callers := s.audienceCallers(t)
	callers["anonymous"] = nil
	for _, c := range []struct {
		query string
		// shown: the suggested names each caller sees, by caller ("-" none at all).
		shown map[string][]string
		// hidden: the names each caller must not see.
		hidden map[string][]string
	}{
		{`{ cargoCapacit(flightId: "x") { volumeM3 } }`,
			map[string][]string{"anonymous": {"-"}, "developer": {"-"}, "partner": {"-"}, "staff": {"cargoCapacity"}},
			map[string][]string{"anonymous": {"cargoCapacity"}, "developer": {"cargoCapacity"}, "partner": {"cargoCapacity"}}},
		{`{ bestOffers(search: {}) { price } }`,
			map[string][]string{"anonymous": {"-"}, "developer": {"bestFareOffers"}, "partner": {"bestFareOffers", "bestOffersFeed"}, "staff": {"bestFareOffers", "bestOffersFeed"}},
			map[string][]string{"anonymous": {"bestFareOffers", "bestOffersFeed"}, "developer": {"bestOffersFeed"}}},
		{`query { ... on Query { __typename } } fragment F on CargoCapacit { legs { cancelled } }`,
			map[string][]string{"anonymous": {"-"}, "developer": {"-"}, "partner": {"-"}, "staff": {"CargoCapacity"}},
			map[string][]string{"developer": {"CargoCapacity"}, "partner": {"CargoCapacity"}}},
	} {
		for who, h := range callers {
			code, _, body := s.call(t, http.MethodPost, "/graphql", h, jsonBody(c.query, nil))
			var r gqlResponse
			// A validation error answers 200 as application/json, the media type asked for here.
			if err := json.Unmarshal([]byte(body), &r); err != nil || code != http.StatusOK || len(r.Errors) == 0 || r.Data != nil {
				t.Fatalf("%s, %.40s: %d %.300s", who, c.query, code, body)
			}
			var msgs []string
			for _, e := range r.Errors {
				msgs = append(msgs, e.Message)
			}
			all := strings.Join(msgs, "\n")
			for _, name := range c.shown[who] {
				if name == "-" && strings.Contains(all, "Did you mean") || name != "-" && !strings.Contains(all, `"`+name+`"`) {
					t.Errorf("%s, %.40s: %q; want the suggestion %s", who, c.query, all, name)
				}
			}
			for _, name := range c.hidden[who] {
				if strings.Contains(all, name) {
					t.Errorf("%s, %.40s: %q names %s", who, c.query, all, name)
				}
			}
		}
	}
}

// audienceCallers makes a partner's and a staff account and returns the headers of a caller of
// each audience: the demo developer's key, and the partner's and the staff's sessions.
func (s *testServer) audienceCallers(t *testing.T) map[string]map[string]string {
	t.Helper()
	for email, role := range map[string]flightgraph.Role{"pat@partner.example": flightgraph.RolePartner, "sam@staff.example": flightgraph.RoleStaff} {
		if _, err := s.srv.Access.CreateAccount(context.Background(), flightgraph.SignUpInput{Email: email, Password: developerPassword, Name: "N"}, role, ""); err != nil {
			t.Fatal(err)
		}
	}
	bearer := func(p *portal) map[string]string { return map[string]string{"Authorization": "Bearer " + p.token} }
	return map[string]map[string]string{
		"developer": {"api-key": s.demo.APIKey},
		"partner":   bearer(s.signIn(t, "pat@partner.example", developerPassword)),
		"staff":     bearer(s.signIn(t, "sam@staff.example", developerPassword)),
	}
}
