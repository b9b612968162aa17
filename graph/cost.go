package graph

import (
	"math"
	"strconv"
	"strings"

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

// maxCost is where costs saturate: no operation can overflow the sum by piling up lists.
const maxCost = math.MaxInt32

// costModel is what the schema's @cost and @listSize say of each field, read once, when the
// schema is: every operation's cost is computed from it.
type costModel struct {
	schema *ast.Schema
	fields map[*ast.FieldDefinition]fieldCost
}

// fieldCost is one field's part of the model.
type fieldCost struct {
	weight int     // of one value
	size   *sizing // nil when the field declares none
}

func newCostModel(schema *ast.Schema) *costModel {
	m := &costModel{schema: schema, fields: map[*ast.FieldDefinition]fieldCost{}}
	for _, def := range schema.Types {
		for _, f := range def.Fields {
			m.fields[f] = fieldCost{weight: weight(f.Directives, schema.Types[f.Type.Name()]), size: listSize(f)}
		}
	}
	return m
}

type coster struct {
	*costModel
	doc  *ast.QueryDocument
	vars map[string]any
	// budget and introBudget are where counting may stop, the answer being a refusal already:
	// above the cost the plan allows, or above the introspection an operation may hold.
	budget, introBudget int
	// introspected is the part of the cost that introspection holds.
	introspected int
}

// operationCost returns the cost of oc's validated operation with oc's variables and the part of
// it that introspection holds, or figures above budget or introBudget once it is clear that they
// exceed them. Its walk expands fragment spreads, so it must only see documents that Bounds (or
// measure) found within MaxFields.
func operationCost(m *costModel, oc *graphql.OperationContext, budget, introBudget int) (cost, introspected int) {
	c := coster{costModel: m, doc: oc.Doc, vars: oc.Variables, budget: budget, introBudget: introBudget}
	cost = c.set(oc.Operation.SelectionSet, nil)
	return cost, c.introspected
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
		n := 0
		if f.Name == "__schema" {
			n = c.introspect(f.SelectionSet, introObject{kind: "__Schema"})
		} else if name, _ := f.ArgumentMap(c.vars)["name"].(string); c.schema.Types[name] != nil {
			n = c.introspect(f.SelectionSet, introObject{kind: "__Type", def: c.schema.Types[name]})
		}
		c.introspected = add(c.introspected, n)
		return n
	}
	def := f.Definition
	if def == nil {
		return 0 // not a field of the schema: validation refused the document already
	}
	fc, ok := c.fields[def]
	if !ok {
		// A definition the model has not seen: read it now, as the model would have.
		fc = fieldCost{weight: weight(def.Directives, c.schema.Types[def.Type.Name()]), size: listSize(def)}
	}
	size, item := fc.size, fc.weight
	var args map[string]any
	if size != nil || f.Name == "_entities" {
		args = f.ArgumentMap(c.vars)
	}
	var childSized map[string]int
	if size != nil && len(size.sizedFields) > 0 {
		n := size.of(args)
		childSized = make(map[string]int, len(size.sizedFields))
		for _, name := range size.sizedFields {
			childSized[name] = n
		}
	}
	if named := c.schema.Types[def.Type.Name()]; named != nil && named.IsCompositeType() {
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
		if size != nil && len(size.sizedFields) == 0 {
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
// default), else the assumed size. A slice of 0 or less counts as the assumed size: resolvers
// take it for "the default page", not for nothing.
func (s *sizing) of(args map[string]any) int {
	n := 0
	for _, name := range s.slicing {
		if v, ok := toInt(args[name]); ok {
			n = max(n, v)
		}
	}
	if n <= 0 {
		return s.assumed
	}
	return n
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

// Introspection answers from the schema itself, so its cost is not estimated but counted: the
// walk below follows the selection over the schema's definitions and counts every object the
// answer will hold (each 1, scalars 0), as the introspection resolvers would produce them,
// stopping once the count passes the budget. Aliases that repeat the whole schema, or lists
// nested in lists, cost what they weigh.

// introObject is one object of an introspection answer: the schema, a type (a definition, or a
// wrapper of the NON_NULL or LIST kind), a field, an input value, an enum value or a directive.
type introObject struct {
	kind  string // its introspection type: __Schema, __Type, __Field, __InputValue, __EnumValue, __Directive
	def   *ast.Definition
	typ   *ast.Type // of a __Type that may be a wrapper, or of an __InputValue
	field *ast.FieldDefinition
	dir   *ast.DirectiveDefinition
}

// typeObject is the __Type of t: a wrapper while t is non-null or a list, else its definition.
func (c *coster) typeObject(t *ast.Type) introObject {
	if t.NonNull || t.Elem != nil {
		return introObject{kind: "__Type", typ: t}
	}
	return introObject{kind: "__Type", def: c.schema.Types[t.NamedType]}
}

// introspect returns the cost of the object o with the selection set: 1 and what the selected
// fields hold.
func (c *coster) introspect(set ast.SelectionSet, o introObject) int {
	total := 1
	c.introspectSet(set, o, &total)
	return total
}

func (c *coster) introspectSet(set ast.SelectionSet, o introObject, total *int) {
	for _, sel := range set {
		if c.exhausted(*total) {
			return
		}
		switch sel := sel.(type) {
		case *ast.InlineFragment:
			c.introspectSet(sel.SelectionSet, o, total)
		case *ast.FragmentSpread:
			if f := c.doc.Fragments.ForName(sel.Name); f != nil {
				c.introspectSet(f.SelectionSet, o, total)
			}
		case *ast.Field:
			for _, child := range c.introspectField(o, sel) {
				*total = add(*total, c.introspect(sel.SelectionSet, child))
				if c.exhausted(*total) {
					return
				}
			}
		}
	}
}

// exhausted reports whether an introspection walk that has counted total so far may stop.
func (c *coster) exhausted(total int) bool {
	return total > c.budget || add(c.introspected, total) > c.introBudget
}

// introspectField returns the objects a field of o holds; none for a scalar.
func (c *coster) introspectField(o introObject, f *ast.Field) []introObject {
	var out []introObject
	switch o.kind + "." + f.Name {
	case "__Schema.types":
		for _, d := range c.schema.Types {
			out = append(out, introObject{kind: "__Type", def: d})
		}
	case "__Schema.queryType", "__Schema.mutationType", "__Schema.subscriptionType":
		root := map[string]*ast.Definition{"__Schema.queryType": c.schema.Query, "__Schema.mutationType": c.schema.Mutation,
			"__Schema.subscriptionType": c.schema.Subscription}[o.kind+"."+f.Name]
		if root != nil {
			out = append(out, introObject{kind: "__Type", def: root})
		}
	case "__Schema.directives":
		for _, d := range c.schema.Directives {
			out = append(out, introObject{kind: "__Directive", dir: d})
		}
	case "__Type.ofType":
		if t := o.typ; t != nil {
			inner := *t
			if inner.NonNull {
				inner.NonNull = false
			} else {
				inner = *t.Elem
			}
			out = append(out, c.typeObject(&inner))
		}
	case "__Type.fields", "__Type.inputFields":
		if o.def != nil && (o.def.Kind == ast.InputObject) == (f.Name == "inputFields") {
			for _, fd := range o.def.Fields {
				if f.Name == "inputFields" {
					out = append(out, introObject{kind: "__InputValue", typ: fd.Type})
				} else if !strings.HasPrefix(fd.Name, "__") {
					out = append(out, introObject{kind: "__Field", field: fd})
				}
			}
		}
	case "__Type.interfaces":
		if o.def != nil {
			for _, name := range o.def.Interfaces {
				out = append(out, introObject{kind: "__Type", def: c.schema.Types[name]})
			}
		}
	case "__Type.possibleTypes":
		if o.def != nil && o.def.IsAbstractType() {
			for _, d := range c.schema.GetPossibleTypes(o.def) {
				out = append(out, introObject{kind: "__Type", def: d})
			}
		}
	case "__Type.enumValues":
		if o.def != nil {
			for range o.def.EnumValues {
				out = append(out, introObject{kind: "__EnumValue"})
			}
		}
	case "__Field.args":
		for _, a := range o.field.Arguments {
			out = append(out, introObject{kind: "__InputValue", typ: a.Type})
		}
	case "__Directive.args":
		for _, a := range o.dir.Arguments {
			out = append(out, introObject{kind: "__InputValue", typ: a.Type})
		}
	case "__Field.type":
		out = append(out, c.typeObject(o.field.Type))
	case "__InputValue.type":
		out = append(out, c.typeObject(o.typ))
	}
	return out
}
