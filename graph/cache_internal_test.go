package graph

import (
	"reflect"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/flightgraph/flightgraph"
)

// policyOf returns the cache policy and hints of query over schema, as CacheControl computes them
// for an admitted operation.
func policyOf(t *testing.T, c *CacheControl, query string, vars map[string]any) (flightgraph.CachePolicy, []CacheHint) {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(c.schema, query)
	if errs != nil {
		t.Fatalf("%s: %v", query, errs)
	}
	return c.Policy(&graphql.OperationContext{RawQuery: query, Doc: doc, Operation: doc.Operations[0], Variables: vars})
}

// TestCachePolicy computes the policies of operations over the flight schema's hints: the least
// maxAge of the fields selected, private if any is, each root field's hint apart.
func TestCachePolicy(t *testing.T) {
	c := &CacheControl{}
	c.load(NewExecutableSchema(Config{}).Schema())
	long, schedule, status, quote := flightgraph.CacheReference, flightgraph.CacheSchedule, flightgraph.CacheStatus, flightgraph.CacheQuote
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		want        flightgraph.CachePolicy
	}{
		{"reference data", `{ airport(code: "AMS") { name city { name country { name } } } }`, nil, long},
		{"connection types inherit the root field's age", `{ airports { totalCount pageInfo { hasNextPage } edges { cursor node { code } } } }`, nil, long},
		{"a fleet, its cabins and amenities", `{ fleet { typeCode cabins { seats amenities { name } } } }`, nil, long},
		{"a flight as scheduled", `{ flight(id: "x") { designator origin { code } legs { departure { scheduled } } } }`, nil, schedule},
		{"a flight's status", `{ flight(id: "x") { designator status } }`, nil, status},
		{"a leg's gate", `{ flights(origin: "AMS") { edges { node { legs { departure { gate } } } } } }`, nil, status},
		{"a leg's planned aircraft", `{ flight(id: "x") { legs { aircraft { typeCode cabins { seats } } } } }`, nil, schedule},
		{"an offer is private", `{ airport(code: "AMS") { name } offer(id: "x") { id segments { flight { designator } } } }`, nil, quote},
		{"private and short", `{ cargoCapacity(flightId: "x") { payloadKg flight { id } } }`, nil, flightgraph.CacheStatus.AsPrivate()},
		{"@skip leaves a field out", `query($s: Boolean!) { airport(code: "AMS") { name } flight(id: "x") @skip(if: $s) { status } }`, map[string]any{"s": true}, long},
		{"@skip keeps it in", `query($s: Boolean!) { airport(code: "AMS") { name } flight(id: "x") @skip(if: $s) { status } }`, map[string]any{"s": false}, status},
		{"fragments count", `{ flight(id: "x") { ...f } } fragment f on Flight { legs { arrival { ...m } } } fragment m on Movement { estimated }`, nil, status},
		{"entities by their representations' types", `{ _entities(representations: [{__typename: "Airport", code: "AMS"}]) { ... on Airport { name } ... on Flight { status } } }`, nil, long},
		{"an entity's field", `{ _entities(representations: [{__typename: "Airport", code: "AMS"}, {__typename: "Flight", id: "x"}]) { ... on Airport { name } ... on Flight { status } } }`, nil, status},
		{"an entity that is private", `{ _entities(representations: [{__typename: "Offer", id: "x"}]) { ... on Offer { id } } }`, nil, quote},
		{"no entity: nothing to keep", `{ _entities(representations: []) { __typename } }`, nil, flightgraph.NoStore},
		{"__typename alone sets no age", `{ __typename }`, nil, flightgraph.NoStore},
		{"introspection is not kept by its hints", `{ __schema { queryType { name } } }`, nil, flightgraph.NoStore},
		{"a mutation is never kept", `mutation { addToShoppingCart(cartId: "x", products: []) { id } }`, nil, flightgraph.NoStore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := policyOf(t, c, tc.query, tc.vars); got != tc.want {
				t.Errorf("%s: %+v (%s), want %+v (%s)", tc.query, got, got.Header(), tc.want, tc.want.Header())
			}
		})
	}
	_, hints := policyOf(t, c, `{ hub: airport(code: "AMS") { name } flight(id: "x") { status } offer(id: "y") { id } __typename }`, nil)
	want := []CacheHint{{[]string{"hub"}, 86400, "PUBLIC"}, {[]string{"flight"}, 15, "PUBLIC"}, {[]string{"offer"}, 60, "PRIVATE"}}
	if !reflect.DeepEqual(hints, want) {
		t.Errorf("hints %+v, want %+v", hints, want)
	}
}

