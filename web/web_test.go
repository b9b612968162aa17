package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph/web"
)

// TestAssetsBudget: the embedded assets add at most 5 MB to the binary.
func TestAssetsBudget(t *testing.T) {
	assets, err := web.Assets()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, n := range assets {
		total += n
	}
	t.Logf("%d assets, %.2f MB", len(assets), float64(total)/1e6)
	if total > 5_000_000 {
		t.Errorf("the embedded assets weigh %d bytes, more than 5 MB", total)
	}
	for _, p := range []string{"static/graphiql/graphiql.min.js", "static/graphiql/react.production.min.js", "static/graphiql/LICENSES.txt", "static/playground.js"} {
		if assets[p] == 0 {
			t.Errorf("%s is not embedded", p)
		}
	}
}

func TestWantsPage(t *testing.T) {
	for _, c := range []struct {
		method, target, accept string
		want                   bool
	}{
		{"GET", "/graphql", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true},
		{"GET", "/graphql", "application/json, text/html", false},
		{"GET", "/graphql", "application/graphql-response+json", false},
		{"GET", "/graphql", "", false},
		{"GET", "/graphql?query={__typename}", "text/html", false},
		{"POST", "/graphql", "text/html", false},
	} {
		r := httptest.NewRequest(c.method, c.target, nil)
		r.Header.Set("Accept", c.accept)
		if got := web.WantsPage(r); got != c.want {
			t.Errorf("%s %s Accept %q: %v", c.method, c.target, strings.TrimSpace(c.accept), got)
		}
	}
}
