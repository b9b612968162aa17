package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// InlineDeferred executes every @defer fragment inline: the answer holds all its fields at once,
// in one JSON answer or, for a client that asks for multipart/mixed, in the single part of an
// incremental delivery whose hasNext is false. The incremental delivery RFC lets a server ignore
// @defer and deliver the deferred data in the initial payload; @stream is not in the schema, so
// validation refuses it.
//
// gqlgen's own deferral is not used: its first payload carries null in place of every deferred
// field, non-null ones included, with no error; its mutations drop the deferred fields altogether;
// and a later payload could no longer be withdrawn by the access gate's second line (which answers
// no data at all for an operation admitted on a wrong reading), nor kept and tagged by Answers.
//
// It runs before the Gate, so that the operation the Gate admits, charges and bounds is the one
// that executes. The parsed document is shared through the query cache: it is copied where it
// changes, never changed.
type InlineDeferred struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = InlineDeferred{}

// deferredExtension marks, in the operation's Stats, an operation whose document used @defer.
const deferredExtension = "Deferred"

// ExtensionName implements graphql.HandlerExtension.
func (InlineDeferred) ExtensionName() string { return "InlineDeferred" }

// Validate implements graphql.HandlerExtension.
func (InlineDeferred) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext implements graphql.OperationContextMutator: the operation and its
// fragments lose their @defer directives.
func (InlineDeferred) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Doc == nil || oc.Operation == nil {
		return nil
	}
	doc, op, changed := withoutDefer(oc.Doc, oc.Operation)
	if changed {
		oc.Doc, oc.Operation = doc, op
		oc.Stats.SetExtension(deferredExtension, true)
	}
	return nil
}

// usedDefer reports whether the operation of oc was written with @defer.
func usedDefer(oc *graphql.OperationContext) bool {
	used, _ := oc.Stats.GetExtension(deferredExtension).(bool)
	return used
}

// withoutDefer returns doc and its operation op with no @defer anywhere, and whether that changed
// anything; unchanged parts are shared with doc.
func withoutDefer(doc *ast.QueryDocument, op *ast.OperationDefinition) (*ast.QueryDocument, *ast.OperationDefinition, bool) {
	s := stripper{fragments: map[string]*ast.FragmentDefinition{}}
	// Fragments first, so that a spread can point at its fragment's copy. A fragment's
	// selections may spread other fragments: resolve them in dependency order, by recursion;
	// validation has refused cycles.
	s.doc = doc
	for _, f := range doc.Fragments {
		s.fragment(f)
	}
	set, changed := s.set(op.SelectionSet)
	if !changed && !s.anyFragment {
		return doc, op, false
	}
	newOp := *op
	newOp.SelectionSet = set
	newDoc := *doc
	newDoc.Operations = make(ast.OperationList, len(doc.Operations))
	for i, o := range doc.Operations {
		if o == op {
			o = &newOp
		}
		newDoc.Operations[i] = o
	}
	newDoc.Fragments = make(ast.FragmentDefinitionList, len(doc.Fragments))
	for i, f := range doc.Fragments {
		newDoc.Fragments[i] = s.fragments[f.Name]
	}
	return &newDoc, &newOp, true
}

type stripper struct {
	doc         *ast.QueryDocument
	fragments   map[string]*ast.FragmentDefinition // name → the fragment without @defer
	busy        map[string]bool
	anyFragment bool // some fragment changed
}

// fragment returns f without @defer (f itself when it has none).
func (s *stripper) fragment(f *ast.FragmentDefinition) *ast.FragmentDefinition {
	if done, ok := s.fragments[f.Name]; ok {
		return done
	}
	if s.busy == nil {
		s.busy = map[string]bool{}
	}
	if s.busy[f.Name] { // a cycle, which validation refuses: leave it as it is
		return f
	}
	s.busy[f.Name] = true
	set, changed := s.set(f.SelectionSet)
	out := f
	if changed {
		c := *f
		c.SelectionSet = set
		out = &c
		s.anyFragment = true
	}
	s.fragments[f.Name] = out
	return out
}

// set returns set without @defer, and whether that changed it.
func (s *stripper) set(set ast.SelectionSet) (ast.SelectionSet, bool) {
	var out ast.SelectionSet // nil until something changes
	for i, sel := range set {
		var repl ast.Selection
		switch sel := sel.(type) {
		case *ast.Field:
			if sub, changed := s.set(sel.SelectionSet); changed {
				c := *sel
				c.SelectionSet = sub
				repl = &c
			}
		case *ast.InlineFragment:
			sub, changed := s.set(sel.SelectionSet)
			dirs, dropped := dropDefer(sel.Directives)
			if changed || dropped {
				c := *sel
				c.SelectionSet, c.Directives = sub, dirs
				repl = &c
			}
		case *ast.FragmentSpread:
			dirs, dropped := dropDefer(sel.Directives)
			def, fragmentChanged := sel.Definition, false
			if f := s.doc.Fragments.ForName(sel.Name); f != nil {
				def = s.fragment(f)
				fragmentChanged = def != f
			}
			if dropped || fragmentChanged {
				c := *sel
				c.Directives, c.Definition = dirs, def
				repl = &c
			}
		}
		if repl != nil && out == nil {
			out = make(ast.SelectionSet, len(set))
			copy(out, set[:i])
		}
		if out != nil {
			if repl == nil {
				repl = sel
			}
			out[i] = repl
		}
	}
	if out == nil {
		return set, false
	}
	return out, true
}

// dropDefer returns dirs without @defer, and whether it had one.
func dropDefer(dirs ast.DirectiveList) (ast.DirectiveList, bool) {
	if dirs.ForName("defer") == nil {
		return dirs, false
	}
	out := make(ast.DirectiveList, 0, len(dirs)-1)
	for _, d := range dirs {
		if d.Name != "defer" {
			out = append(out, d)
		}
	}
	return out, true
}
