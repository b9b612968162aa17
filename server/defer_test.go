package server_test

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// deferredDepartures is the Departures query with its details deferred at every level: in the
// connection, on each flight (a named fragment) and in each leg, nested within one another.
const deferredDepartures = `query Departures($date: Date!, $first: Int!) {
  flights(origin: "AMS", date: $date, first: $first) {
    totalCount
    ... @defer(label: "page") { pageInfo { hasNextPage endCursor } }
    edges { node {
      id
      flightNumber
      ...Details @defer(label: "details")
      legs {
        origin { code name city { code name country { code name } } }
        ... @defer { destination { code name timeZone } departure { scheduled estimated terminal gate } }
        arrival { scheduled estimated }
        aircraft { typeCode ... @defer(label: "cabins") { typeName configuration
          cabins { cabinClass seats amenities { category name description } } } }
      }
    } }
  }
}
fragment Details on Flight { status carrier { code name } ... @defer(label: "hub") { carrier { hub { code } } } }`

// undeferredDepartures asks for the same fields as deferredDepartures, with nothing deferred.
const undeferredDepartures = `query Departures($date: Date!, $first: Int!) {
  flights(origin: "AMS", date: $date, first: $first) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node {
      id
      flightNumber
      status carrier { code name hub { code } }
      legs {
        origin { code name city { code name country { code name } } }
        destination { code name timeZone } departure { scheduled estimated terminal gate }
        arrival { scheduled estimated }
        aircraft { typeCode typeName configuration
          cabins { cabinClass seats amenities { category name description } } }
      }
    } }
  }
}`

// deferAccepts are the Accept headers a @defer query comes with: Apollo Client's, incremental
// delivery alone, and the two JSON types of GraphQL over HTTP.
var deferAccepts = []string{
	"multipart/mixed;deferSpec=20220824,application/json",
	"multipart/mixed",
	"application/json",
	"application/graphql-response+json",
}

// deferredAnswer is an answer to a @defer query, its parts merged as a client merges them.
type deferredAnswer struct {
	status     int
	multipart  bool
	parts      int
	data       map[string]any
	errors     []any
	extensions map[string]any
}

// postDeferred posts q with headers and reads the answer: JSON, or multipart/mixed whose parts it
// merges per the incremental delivery RFC (the initial payload's data, then each incremental
// payload's data at its path), checking that the last part says hasNext false.
func (s *testServer) postDeferred(t *testing.T, path string, headers map[string]string, q string, vars map[string]any) deferredAnswer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(jsonBody(q, vars)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := deferredAnswer{status: resp.StatusCode}
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", resp.Header.Get("Content-Type"), err)
	}
	type payload struct {
		Data        map[string]any `json:"data"`
		Errors      []any          `json:"errors"`
		Extensions  map[string]any `json:"extensions"`
		HasNext     *bool          `json:"hasNext"`
		Incremental []struct {
			Data   map[string]any `json:"data"`
			Errors []any          `json:"errors"`
			Path   []any          `json:"path"`
		} `json:"incremental"`
	}
	var payloads []payload
	if mt != "multipart/mixed" {
		var p payload
		body, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("%s answer %s: %v", mt, body, err)
		}
		if p.HasNext != nil {
			t.Errorf("a %s answer says hasNext %v: %s", mt, *p.HasNext, body)
		}
		payloads = append(payloads, p)
	} else {
		out.multipart = true
		if params["deferspec"] != "20220824" {
			t.Errorf("multipart answer's deferSpec %q, want 20220824", params["deferspec"])
		}
		r := multipart.NewReader(resp.Body, params["boundary"])
		for {
			part, err := r.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("multipart answer: %v", err)
			}
			if ct := part.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("a part's Content-Type is %q", ct)
			}
			var p payload
			if err := json.NewDecoder(part).Decode(&p); err != nil {
				t.Fatalf("part %d: %v", len(payloads), err)
			}
			if p.HasNext == nil {
				t.Errorf("part %d says nothing of hasNext", len(payloads))
			}
			payloads = append(payloads, p)
		}
		if len(payloads) == 0 {
			t.Fatal("a multipart answer with no part")
		}
		if last := payloads[len(payloads)-1]; last.HasNext == nil || *last.HasNext {
			t.Errorf("the last of %d parts does not say hasNext false", len(payloads))
		}
	}
	out.parts = len(payloads)
	out.data, out.errors, out.extensions = payloads[0].Data, payloads[0].Errors, payloads[0].Extensions
	for _, p := range payloads[1:] {
		out.errors = append(out.errors, p.Errors...)
		for _, inc := range p.Incremental {
			out.errors = append(out.errors, inc.Errors...)
			var at any = out.data
			for _, step := range inc.Path {
				switch s := step.(type) {
				case string:
					at = at.(map[string]any)[s]
				case float64:
					at = at.([]any)[int(s)]
				}
			}
			for k, v := range inc.Data {
				at.(map[string]any)[k] = v
			}
		}
	}
	return out
}

