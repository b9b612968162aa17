package graph

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestObjectWritesAsFieldSet: an object writes what gqlgen's FieldSet writes for the same fields
// and values: none, one, an alias kept twice (the first wins), and more fields than it looks
// back along.
func TestObjectWritesAsFieldSet(t *testing.T) {
	field := func(alias string) graphql.CollectedField {
		return graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}}
	}
	many := func(n int, dup int) []graphql.CollectedField {
		var fs []graphql.CollectedField
		for i := range n {
			fs = append(fs, field(fmt.Sprintf("f%d", i%(n-dup))))
		}
		return fs
	}
	for _, fields := range [][]graphql.CollectedField{
		nil,
		{field("id")},
		{field("id"), field("name"), field("id"), field("__typename")},
		many(objectScanMax, 0),
		many(objectScanMax+1, 3),
		many(3*objectScanMax, objectScanMax),
	} {
		values := make([]graphql.Marshaler, len(fields))
		for i := range values {
			values[i] = graphql.MarshalInt(i)
		}
		var gqlgens, ours bytes.Buffer
		fs := graphql.NewFieldSet(fields)
		copy(fs.Values, values)
		fs.MarshalGQL(&gqlgens)
		object{fields, values}.MarshalGQL(&ours)
		if ours.String() != gqlgens.String() {
			t.Errorf("%d fields: object writes\n%s\nFieldSet\n%s", len(fields), ours.String(), gqlgens.String())
		}
	}
}
