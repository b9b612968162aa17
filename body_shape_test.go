package flightgraph_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
)

// shapePlace and shapeSearch have the shape of the REST search bodies (rest/offers.go,
// rest/deals.go): places are objects, lists of objects, optional counts.
type shapePlace struct {
	Airport *struct {
		Code string `json:"code"`
	} `json:"airport"`
}

type shapeSearch struct {
	Origin               shapePlace   `json:"origin"`
	Destinations         []shapePlace `json:"destinations"`
	RequestedConnections []struct {
		DepartureDate string     `json:"departureDate"`
		Origin        shapePlace `json:"origin"`
	} `json:"requestedConnections"`
	CommercialCabins []string `json:"commercialCabins"`
	Limit            *int     `json:"limit"`
	Direct           bool     `json:"direct"`
	Seats            int8     `json:"seats"`
}

// goWords are words of Go's that a client must never read in an error: they name the server's
// types, not the documented fields.
var goWords = regexp.MustCompile(`Go |struct|shape|flightgraph|int8|\*|map\[|\[\]|interface`)

// TestDecodeOneNamesFields: a body that does not fit the documented shape is answered with the
// field's path in the body's own keys and what it takes in JSON's words, INSP_400.002 (or
// INSP_400.001 for a whole number out of range); never Go's types. A body that is not one JSON
// object stays REQ_400.000.
func TestDecodeOneNamesFields(t *testing.T) {
	for _, c := range []struct {
		name, body, code, path, message string
	}{
		{"plain airport codes for places", `{"origin":"AMS","destinations":["LON"]}`, flightgraph.ECodeBadFormat, "origin", "origin must be an object, not a string"},
		{"a plain code in a list", `{"origin":{"airport":{"code":"AMS"}},"destinations":[{"airport":{"code":"LON"}},"PAR"]}`, flightgraph.ECodeBadFormat, "destinations[1]", "destinations[1] must be an object, not a string"},
		{"deep in a list", `{"requestedConnections":[{"departureDate":"2027-01-10"},{"origin":{"airport":{"code":5}}}]}`, flightgraph.ECodeBadFormat, "requestedConnections[1].origin.airport.code", "must be a string, not a number"},
		{"a list where an object goes", `{"origin":[{"code":"AMS"}]}`, flightgraph.ECodeBadFormat, "origin", "origin must be an object, not a list"},
		{"an object where a list goes", `{"commercialCabins":{"ECONOMY":true}}`, flightgraph.ECodeBadFormat, "commercialCabins", "commercialCabins must be a list, not an object"},
		{"a string for a count", `{"limit":"5"}`, flightgraph.ECodeBadFormat, "limit", "limit must be an integer, not a string"},
		{"a fraction for a count", `{"limit":1.5}`, flightgraph.ECodeBadFormat, "limit", "limit must be an integer, not the number 1.5"},
		{"a count out of range", `{"seats":300}`, flightgraph.ECodeInvalidParameter, "seats", "seats is out of range: 300"},
		{"a string for true or false", `{"direct":"yes"}`, flightgraph.ECodeBadFormat, "direct", "direct must be true or false, not a string"},
		{"the key as the client spelt it", `{"ORIGIN":"AMS"}`, flightgraph.ECodeBadFormat, "ORIGIN", "ORIGIN must be an object"},
		{"escaped keys, read", `{"or\u0069gin":"AMS"}`, flightgraph.ECodeBadFormat, "origin", "origin must be an object"},
		{"the first of two", `{"limit":"5","origin":"AMS"}`, flightgraph.ECodeBadFormat, "limit", "limit must be"},
		{"an array", `[{"origin":{}}]`, flightgraph.ECodeBadBody, "", "an array is not one object"},
		{"a string", `"AMS"`, flightgraph.ECodeBadBody, "", "one JSON object, not a string"},
		{"not JSON", `{"origin":`, flightgraph.ECodeBadBody, "", "the body must be one search"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.body))
			r.Header.Set("Content-Type", "application/json")
			var v shapeSearch
			err := flightgraph.ReadJSON(httptest.NewRecorder(), r, 1<<16, &v, "the body must be one search")
			var fe *flightgraph.Error
			if !errors.As(err, &fe) || fe.Code != c.code || fe.Parameter != c.path || !strings.Contains(fe.Message, c.message) {
				t.Fatalf("%v, want %s naming %q and saying %q", err, c.code, c.path, c.message)
			}
			if goWords.MatchString(fe.Message) {
				t.Errorf("the message speaks Go: %q", fe.Message)
			}
		})
	}
}

// FuzzDecodeOne: whatever body a client sends, decoding it into a search's shape never panics,
// and a field of the wrong kind is INSP_400.001 or INSP_400.002 naming a path that is in the body,
// in words that are not Go's.
//
//	go test . -run '^$' -fuzz FuzzDecodeOne -fuzztime 60s
func FuzzDecodeOne(f *testing.F) {
	for _, body := range []string{
		`{"origin":"AMS","destinations":["LON"]}`,
		`{"requestedConnections":[{"departureDate":"2027-01-10"},{"origin":{"airport":{"code":5}}}]}`,
		`{"destinations":[{"airport":{"code":"LON"}},{"airport":[]}],"limit":1e99}`,
		`{"commercialCabins":[["ECONOMY"]],"seats":-129,"direct":null}`,
		`{"a":{"b":[1,{"c":2}]},"origin":{"airport":{"code":"AMS","x":[]}},"limit":{}}`,
		`[1]`, `{}`, `{"origin":`, `{"origin":{}}{}`,
	} {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var v shapeSearch
		err := flightgraph.DecodeOne(strings.NewReader(body), &v)
		var fe *flightgraph.Error
		if !errors.As(err, &fe) {
			return
		}
		if fe.Code != flightgraph.ECodeBadFormat && fe.Code != flightgraph.ECodeInvalidParameter {
			t.Fatalf("%q: code %s", body, fe.Code)
		}
		if goWords.MatchString(fe.Message) {
			t.Fatalf("%q: the message speaks Go: %q", body, fe.Message)
		}
		var doc any
		if json.Unmarshal([]byte(body), &doc) != nil {
			return // a body both wrong in kind and cut short: the path was read before the cut
		}
		if !pathIn(doc, fe.Parameter) {
			t.Fatalf("%q: the path %q is not in the body", body, fe.Parameter)
		}
	})
}

// pathSegment is one step of a path DecodeOne names: a key, or an index in brackets.
var pathSegment = regexp.MustCompile(`^(?:\.?([^.\[]+)|\[(\d+)\])`)

// pathIn reports whether path (origin, destinations[1].airport) leads to a value of doc. Keys
// match as encoding/json matches fields, without regard to case; a path holds no key with a dot
// or a bracket, which a search's fields never have.
func pathIn(doc any, path string) bool {
	if path == "" {
		return false
	}
	for path != "" {
		m := pathSegment.FindStringSubmatch(path)
		if m == nil {
			return true // a key with a dot or bracket of its own: not a search's field
		}
		path = path[len(m[0]):]
		switch d := doc.(type) {
		case map[string]any:
			found := false
			for k, v := range d {
				if strings.EqualFold(k, m[1]) {
					doc, found = v, true
				}
			}
			if m[1] == "" || !found {
				return false
			}
		case []any:
			i, err := strconv.Atoi(m[2])
			if m[2] == "" || err != nil || i >= len(d) {
				return false
			}
			doc = d[i]
		default:
			return false
		}
	}
	return true
}