// TestCacheDefaults holds the rules to Apollo's where the flight schema has no example: a field
// returning an object without a hint, or a root field without one, is not cacheable; a field's
// maxAge replaces its type's; inheritMaxAge on a field takes the parent's age.
func TestCacheDefaults(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "test", Input: `
directive @cacheControl(maxAge: Int, scope: CacheControlScope, inheritMaxAge: Boolean) on FIELD_DEFINITION | OBJECT | INTERFACE | UNION
enum CacheControlScope { PUBLIC PRIVATE }
type Query {
  hinted: T
  plain: [String!]!
  shorter: T @cacheControl(maxAge: 5)
  private: T @cacheControl(scope: PRIVATE)
  bare: U @cacheControl(maxAge: 100)
  named: N
}
type T @cacheControl(maxAge: 50) { s: String u: U i: U @cacheControl(inheritMaxAge: true) }
type U { s: String }
interface N @cacheControl(maxAge: 30) { s: String }
type A implements N @cacheControl(maxAge: 20) { s: String }
type B implements N { s: String t: T }
`})
	c := &CacheControl{}
	c.load(schema)
	for _, tc := range []struct {
		query string
		want  flightgraph.CachePolicy
	}{
		{`{ hinted { s } }`, flightgraph.CachePolicy{MaxAge: 50}},
		{`{ plain }`, flightgraph.NoStore},
		{`{ shorter { s } }`, flightgraph.CachePolicy{MaxAge: 5}},
		{`{ private { s } }`, flightgraph.CachePolicy{MaxAge: 50, Private: true}},
		{`{ bare { s } }`, flightgraph.CachePolicy{MaxAge: 100}},
		{`{ hinted { u { s } } }`, flightgraph.NoStore},
		{`{ hinted { i { s } } }`, flightgraph.CachePolicy{MaxAge: 50}},
		// An abstract field: its own type's hint, each possible object's, and what each selects.
		{`{ named { s } }`, flightgraph.CachePolicy{MaxAge: 20}},
		{`{ named { ... on B { t { s } } } }`, flightgraph.CachePolicy{MaxAge: 20}},
		{`{ named { ... on B { t { u { s } } } } }`, flightgraph.NoStore},
	} {
		if got, _ := policyOf(t, c, tc.query, nil); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.query, got, tc.want)
		}
	}
}

// TestEveryTypeDeclaresItsCacheHint: every object type a query of the flight subgraph reaches
// says how long it may be cached (a hint of its own, or inheritMaxAge), and every root query
// field comes out cacheable, so that a field or type added later cannot make whole answers
// uncacheable unnoticed, nor public data private or private data public by omission.
func TestEveryTypeDeclaresItsCacheHint(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	reached := map[string]bool{}
	var reach func(name string)
	reach = func(name string) {
		def := schema.Types[name]
		if reached[name] || def == nil || def.BuiltIn || strings.HasPrefix(name, "_") {
			return
		}
		reached[name] = true
		if def.Kind == ast.Object && def != schema.Query && !hintOf(def.Directives).hinted {
			t.Errorf("type %s has no @cacheControl: give it a maxAge (and scope: PRIVATE for a caller's own data), or inheritMaxAge: true for a part of its parent", name)
		}
		for _, f := range def.Fields {
			reach(f.Type.Name())
		}
		for _, p := range schema.GetPossibleTypes(def) {
			reach(p.Name)
		}
	}
	reach(schema.Query.Name)
	for _, f := range schema.Query.Fields {
		if strings.HasPrefix(f.Name, "_") {
			continue // _service, _entities (by the entities' hints), __schema, __type
		}
		if r := ruleOf(schema, f, true); !r.restricts || r.maxAge <= 0 {
			t.Errorf("Query.%s is not cacheable: give it or its type a maxAge", f.Name)
		}
	}
}

// BenchmarkCachePolicy computes the policy of the Departures board (the server's benchmark
// query) as each request does, after execution collected its fields: what the cache policy adds to
// a request. Its cost does not grow with the page size: it walks the document, not the answer.
func BenchmarkCachePolicy(b *testing.B) {
	c := &CacheControl{}
	c.load(NewExecutableSchema(Config{}).Schema())
	const departures = `query Departures($date: Date!, $first: Int!) {
  flights(origin: "AMS", date: $date, first: $first) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node {
      id flightNumber status
      legs {
        origin { code name city { code name country { code name } } }
        destination { code name timeZone }
        departure { scheduled estimated terminal gate }
        arrival { scheduled estimated }
        aircraft { typeCode typeName configuration cabins { cabinClass seats amenities { category name description } } }
      }
    } }
  }
}`
	doc, errs := gqlparser.LoadQuery(c.schema, departures)
	if errs != nil {
		b.Fatal(errs)
	}
	oc := &graphql.OperationContext{RawQuery: departures, Doc: doc, Operation: doc.Operations[0], Variables: map[string]any{"date": "2026-11-22", "first": 50}}
	warmFieldCollection(c.schema, oc) // as PlanPrefetch does before execution
	b.ReportAllocs()
	for b.Loop() {
		if p, _ := c.Policy(oc); p != flightgraph.CacheStatus {
			b.Fatalf("%+v", p)
		}
	}
}