// TestDeferAnswersEveryField: a @defer query answers every field it asks for, each non-null one
// with its value, under every Accept: the same data as the query without @defer, in one answer
// (application/json, application/graphql-response+json) or in an incremental delivery that ends
// (multipart/mixed, hasNext false), and with no error.
func TestDeferAnswersEveryField(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		vars := departuresVars(10)
		want := s.query(t, undeferredDepartures, vars)
		if len(want.Errors) > 0 {
			t.Fatalf("without @defer: %+v", want.Errors)
		}
		var wantData map[string]any
		json.Unmarshal(want.Data, &wantData)
		for _, accept := range deferAccepts {
			got := s.postDeferred(t, "/graphql", map[string]string{"api-key": s.demo.APIKey, "Accept": accept}, deferredDepartures, vars)
			if got.status != http.StatusOK || len(got.errors) > 0 {
				t.Errorf("Accept %s: %d, errors %v", accept, got.status, got.errors)
				continue
			}
			if wantMultipart := strings.HasPrefix(accept, "multipart/mixed"); got.multipart != wantMultipart {
				t.Errorf("Accept %s: multipart %v", accept, got.multipart)
			}
			if err := filled("data", any(got.data)); err != nil {
				t.Errorf("Accept %s: %v", accept, err)
			}
			if !reflect.DeepEqual(got.data, wantData) {
				a, _ := json.Marshal(got.data)
				t.Errorf("Accept %s: the deferred answer differs from the whole one:\n%.600s\nwant\n%.600s", accept, a, want.Data)
			}
		}
	})
}

// TestDeferAtTheRootIsAdmittedAndCharged: a root field of another API in a deferred fragment is
// part of the operation the access gate admits and charges: a key without that API is refused
// before anything runs (no data, no multipart), and a key with both gets both fields, each API
// charged once, as one JSON answer or as incremental delivery when the client asks for it.
func TestDeferAtTheRootIsAdmittedAndCharged(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	q := `query($date: Date!) {
  flights(origin: "AMS", date: $date, first: 2) { totalCount edges { node { id status } } }
  ... @defer(label: "airport") { airport(code: "AMS") { code name } }
}`
	vars := map[string]any{"date": storetest.Now.Format(flightgraph.DateLayout)}
	flightsOnly := keyFor(t, s, "flightstatus")
	both := keyFor(t, s, "flightstatus", "opendata")
	for _, accept := range deferAccepts {
		got := s.postDeferred(t, "/graphql", map[string]string{"api-key": flightsOnly, "Accept": accept}, q, vars)
		if got.status == http.StatusOK || got.data["flights"] != nil || len(got.errors) == 0 ||
			got.errors[0].(map[string]any)["extensions"].(map[string]any)["code"] != flightgraph.ECodeNotApproved {
			t.Errorf("Accept %s, a key without opendata: %d, data %v, errors %v", accept, got.status, got.data, got.errors)
		}
		if got.multipart {
			t.Errorf("Accept %s: a refusal came as multipart", accept)
		}
		got = s.postDeferred(t, "/graphql", map[string]string{"api-key": both, "Accept": accept}, q, vars)
		if got.status != http.StatusOK || len(got.errors) > 0 {
			t.Fatalf("Accept %s, a key with both: %d, errors %v", accept, got.status, got.errors)
		}
		if wantMultipart := strings.HasPrefix(accept, "multipart/mixed"); got.multipart != wantMultipart {
			t.Errorf("Accept %s: multipart %v", accept, got.multipart)
		}
		if err := filled("data", any(got.data)); err != nil || got.data["airport"] == nil {
			t.Errorf("Accept %s: %v, data %v", accept, err, got.data)
		}
		calls, _ := got.extensions["cost"].(map[string]any)["calls"].(map[string]any)
		if !reflect.DeepEqual(calls, map[string]any{"flightstatus": 1.0, "opendata": 1.0}) {
			t.Errorf("Accept %s: charged %v, want flightstatus and opendata once each", accept, got.extensions)
		}
	}
}

// TestDeferOnThePortal: the portal's endpoint answers deferred fields too, in a query and in a
// mutation.
func TestDeferOnThePortal(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	for _, accept := range deferAccepts {
		got := s.postDeferred(t, "/portal/graphql", map[string]string{"Authorization": "Bearer " + dev.token, "Accept": accept},
			`{ me { account { email } ... @defer { applications { name } } } }`, nil)
		if got.status != http.StatusOK || len(got.errors) > 0 {
			t.Fatalf("Accept %s, me: %d, errors %v", accept, got.status, got.errors)
		}
		if err := filled("data", any(got.data)); err != nil {
			t.Errorf("Accept %s, me: %v", accept, err)
		}
		got = s.postDeferred(t, "/portal/graphql", map[string]string{"Accept": accept},
			`mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { token ... @defer { account { id role } } } }`,
			map[string]any{"e": s.demo.DeveloperEmail, "p": s.demo.DeveloperPassword})
		if got.status != http.StatusOK || len(got.errors) > 0 {
			t.Fatalf("Accept %s, signIn: %d, errors %v", accept, got.status, got.errors)
		}
		if err := filled("data", any(got.data)); err != nil {
			t.Errorf("Accept %s, signIn: %v", accept, err)
		}
	}
}

// TestStreamIsNotOffered: introspection offers @defer and not @stream, and a document that uses
// @stream is refused before anything runs.
func TestStreamIsNotOffered(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	resp := s.query(t, `{ __schema { directives { name } } }`, nil)
	var d struct {
		Schema struct{ Directives []struct{ Name string } } `json:"__schema"`
	}
	json.Unmarshal(resp.Data, &d)
	names := map[string]bool{}
	for _, dir := range d.Schema.Directives {
		names[dir.Name] = true
	}
	if !names["defer"] || names["stream"] {
		t.Errorf("directives offered: %v", names)
	}
	status, _, body := s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": s.demo.APIKey},
		jsonBody(`{ fleet @stream(initialCount: 1) { configuration } }`, nil))
	t.Logf("@stream: %d %s", status, body)
	if strings.Contains(body, `"fleet"`) || !strings.Contains(body, "stream") {
		t.Errorf("@stream: %d %s", status, body)
	}
}
