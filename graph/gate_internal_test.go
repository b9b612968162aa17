package graph

import (
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/flightgraph/flightgraph"
)

// gateSchema has what the product table reads: products on root fields and entity types, portal
// fields, a field that declares neither, a mutation that belongs to a product, and an entity type
// that names no product.
const gateSchema = `
directive @api(product: String!) on FIELD_DEFINITION | OBJECT
directive @portal on FIELD_DEFINITION
directive @key(fields: String!) on OBJECT
scalar _Any
type T @key(fields: "id") @api(product: "tee") { id: ID! }
type U @key(fields: "id") { id: ID! }
union _Entity = T | U
type Query {
  a: Int @api(product: "ay")
  b: Int @api(product: "bee")
  p: Int @portal
  undeclared: Int
  _entities(representations: [_Any!]!): [_Entity]!
}
type Mutation {
  m: Int @api(product: "em")
  pm: Int @portal
}
`

// TestGateChargesWhatExecutes: the products charged are those of the root fields execution
// collects, whatever the spelling, and a field or entity type that names no product refuses the
// operation (fails closed).
func TestGateChargesWhatExecutes(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: gateSchema})
	g := &Gate{schema: schema}
	g.roots, g.entities = productTable(schema)
	for _, c := range []struct {
		query string
		vars  map[string]any
		want  string // products, or "error"
	}{
		{`{ a }`, nil, "ay"},
		{`{ x: a y: a b }`, nil, "ay bee"},
		{`{ ...F } fragment F on Query { ...G } fragment G on Query { ... on Query { b } }`, nil, "bee"},
		{`{ a @skip(if: true) b }`, nil, "bee"},
		{`query($s: Boolean!) { a @include(if: $s) }`, map[string]any{"s": false}, ""},
		{`query($s: Boolean!) { a @include(if: $s) }`, map[string]any{"s": true}, "ay"},
		{`{ p __typename }`, nil, ""},
		{`{ undeclared }`, nil, "error"},
		{`{ p ...F } fragment F on Query { undeclared }`, nil, "error"},
		{`mutation { m }`, nil, "em"},
		{`mutation { pm }`, nil, ""},
		{`{ _entities(representations: [{__typename: "T", id: "1"}]) { __typename } }`, nil, "tee"},
		{`query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`,
			map[string]any{"r": []any{map[string]any{"__typename": "T", "id": "1"}, map[string]any{"__typename": "T", "id": 2}}}, "tee"},
		{`query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`, map[string]any{"r": map[string]any{"__typename": "T", "id": "1"}}, "tee"},
		{`{ _entities(representations: {__typename: "T", id: "1"}) { __typename } }`, nil, "tee"},
		{`query($r: [_Any!]!) { _entities(representations: $r) { __typename } }`,
			map[string]any{"r": []any{map[string]any{"__typename": "T", "id": "1"}, map[string]any{"__typename": "Nope"}}}, "error"},
		{`{ _entities(representations: [{__typename: "T"}]) { __typename } }`, nil, "error"},
		{`{ _entities(representations: [{__typename: "T", id: null}]) { __typename } }`, nil, "error"},
		{`{ _entities(representations: ["T"]) { __typename } }`, nil, "error"},
		{`{ _entities(representations: [{__typename: "U", id: "1"}]) { __typename } }`, nil, "error"},
	} {
		doc, errs := gqlparser.LoadQuery(schema, c.query)
		if errs != nil {
			t.Fatalf("%s: %v", c.query, errs)
		}
		oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: c.vars}
		got, err := g.operationCalls(oc)
		products := strings.Join(got.products, " ")
		if err != nil {
			products = "error"
		}
		if products != c.want {
			t.Errorf("%s %v: charged %q, want %q", c.query, c.vars, products, c.want)
		}
		if err == nil && !slices.IsSorted(got.products) {
			t.Errorf("%s: products not sorted: %v", c.query, got.products)
		}
	}
}

// TestOneSearch: the second line behind the shape's bound admits a request's first network-wide
// search and refuses every later one.
func TestOneSearch(t *testing.T) {
	l := &Loaders{}
	if err := l.OneSearch("allDeals"); err != nil {
		t.Fatalf("the first search: %v", err)
	}
	for range 2 {
		if err := l.OneSearch("destinations"); flightgraph.ErrorCode(err) != flightgraph.ECodeQueryRootFields {
			t.Errorf("a later search: %v", err)
		}
	}
}
