package graph

import (
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/flightgraph/flightgraph"
)

// Operations are the GraphQL operations of every product, as the flight schema declares them
// with @api: its root fields ("query flights"), in the schema's order, and its entity types
// ("entity Airport", resolved through _entities), by name. The gate charges the same
// declarations (productTable).
func Operations() []flightgraph.Operation {
	return operationsOf(NewExecutableSchema(Config{}).Schema())
}

func operationsOf(schema *ast.Schema) []flightgraph.Operation {
	var ops []flightgraph.Operation
	for _, root := range []*ast.Definition{schema.Query, schema.Mutation, schema.Subscription} {
		if root == nil {
			continue
		}
		for _, f := range root.Fields {
			if p := apiOf(f.Directives); p != "" {
				ops = append(ops, flightgraph.Operation{Product: p, Edge: strings.ToLower(root.Name), Name: f.Name, Weight: weightOf(f.Directives)})
			}
		}
	}
	_, entities := productTable(schema)
	names := make([]string, 0, len(entities))
	for name := range entities {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if p := entities[name].product; p != "" {
			ops = append(ops, flightgraph.Operation{Product: p, Edge: "entity", Name: name})
		}
	}
	return ops
}
