package app_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/app"
	"github.com/flightgraph/flightgraph/rest"
)

// TestOperationsAgree: every operation the edges declare belongs to a product of the catalogue,
// and the catalogue's lists name each declared operation exactly once: a route or an @api field
// added with a typo in its product fails here. (Every product has a way in by construction: its
// ping.)
func TestOperationsAgree(t *testing.T) {
	ops := app.Operations()
	known := map[string]bool{}
	for _, p := range access.Products {
		known[p.Slug] = true
	}
	for _, op := range ops {
		if !known[op.Product] {
			t.Errorf("%s %s belongs to %q, which the catalogue does not have", op.Edge, op.Name, op.Product)
		}
	}
	for _, rt := range rest.Routes {
		if rt.Product != "" && !known[rt.Product] {
			t.Errorf("route %s belongs to %q, which the catalogue does not have", rt.Pattern, rt.Product)
		}
	}
	lists := flightgraph.OperationLists(ops)
	for _, op := range ops {
		n := 0
		for _, line := range lists[op.Product] {
			if op.Title != "" {
				line = strings.TrimSuffix(line, " — "+op.Title)
			}
			if line == op.Edge+" "+op.Name || strings.HasPrefix(line, op.Edge+" ") && slices.Contains(strings.Split(strings.TrimPrefix(line, op.Edge+" "), ", "), op.Name) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s %s of %s is in %d lines of %q, want 1", op.Edge, op.Name, op.Product, n, lists[op.Product])
		}
	}
	for _, want := range []flightgraph.Operation{
		{Product: "flightstatus", Edge: "query", Name: "flights"},
		{Product: "opendata", Edge: "entity", Name: "Airport"},
		{Product: "inspire", Edge: "GET", Name: "/opendata/inspire/v2/ping"}, // the version its routes have
		{Product: "offers", Edge: "GET", Name: "/opendata/offers/v1/ping"},
		{Product: "opendata", Edge: "GET", Name: "/opendata/flightoffers/v1/ping"}, // the name of its routes' API
		{Product: "baggage", Edge: "GET", Name: "/opendata/baggages/v1/base-allowances", Title: "Base Allowances"},
	} {
		if !slices.Contains(ops, want) {
			t.Errorf("no %+v among the declared operations", want)
		}
	}
	// The baggage API's six operations, by the names the spec gives them, in the catalogue.
	var names []string
	for _, line := range lists["baggage"] {
		if _, name, ok := strings.Cut(line, " — "); ok {
			names = append(names, name)
		}
	}
	if want := []string{"All Allowances without Loyalty", "Base Allowances", "Loyalty Allowances", "Paid Options with Loyalty",
		"Paid Options without Loyalty", "All Allowances with Loyalty"}; !slices.Equal(names, want) {
		t.Errorf("the baggage API's named operations: %q, want %q", names, want)
	}
}
