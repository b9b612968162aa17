package server

import (
	"net/http/httptest"
	"testing"
)

// TestStreamingRoutes: only the streams lose the request's timeout and read deadline. Before,
// any request naming text/event-stream in its Accept did: a search, a sign-in or the portal's
// API could then run, or trickle its body, for as long as its client liked.
func TestStreamingRoutes(t *testing.T) {
	for _, c := range []struct {
		name, method, path string
		headers            map[string]string
		want               bool
	}{
		{"GraphQL over WebSocket", "GET", "/graphql", map[string]string{"Upgrade": "websocket"}, true},
		{"graphql-sse", "POST", "/graphql", map[string]string{"Accept": "text/event-stream", "Content-Type": "application/json"}, true},
		{"graphql-sse by GET", "GET", "/graphql?query=subscription%7Bx%7D", map[string]string{"Accept": "text/event-stream"}, true},
		{"a GraphQL GET", "GET", "/graphql?query=%7Bx%7D", map[string]string{"Accept": "application/json"}, false},
		{"a GraphQL GET, no Accept", "GET", "/graphql?query=%7Bx%7D", nil, false},
		{"HEAD asking for events", "HEAD", "/graphql?query=%7Bx%7D", map[string]string{"Accept": "text/event-stream"}, false},
		{"DELETE asking for events", "DELETE", "/graphql", map[string]string{"Accept": "text/event-stream"}, false},
		{"the portal's API by GET", "GET", "/portal/graphql?query=%7Bx%7D", map[string]string{"Accept": "text/event-stream"}, false},
		{"REST events", "GET", "/opendata/flightstatus/events", map[string]string{"Accept": "text/event-stream"}, true},
		{"REST events, any Accept", "GET", "/opendata/flightstatus/events", nil, true},
		{"a GraphQL query", "POST", "/graphql", map[string]string{"Accept": "application/json", "Content-Type": "application/json"}, false},
		{"event-stream with another body type", "POST", "/graphql", map[string]string{"Accept": "text/event-stream, application/json", "Content-Type": "text/plain"}, false},
		{"a REST search asking for events", "GET", "/opendata/offers/v1/available-offers", map[string]string{"Accept": "text/event-stream, application/json"}, false},
		{"a REST POST asking for events", "POST", "/opendata/offers/v1/lowest-fare-offers", map[string]string{"Accept": "text/event-stream, */*", "Content-Type": "application/json"}, false},
		{"the portal's API", "POST", "/portal/graphql", map[string]string{"Accept": "text/event-stream", "Content-Type": "application/json"}, false},
		{"the portal's API upgraded", "GET", "/portal/graphql", map[string]string{"Upgrade": "websocket"}, false},
		{"a page upgraded", "GET", "/portal/signin", map[string]string{"Upgrade": "websocket"}, false},
		{"the token endpoint", "POST", "/oauthcust/oauth/token", map[string]string{"Accept": "text/event-stream"}, false},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		for k, v := range c.headers {
			r.Header.Set(k, v)
		}
		if got := streaming(r); got != c.want {
			t.Errorf("%s: streaming %v, want %v", c.name, got, c.want)
		}
	}
}
