package graph

import (
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// The cost of an operation is the number of objects it can build, computed from the schema before
// anything runs (Federation 2.9 demand control, from IBM's GraphQL cost directives): an object
// costs 1 and a scalar or enum 0 unless @cost weighs them otherwise; a list field multiplies the
// cost of one of its items by its size, which is the value of its slicing argument (first, its
// default when absent) or the size @listSize assumes. A connection's size applies to its edges
// (@listSize's sizedFields). Fragments on abstract types all count, which overestimates only
// selections no single object can take. This is what bounds the schema's cycles: city → airports
// → city nine levels deep has a cost in the billions, while its document is 253 bytes.

// defaultListSize is the size of a list field that declares none; a test holds every list field
// of the schema to declaring one, so this only ever meets a field added without one.
const defaultListSize = 100

// introspectionCost is the cost of __schema or __type. Their answers come from memory and are
// bounded by the schema's size and the validator's MaxIntrospectionDepth rule, but the whole
// schema is some 80 KB of JSON: the cost keeps an operation to one or two of them on the
// Default plan.
const introspectionCost = 8_000

// maxCost is where costs saturate: no operation can overflow the sum by piling up lists.
const maxCost = math.MaxInt32

type coster struct {
	schema *ast.Schema
	doc    *ast.QueryDocument
	vars   map[string]any
}

// operationCost returns the cost of oc's validated operation with oc's variables. Its walk expands
// fragment spreads, so it must only see documents that Bounds (or measure) found within MaxFields.
func operationCost(schema *ast.Schema, oc *graphql.OperationContext) int {
	c := coster{schema: schema, doc: oc.Doc, vars: oc.Variables}
	return c.set(oc.Operation.SelectionSet, nil)
}

// set returns the cost of one selection set. sized gives the sizes that the parent field's
// @listSize(sizedFields: …) hands to some of the fields of this set.
func (c *coster) set(set ast.SelectionSet, sized map[string]int) int {
	total := 0
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			total = add(total, c.field(sel, sized))
		case *ast.InlineFragment:
			total = add(total, c.set(sel.SelectionSet, sized))
		case *ast.FragmentSpread:
			if f := c.doc.Fragments.ForName(sel.Name); f != nil {
				total = add(total, c.set(f.SelectionSet, sized))
			}
		}
	}
	return total
}

func (c *coster) field(f *ast.Field, sized map[string]int) int {
	switch f.Name {
	case "__typename":
		return 0
	case "__schema", "__type":
		return introspectionCost
	}
	def := f.Definition
	if def == nil {
		return 0 // not a field of the schema: validation refused the document already
	}
	named := c.schema.Types[def.Type.Name()]
	item := weight(def.Directives, named)
	var args map[string]any
	if size := listSize(def); size != nil || f.Name == "_entities" {
		args = f.ArgumentMap(c.vars)
	}
	var childSized map[string]int
	if size := listSize(def); size != nil && len(size.sizedFields) > 0 {
		n := size.of(args)
		childSized = make(map[string]int, len(size.sizedFields))
		for _, name := range size.sizedFields {
			childSized[name] = n
		}
	}
	if named != nil && named.IsCompositeType() {
		item = add(item, c.set(f.SelectionSet, childSized))
	}
	n := 1
	switch {
	case sized[f.Name] > 0:
		n = sized[f.Name]
	case f.Name == "_entities":
		n = len(representations(args))
	case def.Type.Elem != nil:
		n = defaultListSize
		if size := listSize(def); size != nil && len(size.sizedFields) == 0 {
			n = size.of(args)
		}
	}
	return mul(n, item)
}

// weight is the cost of one value of a field: its @cost, else its type's @cost, else 1 for
// objects, interfaces and unions and 0 for scalars and enums.
func weight(field ast.DirectiveList, named *ast.Definition) int {
	if w, ok := costOf(field); ok {
		return w
	}
	if named == nil {
		return 0
	}
	if w, ok := costOf(named.Directives); ok {
		return w
	}
	if named.IsCompositeType() {
		return 1
	}
	return 0
}

func costOf(dirs ast.DirectiveList) (int, bool) {
	d := dirs.ForName("cost")
	if d == nil {
		return 0, false
	}
	a := d.Arguments.ForName("weight")
	if a == nil || a.Value == nil {
		return 0, false
	}
	w, err := strconv.Atoi(a.Value.Raw)
	return max(w, 0), err == nil
}

// sizing is a field's @listSize.
type sizing struct {
	assumed     int
	slicing     []string
	sizedFields []string
}

// listSize returns the field's @listSize, or nil.
func listSize(def *ast.FieldDefinition) *sizing {
	d := def.Directives.ForName("listSize")
	if d == nil {
		return nil
	}
	s := &sizing{assumed: defaultListSize}
	for _, a := range d.Arguments {
		if a.Value == nil {
			continue
		}
		switch a.Name {
		case "assumedSize":
			if n, err := strconv.Atoi(a.Value.Raw); err == nil {
				s.assumed = n
			}
		case "slicingArguments", "sizedFields":
			var names []string
			for _, c := range a.Value.Children {
				names = append(names, c.Value.Raw)
			}
			if a.Name == "slicingArguments" {
				s.slicing = names
			} else {
				s.sizedFields = names
			}
		}
	}
	return s
}

// of returns the size for a field's arguments: the largest slicing argument given (with its
// default), else the assumed size. A negative slice is empty.
func (s *sizing) of(args map[string]any) int {
	n, found := 0, false
	for _, name := range s.slicing {
		if v, ok := toInt(args[name]); ok {
			n, found = max(n, v), true
		}
	}
	if !found {
		return s.assumed
	}
	return max(n, 0)
}

// toInt reads an Int argument as gqlgen will unmarshal it for the resolver (an int64 from the
// document; from the variables a JSON number, or even a string of digits), saturating at maxCost.
func toInt(v any) (int, bool) {
	if v == nil {
		return 0, false
	}
	n, err := graphql.UnmarshalInt(v)
	if err != nil {
		return 0, false
	}
	return min(n, maxCost), true
}

// add and mul saturate at maxCost.
func add(a, b int) int { return min(a+b, maxCost) }

func mul(a, b int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > maxCost/b {
		return maxCost
	}
	return a * b
}
