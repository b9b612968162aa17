package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestSchemaFollowsAudience: introspection and the federation SDL show each caller the schema of
// the APIs it may see, as a contract variant of a supergraph does. A developer's name neither the
// partners' bestOffersFeed nor the staff's cargoCapacity, CargoCapacity or CargoLeg, descriptions
// included, and __type(name: "CargoCapacity") is null for it; a partner's name bestOffersFeed and
// nothing of cargo; staff's name both. Every type a field of the introspection refers to is in it.
// A document that names what the caller may not see is answered byte for byte as one that names
// something that does not exist: validation runs against the caller's view, so that no message
// (a missing argument, a field of a hidden type, a fragment on one) tells that it exists.
func TestSchemaFollowsAudience(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	callers := s.audienceCallers(t)
	names := map[string]map[string]bool{ // the names each caller's schema must hold (true) or not (false)
		"developer": {"bestOffersFeed": false, "cargoCapacity": false, "CargoCapacity": false, "CargoLeg": false, "bestFareOffers": true, "flights": true},
		"partner":   {"bestOffersFeed": true, "cargoCapacity": false, "CargoCapacity": false, "CargoLeg": false, "flights": true},
		"staff":     {"bestOffersFeed": true, "cargoCapacity": true, "CargoCapacity": true, "CargoLeg": true, "flights": true},
	}
	for who, h := range callers {
		// Twice: the second answer is the one Answers kept for the audience.
		for range 2 {
			intro := s.queryAs(t, h, graph.IntrospectionQuery, nil)
			var svc struct {
				Service struct{ SDL string } `json:"_service"`
			}
			resp := s.queryAs(t, h, `{ _service { sdl } }`, nil)
			if len(intro.Errors) > 0 || len(resp.Errors) > 0 || json.Unmarshal(resp.Data, &svc) != nil || svc.Service.SDL == "" {
				t.Fatalf("%s: %+v %+v", who, intro.Errors, resp.Errors)
			}
			for name, want := range names[who] {
				if got := strings.Contains(string(intro.Data), name); got != want {
					t.Errorf("%s's introspection names %s: %v, want %v", who, name, got, want)
				}
				if got := strings.Contains(svc.Service.SDL, name); got != want {
					t.Errorf("%s's SDL names %s: %v, want %v", who, name, got, want)
				}
			}
			if missing := danglingTypes(t, intro.Data); len(missing) > 0 {
				t.Errorf("%s's introspection refers to types it does not hold: %v", who, missing)
			}
		}
		resp := s.queryAs(t, h, `{ __type(name: "CargoCapacity") { name fields { name } } }`, nil)
		var typ struct {
			Type *struct{ Name string } `json:"__type"`
		}
		if len(resp.Errors) > 0 || json.Unmarshal(resp.Data, &typ) != nil || (typ.Type != nil) != names[who]["CargoCapacity"] {
			t.Errorf("%s: __type(name: CargoCapacity): %s %+v", who, resp.Data, resp.Errors)
		}
	}

	// What a developer may not see is what does not exist, to the byte.
	for _, c := range []struct{ name, doc string }{
		{"cargoCapacity", `{ cargoCapacity(flightId: "20261122+KL+1001") { payloadKg } }`},
		{"cargoCapacity", `{ cargoCapacity }`},
		{"bestOffersFeed", `{ bestOffersFeed { destination } }`},
		{"bestOffersFeed", `{ bestOffersFeed(search: {origin: "AMS"}, first: "x") { destination } }`},
		{"CargoCapacity", `{ __typename ...F } fragment F on CargoCapacity { payloadKg }`},
		{"CargoLeg", `query($l: CargoLeg) { __typename }`},
		{"CargoCapacity", `{ flight(id: "x") { ... on CargoCapacity { payloadKg } } }`},
	} {
		hiddenCode, _, hidden := s.call(t, http.MethodPost, "/graphql", callers["developer"], jsonBody(c.doc, nil))
		missingCode, _, missing := s.call(t, http.MethodPost, "/graphql", callers["developer"], jsonBody(strings.ReplaceAll(c.doc, c.name, c.name+"Zz"), nil))
		if missing = strings.ReplaceAll(missing, c.name+"Zz", c.name); hiddenCode != missingCode || withoutSuggestion(hidden) != withoutSuggestion(missing) {
			t.Errorf("a developer's %s:\n%d %s\na name that does not exist:\n%d %s", c.doc, hiddenCode, hidden, missingCode, missing)
		}
		for name, shown := range names["developer"] {
			if !shown && name != c.name && strings.Contains(hidden, name) {
				t.Errorf("a developer's %s is answered with the hidden name %s: %s", c.doc, name, hidden)
			}
		}
		// The staff's answer to the same document names what it asked for as existing.
		if _, _, staff := s.call(t, http.MethodPost, "/graphql", callers["staff"], jsonBody(c.doc, nil)); staff == hidden {
			t.Errorf("staff and a developer get the same answer to %s: %s", c.doc, staff)
		}
	}
}

// withoutSuggestion cuts the validator's "Did you mean …?" from an answer's messages: a name that
// does not exist may be near another.
func withoutSuggestion(body string) string {
	return regexp.MustCompile(` Did you mean [^?]*\?`).ReplaceAllString(body, "")
}

// danglingTypes returns the names of the types that an introspection's fields, arguments,
// interfaces and possible types refer to and its types do not define.
func danglingTypes(t *testing.T, data json.RawMessage) []string {
	t.Helper()
	var intro struct {
		Schema struct {
			Types []struct{ Name string } `json:"types"`
		} `json:"__schema"`
	}
	if err := json.Unmarshal(data, &intro); err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, ty := range intro.Schema.Types {
		defined[ty.Name] = true
	}
	var all any
	json.Unmarshal(data, &all)
	var missing []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if kind, ok := v["kind"].(string); ok && kind != "LIST" && kind != "NON_NULL" {
				if name, _ := v["name"].(string); !defined[name] {
					missing = append(missing, name)
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(all)
	return missing
}
