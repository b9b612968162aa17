package rest

import (
	"net/url"
	"testing"

	"github.com/flightgraph/flightgraph"
)

// TestVersionsFollowRoutes: an API's version is what its routes say, v1 when they say nothing.
func TestVersionsFollowRoutes(t *testing.T) {
	got := versionsOf([]Route{{Pattern: "GET /opendata/inspire/v2/amenities", Product: "inspire"}, {Pattern: "GET /opendata/flightstatus", Product: "flightstatus"},
		{Pattern: "GET /opendata/{api}/{version}/ping"}})
	if len(got) != 1 || got["inspire"] != "v2" {
		t.Errorf("versionsOf: %v, want inspire v2 only", got)
	}
	if versionOf("inspire") != "v2" || versionOf("flightstatus") != "v1" || versionOf("nothing") != "v1" {
		t.Errorf("versionOf: inspire %s, flightstatus %s", versionOf("inspire"), versionOf("flightstatus"))
	}
}

// TestAPINamesFollowRoutes: a ping is named as the original names its API, by the segment its
// routes share (Open Data's /opendata/flightoffers/…), and answers by the product's slug too; a
// segment two products share names neither.
func TestAPINamesFollowRoutes(t *testing.T) {
	got := apiNamesOf([]Route{{Pattern: "GET /opendata/flightoffers/reference-data", Product: "opendata"},
		{Pattern: "GET /opendata/offers/v1/search-context", Product: "offers"}, {Pattern: "POST /opendata/offers/v1/bestOffers/feed", Product: "metasearch"},
		{Pattern: "GET /opendata/baggages/allowances", Product: "baggage"}, {Pattern: "GET /opendata/{api}/{version}/ping"}})
	if len(got) != 2 || got["opendata"] != "flightoffers" || got["baggage"] != "baggages" {
		t.Errorf("apiNamesOf: %v, want opendata flightoffers and baggage baggages only", got)
	}
	if APIName("opendata") != "flightoffers" || APIName("offers") != "offers" || APIName("metasearch") != "metasearch" {
		t.Errorf("APIName: opendata %s, offers %s, metasearch %s", APIName("opendata"), APIName("offers"), APIName("metasearch"))
	}
	for segment, want := range map[string]string{"flightoffers": "opendata", "opendata": "opendata", "baggages": "baggage", "baggage": "baggage", "offers": "offers", "nothing": "nothing"} {
		if got := productOfAPI(segment); got != want {
			t.Errorf("productOfAPI(%s) = %s, want %s", segment, got, want)
		}
	}
}

// TestAcceptable: the type the client weighs most, by its most specific range; HAL at equal
// weights, server-sent events only on the events stream; anything else is refused.
func TestAcceptable(t *testing.T) {
	for accept, want := range map[string]string{
		"": halJSON, "*/*": halJSON, "application/*": halJSON, "application/hal+json;charset=utf8": halJSON,
		"application/json": "application/json", "application/json, application/hal+json;q=0": "application/json",
		"text/html": "", "application/hal+json;q=0": "", "garbage;;": "",
		// Weights: zero in any spelling excludes, the heavier wins, a malformed one is ignored.
		"application/hal+json;q=0.0": "", "application/hal+json;q=0.000, application/json;q=0.1": "application/json",
		"application/hal+json;q=0.2, application/json;q=0.9": "application/json",
		"application/json;q=0.2, application/hal+json;q=0.9": halJSON,
		"application/json;q=abc":                             "", "application/json;q=2": "", "application/json;q=abc, */*;q=0.5": halJSON,
		// The most specific range weighs a type: */* does not bring back an excluded HAL.
		"*/*, application/hal+json;q=0": "application/json", "application/*;q=0, application/json": "application/json",
		"*/*;q=0": "",
		// Server-sent events are not served off the events stream: the other types still are.
		"application/json, text/event-stream": "application/json", "text/event-stream": "",
	} {
		got, ok := acceptable(accept, false)
		if got != want || ok != (want != "") {
			t.Errorf("Accept %q: %q %v, want %q", accept, got, ok, want)
		}
	}
	for accept, want := range map[string]string{
		"text/event-stream": eventStream, "application/json, text/event-stream": eventStream,
		"text/event-stream;q=0.5, application/json": "application/json", "*/*": eventStream, "": halJSON,
		"text/event-stream;q=0": "",
	} {
		got, ok := acceptable(accept, true)
		if got != want || ok != (want != "") {
			t.Errorf("on the events stream, Accept %q: %q %v, want %q", accept, got, ok, want)
		}
	}
}

// TestPaging: pageSize 1–100 and pageNumber 0–100000, with the catalogue's codes naming them.
func TestPaging(t *testing.T) {
	for q, want := range map[string]string{
		"": "", "pageSize=100&pageNumber=100000": "",
		"pageSize=0": flightgraph.ECodeInvalidParameter, "pageSize=101": flightgraph.ECodeInvalidParameter,
		"pageNumber=-1": flightgraph.ECodeInvalidParameter, "pageNumber=100001": flightgraph.ECodeInvalidParameter,
		"pageSize=ten": flightgraph.ECodeBadFormat, "pageNumber=9999999999999999999999": flightgraph.ECodeBadFormat,
	} {
		v, _ := url.ParseQuery(q)
		p, err := paging(v)
		if flightgraph.ErrorCode(err) != want {
			t.Errorf("%q: %+v %v, want %q", q, p, err, want)
		}
		if err == nil && (p.Offset < 0 || p.Limit < 1 || p.Limit > MaxPageSize) {
			t.Errorf("%q: page %+v out of bounds", q, p)
		}
	}
}

// FuzzAcceptable: any Accept header picks one of the types served or none, server-sent events
// only on the events stream, and never panics.
func FuzzAcceptable(f *testing.F) {
	for _, seed := range []string{"", "*/*", "application/json;q=0.5, application/hal+json;q=0", "text/event-stream", "a/*;q=1e309", ";;,q=", "*/*;q=-0"} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, accept string, events bool) {
		got, ok := acceptable(accept, events)
		if ok != (got != "") {
			t.Fatalf("Accept %q: %q, %v", accept, got, ok)
		}
		switch got {
		case "", halJSON, "application/json":
		case eventStream:
			if !events {
				t.Fatalf("Accept %q off the events stream: %q", accept, got)
			}
		default:
			t.Fatalf("Accept %q: %q, not a type the API serves", accept, got)
		}
	})
}
