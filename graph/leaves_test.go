package graph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/resolvers"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// leavesQueries read every kind of leaf the executor marshals from a struct: strings, ints,
// booleans, enums, dates, times (set and null), nullable strings (set and null), behind aliases and
// fragments, and the schema's own (introspection).
var leavesQueries = []string{
	warmQuery,
	`query Board($date: Date!) {
  flights(origin: "AMS", date: $date, first: 30) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { cursor node {
      id flightNumber designator scheduleDate status haul
      carrier { code name }
      legs {
        id sequence status distanceKm duration serviceType
        departure { scheduled estimated actual terminal gate delayMinutes }
        arrival { ...movement }
        again: arrival { delay: delayMinutes gate }
        aircraft { registration typeCode typeName icao name wifi layout
          cabins { cabinClass seats product amenities { cabinClass category feature name description weight } } }
      }
    } }
  }
}
fragment movement on Movement { scheduled estimated actual terminal gate delayMinutes }`,
	`{ __schema { queryType { name } types { name kind description fields { name isDeprecated deprecationReason type { name kind ofType { name kind } } } } } }`,
}

// TestLeavesAnswerAsGqlgen: the leaves' own path (graph/gen's inlineLeaves, taken when
// plainField holds) answers byte for byte what gqlgen's answers, which an executor with a field
// middleware takes; and that middleware sees every field of the answer, leaves included, so that
// one installed one day refuses or changes what it must.
func TestLeavesAnswerAsGqlgen(t *testing.T) {
	stores, svc, now := seededStores(t)
	vars := map[string]any{"date": storetest.Now.Format(flightgraph.DateLayout)}

	serve := func(middleware bool, query string) (string, int64) {
		t.Helper()
		schema := graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{Travel: svc, Now: now}})
		h := handler.New(schema)
		h.AddTransport(transport.POST{})
		h.Use(extension.Introspection{})
		h.AroundOperations(graph.PlanPrefetch(schema.Schema()))
		h.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
			// the comparison is of the two paths only if the first run takes the leaves' one
			if plain := graph.PlainField(graphql.GetOperationContext(ctx)); plain == middleware {
				t.Errorf("with a field middleware %v, the leaves' path taken: %v", middleware, plain)
			}
			return next(ctx)
		})
		var fields atomic.Int64
		if middleware {
			h.AroundFields(func(ctx context.Context, next graphql.Resolver) (any, error) {
				fields.Add(1)
				return next(ctx)
			})
		}
		body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		return postOK(t, stores, h, body), fields.Load()
	}
	for i, q := range leavesQueries {
		plain, _ := serve(false, q)
		gqlgens, fields := serve(true, q)
		if plain != gqlgens {
			t.Errorf("query %d: the leaves' path answers\n%.2000s\ngqlgen's\n%.2000s", i, plain, gqlgens)
		}
		if want := answerFields(t, gqlgens); fields < want {
			t.Errorf("query %d: the field middleware saw %d fields, the answer has %d", i, fields, want)
		}
		t.Logf("query %d: %d bytes, %d fields through the middleware; nulls: %d", i, len(plain), fields, strings.Count(plain, ":null"))
	}
}

// answerFields counts the fields of a GraphQL answer's data, but __typename, which gqlgen
// answers without resolving.
func answerFields(t *testing.T, body string) int64 {
	var resp struct{ Data any }
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	var count func(v any) int64
	count = func(v any) int64 {
		var n int64
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if k != "__typename" {
					n++
				}
				n += count(e)
			}
		case []any:
			for _, e := range v {
				n += count(e)
			}
		}
		return n
	}
	return count(resp.Data)
}

// TestDeferredFieldsWithoutInlining: an object's deferred fields, which the server inlines
// (InlineDeferred) but gqlgen's executor can still defer, are delivered after the rest, now that
// their FieldSet and views are made only when a field is deferred (deferredFields,
// deferredViews).
func TestDeferredFieldsWithoutInlining(t *testing.T) {
	stores, svc, now := seededStores(t)
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{Travel: svc, Now: now}})
	h := handler.New(schema)
	h.AddTransport(transport.MultipartMixed{})
	body := `{"query":"{ airport(code: \"AMS\") { code ... @defer(label: \"where\") { city { code country { code } } } } }"}`
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "multipart/mixed;deferSpec=20220824")
	graph.Middleware(stores, graph.DefaultLoaderWait, h).ServeHTTP(rec, req)
	got := rec.Body.String()
	// gqlgen writes a deferred field null in the first part
	first, later := strings.Index(got, `{"data":{"airport":{"code":"AMS","city":null}},"hasNext":true}`), strings.Index(got, `"label":"where"`)
	if rec.Code != http.StatusOK || first < 0 || later < first || !strings.Contains(got, `"data":{"city":{"code":"AMS","country":{"code":"NL"}}}`) {
		t.Errorf("status %d, parts:\n%s", rec.Code, got)
	}
}

// TestFieldArgsFollowTheVariables: the same document, parsed once and cached, answered with
// one language and then another, names every city and country in the language of its own
// request: a field's arguments are kept for the operation, not for the document.
func TestFieldArgsFollowTheVariables(t *testing.T) {
	stores, svc, now := seededStores(t)
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{Travel: svc, Now: now}})
	h := handler.New(schema)
	h.AddTransport(transport.POST{})
	h.SetQueryCache(lru.New[*ast.QueryDocument](100))
	h.AroundOperations(graph.PlanPrefetch(schema.Schema()))
	const query = `query($date: Date!, $lang: Language) { flights(origin: "AMS", date: $date, first: 10) { edges { node { legs {
	  destination { name city { name(language: $lang) country { name(language: $lang) } } } } } } } }`
	names := map[string][]string{}
	for _, lang := range []string{"EN", "FR", "EN", "NL"} {
		body, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"date": storetest.Now.Format(flightgraph.DateLayout), "lang": lang}})
		var resp struct {
			Data struct {
				Flights struct {
					Edges []struct {
						Node struct {
							Legs []struct {
								Destination struct {
									Name string
									City struct {
										Name    string
										Country struct{ Name string }
									}
								}
							}
						}
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(postOK(t, stores, h, body)), &resp); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range resp.Data.Flights.Edges {
			for _, l := range e.Node.Legs {
				d := l.Destination
				got = append(got, d.Name+" / "+d.City.Name+" / "+d.City.Country.Name)
			}
		}
		if len(got) == 0 {
			t.Fatalf("%s: no legs", lang)
		}
		if prev, ok := names[lang]; ok && !slices.Equal(prev, got) {
			t.Errorf("%s answered twice differently:\n%v\n%v", lang, prev, got)
		}
		names[lang] = got
	}
	if slices.Equal(names["EN"], names["FR"]) || slices.Equal(names["EN"], names["NL"]) {
		t.Errorf("the languages answer the same names: %v", names)
	}
}
