package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestSchemaFollowsAudience: introspection and the federation SDL show each caller the schema of
// the APIs it may see, as a contract variant of a supergraph does. A developer's name neither the
// partners' bestOffersFeed nor the staff's cargoCapacity, CargoCapacity or CargoLeg, descriptions
// included, and __type(name: "CargoCapacity") is null for it; a partner's name bestOffersFeed and
// nothing of cargo; staff's name both. Every type a field of the introspection refers to is in it.
// Hiding is not refusing: a developer asking for cargoCapacity is still answered INSP_404.000.
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

	// The second line is unchanged: hidden is not allowed, and not allowed is still refused.
	code, _, body := s.call(t, http.MethodPost, "/graphql", callers["developer"], jsonBody(`{ cargoCapacity(flightId: "20261122+KL+1001") { payloadKg } }`, nil))
	var r gqlResponse
	if err := json.Unmarshal([]byte(body), &r); err != nil || (r.Data != nil && string(r.Data) != "null") || len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != flightgraph.ECodeUnknownPath {
		t.Fatalf("a developer's cargoCapacity: %d %s", code, body)
	}
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
