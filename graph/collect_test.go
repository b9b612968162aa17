package graph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/resolvers"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/flightgraph/flightgraph/travel"
)

// A board, a fragment, an alias and the federation's abstract _Entity: every way a selection set
// reaches an object.
const warmQuery = `query Board($date: Date!) {
  flights(origin: "AMS", date: $date, first: 20) {
    totalCount
    edges { node { ...flight } }
  }
  hub: airport(code: "CDG") { code name city { code country { code name } } }
  _entities(representations: [{__typename: "Airport", code: "AMS"}, {__typename: "City", code: "PAR"}]) {
    __typename
    ... on Airport { code timeZone country { code } }
    ... on City { code airports { code } }
  }
}
fragment flight on Flight {
  id status
  legs {
    origin { code city { name } }
    destination { code }
    aircraft { typeCode cabins { cabinClass seats amenities { category name } } }
  }
}`

// TestWarmFieldCollection checks that PlanPrefetch fills gqlgen's memo of collected fields with
// exactly the entries execution looks up: after it, executing the operation adds none. Without
// it, execution adds them itself, which shows the measure can see a miss.
func TestWarmFieldCollection(t *testing.T) {
	stores, svc, now := seededStores(t)
	body, _ := json.Marshal(map[string]any{"query": warmQuery, "variables": map[string]any{"date": storetest.Now.Format(flightgraph.DateLayout)}})

	for _, warm := range []bool{false, true} {
		schema := graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{Travel: svc, Now: now}})
		h := handler.New(schema)
		h.AddTransport(transport.POST{})
		if warm {
			h.AroundOperations(graph.PlanPrefetch(schema.Schema()))
		}
		before, after := -1, -1
		h.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
			oc := graphql.GetOperationContext(ctx)
			before = memoSize(t, oc)
			respond := next(ctx)
			return func(ctx context.Context) *graphql.Response {
				resp := respond(ctx)
				after = memoSize(t, oc)
				return resp
			}
		})
		postOK(t, stores, h, body)
		switch {
		case warm && (before == 0 || after != before):
			t.Errorf("warmed: %d entries before execution, %d after; want the same, more than 0", before, after)
		case !warm && after <= before:
			t.Errorf("cold: %d entries before execution, %d after; execution should have added them", before, after)
		}
		t.Logf("warm=%v: %d entries before execution, %d after", warm, before, after)
	}
}

// seededStores are the loaders' stores and the travel service over the demo data on SQLite, and
// the clock they are seeded for.
func seededStores(t *testing.T) (graph.Stores, *travel.Service, func() time.Time) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	stores := graph.Stores{Flights: store.NewFlightStore(db), Places: store.NewPlaceStore(db),
		Aircraft: store.NewAircraftStore(db), Network: store.NewNetworkStore(db)}
	now := func() time.Time { return storetest.Now }
	return stores, &travel.Service{Flights: stores.Flights, Places: stores.Places, Aircraft: stores.Aircraft, Network: stores.Network, Now: now}, now
}

// postOK posts body to h under the request loaders of stores and returns the answer, which must be
// a 200 with no error.
func postOK(t *testing.T, stores graph.Stores, h http.Handler, body []byte) string {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	graph.Middleware(stores, graph.DefaultLoaderWait, h).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
		t.Fatalf("status %d: %.500s", rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// memoSize reads the size of gqlgen's per-operation memo of collected fields, which it does not
// export.
func memoSize(t *testing.T, oc *graphql.OperationContext) int {
	items := reflect.ValueOf(oc).Elem().FieldByName("collectFieldsCache").FieldByName("items")
	if !items.IsValid() || items.Kind() != reflect.Map {
		t.Fatal("gqlgen's OperationContext no longer has collectFieldsCache.items: revisit graph/collect.go")
	}
	return items.Len()
}
