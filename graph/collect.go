package graph

import (
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Every object gqlgen marshals first collects its fields: graphql.CollectFields, memoised per
// operation in a map behind a read-write lock, keyed by the selection set and the type's
// implementors. On a cold map the siblings of a list, each in a goroutine of its own, miss
// together and queue for the write lock; new readers then queue behind the writers. On a 50-flight
// board that convoy, not the work, was most of the wall time of marshalling.
//
// warmFieldCollection fills that map before execution, walking the operation the way the
// generated code will, so that execution only ever reads it. It computes nothing execution would
// not compute anyway, once per selection set and type rather than once per goroutine that missed.

// warmFieldCollection collects the fields of every selection set of oc's operation for every
// object type that can appear there.
func warmFieldCollection(schema *ast.Schema, oc *graphql.OperationContext) {
	if schema == nil || oc == nil || oc.Operation == nil {
		return
	}
	root := rootType(schema, oc.Operation.Operation)
	if root == nil {
		return
	}
	w := warmer{schema: schema, oc: oc, implementors: map[string][]string{}}
	w.warm(oc.Operation.SelectionSet, root, 0)
}

type warmer struct {
	schema       *ast.Schema
	oc           *graphql.OperationContext
	implementors map[string][]string
}

func (w *warmer) warm(set ast.SelectionSet, def *ast.Definition, depth int) {
	if len(set) == 0 || def == nil || depth > 64 { // validation bounds real documents far below 64
		return
	}
	objects := []*ast.Definition{def}
	if def.IsAbstractType() {
		objects = w.schema.GetPossibleTypes(def)
	}
	for _, obj := range objects {
		for _, f := range graphql.CollectFields(w.oc, set, w.implementorsOf(obj)) {
			if f.Definition != nil && len(f.Selections) > 0 {
				w.warm(f.Selections, w.schema.Types[f.Definition.Type.Name()], depth+1)
			}
		}
	}
}

// implementorsOf is the list the generated code passes for obj ("<obj>Implementors" in
// generated.go): its name, then the interfaces and unions it belongs to, in schema order. The
// memo's key hashes this list, so it must match exactly; TestWarmFieldCollection holds it to that.
func (w *warmer) implementorsOf(obj *ast.Definition) []string {
	if names, ok := w.implementors[obj.Name]; ok {
		return names
	}
	names := []string{obj.Name}
	for _, d := range w.schema.GetImplements(obj) {
		names = append(names, d.Name)
	}
	w.implementors[obj.Name] = names
	return names
}

func rootType(schema *ast.Schema, op ast.Operation) *ast.Definition {
	switch op {
	case ast.Query:
		return schema.Query
	case ast.Mutation:
		return schema.Mutation
	case ast.Subscription:
		return schema.Subscription
	}
	return nil
}
