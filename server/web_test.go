package server_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestPlayground: /playground, and GET /graphql for a browser, serve GraphiQL without
// credentials; the page loads only this origin's embedded assets, each served with the policy
// that keeps the page on this origin; an API client's GET /graphql is still GraphQL, and a name
// under /static that is no asset is the unknown URL.
func TestPlayground(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	serve := func(method, target, accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		rec := httptest.NewRecorder()
		s.srv.ServeHTTP(rec, r)
		return rec
	}
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	page := serve("GET", "/playground", browser)
	if page.Code != http.StatusOK || !strings.HasPrefix(page.Header().Get("Content-Type"), "text/html") || !strings.Contains(page.Body.String(), "graphiql") {
		t.Fatalf("/playground: %d %s %.200s", page.Code, page.Header().Get("Content-Type"), page.Body)
	}
	if csp := page.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self';") ||
		!strings.Contains(csp, "connect-src 'self'") || strings.Contains(csp, "http") {
		t.Errorf("the page's policy lets it reach elsewhere: %q", csp)
	}
	if got := serve("GET", "/graphql", browser); got.Code != http.StatusOK || got.Body.String() != page.Body.String() || !slices.Contains(got.Header().Values("Vary"), "Accept") {
		t.Errorf("GET /graphql from a browser: %d %.200s", got.Code, got.Body)
	}
	if got := serve("GET", "/graphql?query=%7B__typename%7D", "application/json"); got.Code != http.StatusUnauthorized && got.Code != http.StatusOK ||
		!strings.HasPrefix(got.Header().Get("Content-Type"), "application/") {
		t.Errorf("GET /graphql?query= from an API client: %d %s", got.Code, got.Header().Get("Content-Type"))
	}

	// Every script and style the page names is this origin's, embedded, and served.
	refs := regexp.MustCompile(`(?:src|<link[^>]*href)="([^"]*)"`).FindAllStringSubmatch(page.Body.String(), -1)
	if len(refs) < 4 {
		t.Fatalf("the page names %d assets", len(refs))
	}
	for _, m := range refs {
		ref := m[1]
		if !strings.HasPrefix(ref, "/static/") {
			t.Errorf("the page loads %q, not an embedded asset of this origin", ref)
			continue
		}
		got := serve("GET", ref, "")
		want := map[bool]string{true: "text/css", false: "text/javascript"}[strings.HasSuffix(ref, ".css")]
		if got.Code != http.StatusOK || !strings.HasPrefix(got.Header().Get("Content-Type"), want) || got.Body.Len() == 0 ||
			got.Header().Get("Content-Security-Policy") == "" || got.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %q, %d bytes, headers %v", ref, got.Code, got.Header().Get("Content-Type"), got.Body.Len(), got.Header())
		}
	}
	// Its links stay on this origin.
	for _, m := range regexp.MustCompile(`<a [^>]*href="([^"]*)"`).FindAllStringSubmatch(page.Body.String(), -1) {
		if !strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "//") {
			t.Errorf("the page links to %q, off this origin", m[1])
		}
	}
	for _, p := range []string{"/static/", "/static/graphiql/", "/static/nothing.js", "/static/playground.js/x"} {
		if got := serve("GET", p, ""); got.Code != http.StatusNotFound || restCode(t, got.Body.String()) != flightgraph.ECodeUnknownPath {
			t.Errorf("%s: %d %.200s, want the unknown URL", p, got.Code, got.Body)
		}
	}
}

// TestPlaygroundExamplesRun: the playground's Board example (departures and the cheapest offer to
// each destination, in one query) answers both parts without an error with the credentials its
// comment tells to send, the api-key and an OAuth token together, and the example's variables;
// with the api-key alone it is refused, naming the token it lacks.
func TestPlaygroundExamplesRun(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	_, _, page := s.call(t, http.MethodGet, "/playground", map[string]string{"Accept": "text/html"}, "")
	m := regexp.MustCompile(`(?s)<pre data-example="board"[^>]*>(.*?)</pre>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no board example in the playground")
	}
	doc := html.UnescapeString(m[1])
	vars := map[string]any{"date": storetest.Now.Format(flightgraph.DateLayout), "first": 10, "destinations": []string{"JFK", "LHR", "CDG"}}
	q, _ := json.Marshal(map[string]any{"query": doc, "variables": vars})
	both := map[string]string{"api-key": s.demo.APIKey, "Authorization": "Bearer " + s.bearerToken(t, "")}
	code, _, body := s.call(t, http.MethodPost, "/graphql", both, string(q))
	if code != 200 || !strings.Contains(body, `"flights"`) || !strings.Contains(body, `"bestFareOffers"`) || strings.Contains(body, `"errors"`) {
		t.Errorf("the Board with both credentials: %d %.500s", code, body)
	}
	code, _, body = s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": s.demo.APIKey}, string(q))
	if code != 403 || !strings.Contains(body, flightgraph.ECodeWrongCredential) || !strings.Contains(body, "OAuth") || strings.Contains(body, `"data"`) {
		t.Errorf("the Board with the api-key alone: %d %.500s", code, body)
	}
}
