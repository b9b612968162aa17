package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// A document is bounded before gqlgen validates it, because validation is where an abusive
// document costs most: the rule that overlapping fields can be merged compares every pair of
// fields that share a response name, so 16,000 copies of `a: __typename` took 21 s. Tokens bound
// the parser; fields, with every fragment spread expanded, bound everything after it; and the
// copies of one response name at one place of the response (fragments merged, as execution merges
// them) bound that rule's pairs to at most MaxRepeats × MaxFields. Depth, aliases and root fields
// are the plan's limits (flightgraph.QueryLimits), checked here against the most generous of the
// caller's plans, and again after validation against the plans of the products the operation
// calls (Gate).

// MaxFields bounds the fields of a document, each fragment spread counted as often as it is
// spread; the GraphQL introspection query of GraphiQL has about 190.
const MaxFields = 1_000

// MaxRepeats bounds how many fields of a document land on one place of the response (one
// response name under one parent, fragments merged). Clients repeat a field a few times at most,
// when several fragments each select it.
const MaxRepeats = 16

// Shape is what a document asks for, measured on its syntax before validation.
type Shape struct {
	Tokens int
	// Fields counts the fields of every operation and fragment definition, fragment spreads
	// expanded; it stops counting past MaxFields.
	Fields int
	// Repeats is the most fields landing on one place of one operation's response.
	Repeats int
	// Depth, Aliases and RootFields are the most of any one operation.
	Depth, Aliases, RootFields int
	// Searches is the most network-wide search fields (NetworkSearches) of one operation.
	Searches int
}

// NetworkSearches are the root fields that read and price an origin's month or more (a second
// of CPU where a search takes milliseconds): an operation, charged as one call, may select one of
// them once (Loaders.OneSearch holds the line again as they run).
var NetworkSearches = map[string]bool{"destinations": true, "bestFareOffers": true, "allDeals": true, "bestOffersFeed": true}

// Exceeds returns the error of the first limit s exceeds, or nil.
func (s Shape) Exceeds(l flightgraph.QueryLimits) error {
	switch {
	case s.Tokens > l.MaxTokens:
		return flightgraph.Errorf(flightgraph.ECodeQueryTokens, "the document has more than %d tokens", l.MaxTokens)
	case s.Fields > MaxFields:
		return flightgraph.Errorf(flightgraph.ECodeQueryTokens, "the document has more than %d fields, counting each fragment spread", MaxFields)
	case s.Repeats > MaxRepeats:
		return flightgraph.Errorf(flightgraph.ECodeQueryRepeats, "%d fields land on one place of the response; at most %d may", s.Repeats, MaxRepeats)
	case s.Depth > l.MaxDepth:
		return flightgraph.Errorf(flightgraph.ECodeQueryDepth, "the operation nests %d levels deep; the plan allows %d", s.Depth, l.MaxDepth)
	case s.Aliases > l.MaxAliases:
		return flightgraph.Errorf(flightgraph.ECodeQueryAliases, "the operation has %d aliases; the plan allows %d", s.Aliases, l.MaxAliases)
	case s.RootFields > l.MaxRootFields:
		return flightgraph.Errorf(flightgraph.ECodeQueryRootFields, "the operation has %d root fields; the plan allows %d", s.RootFields, l.MaxRootFields)
	case s.Searches > 1:
		return flightgraph.Errorf(flightgraph.ECodeQueryRootFields, "the operation runs %d inspiration or deals searches; an operation runs one, so send the others as operations of their own", s.Searches)
	}
	return nil
}

// countTokens counts the lexical tokens of query, stopping once there are more than limit. A
// lexical error stops the count: the parser reports it.
func countTokens(query string, limit int) int {
	lx := lexer.New(&ast.Source{Input: query})
	n := 0
	for n <= limit {
		tok, err := lx.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			break
		}
		n++
	}
	return n
}

// measure measures a parsed, not yet validated document. Its walk expands fragment spreads and
// stops once it has seen more than MaxFields fields, so no document makes it work longer than
// that; a fragment that spreads itself is an error (validation would refuse it too). The fields
// below __schema and __type count as fields but not for depth: introspection nests deeply by
// nature, and the validator bounds it (its MaxIntrospectionDepth rule).
func measure(doc *ast.QueryDocument) (Shape, error) {
	m := measurer{doc: doc, spreading: map[string]bool{}}
	var s Shape
	walk := func(set ast.SelectionSet) (int, error) {
		m.places, m.aliases, m.roots, m.searches = map[string]int{}, 0, 0, 0
		depth, err := m.walk(set, "", 1, true)
		for _, n := range m.places {
			s.Repeats = max(s.Repeats, n)
		}
		return depth, err
	}
	for _, op := range doc.Operations {
		depth, err := walk(op.SelectionSet)
		if err != nil {
			return s, err
		}
		s.Depth, s.Aliases, s.RootFields = max(s.Depth, depth), max(s.Aliases, m.aliases), max(s.RootFields, m.roots)
		if op.Operation == ast.Query {
			s.Searches = max(s.Searches, m.searches)
		}
	}
	// Fragment definitions are validated on their own as well as where they are spread.
	for _, f := range doc.Fragments {
		if _, err := walk(f.SelectionSet); err != nil {
			return s, err
		}
	}
	s.Fields = m.fields
	return s, nil
}

type measurer struct {
	doc       *ast.QueryDocument
	spreading map[string]bool // the fragments being expanded, to find cycles
	fields    int

	// Of the operation or fragment being walked:
	places   map[string]int // fields per place of the response
	aliases  int
	roots    int
	searches int
}

// walk measures set, whose fields land under the response path at, and returns the depth of its
// deepest field; deep is false below introspection, whose depth does not count.
func (m *measurer) walk(set ast.SelectionSet, at string, depth int, deep bool) (int, error) {
	deepest := 0
	for _, sel := range set {
		if m.fields > MaxFields {
			break
		}
		var (
			d   int
			err error
		)
		switch sel := sel.(type) {
		case *ast.Field:
			m.fields++
			if at == "" {
				m.roots++
				if NetworkSearches[sel.Name] {
					m.searches++
				}
			}
			name := sel.Alias
			if name == "" {
				name = sel.Name
			} else if sel.Alias != sel.Name {
				m.aliases++
			}
			place := at + "." + name
			m.places[place]++
			d = depth
			if len(sel.SelectionSet) > 0 {
				inner := deep && sel.Name != "__schema" && sel.Name != "__type"
				if d, err = m.walk(sel.SelectionSet, place, depth+1, inner); !inner {
					d = depth
				}
			}
		case *ast.InlineFragment:
			d, err = m.walk(sel.SelectionSet, at, depth, deep)
		case *ast.FragmentSpread:
			f := m.doc.Fragments.ForName(sel.Name)
			if f == nil {
				continue // validation reports the unknown fragment
			}
			if m.spreading[sel.Name] {
				return 0, fmt.Errorf("fragment %s spreads itself", sel.Name)
			}
			m.spreading[sel.Name] = true
			d, err = m.walk(f.SelectionSet, at, depth, deep)
			delete(m.spreading, sel.Name)
		}
		if err != nil {
			return 0, err
		}
		if deep {
			deepest = max(deepest, d)
		}
	}
	return deepest, nil
}

// Bounds is the gqlgen extension that refuses an oversized document before gqlgen parses and
// validates it (an OperationParameterMutator: it runs once persisted queries are resolved, and
// before the parser). Documents are measured once and remembered by their text.
type Bounds struct {
	shapes *lru.LRU[Shape]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = (*Bounds)(nil)

// NewBounds returns a Bounds that remembers the shapes of the last 1,000 documents.
func NewBounds() *Bounds { return &Bounds{shapes: lru.New[Shape](1000)} }

// ExtensionName implements graphql.HandlerExtension.
func (b *Bounds) ExtensionName() string { return "Bounds" }

// Validate implements graphql.HandlerExtension.
func (b *Bounds) Validate(graphql.ExecutableSchema) error { return nil }

type shapeKey struct{}

// MutateOperationParameters implements graphql.OperationParameterMutator: it holds the document
// to the most generous of the caller's plans, and leaves its shape for the Gate, which holds it to
// the plans of the products the operation turns out to call.
func (b *Bounds) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	limits := access.QueryLimits(ctx, nil)
	shape, ok := b.shapes.Get(ctx, p.Query)
	if !ok {
		shape.Tokens = countTokens(p.Query, limits.MaxTokens)
		if shape.Tokens > limits.MaxTokens {
			return refusal(shape.Exceeds(limits)) // not remembered: counting stopped at this caller's limit
		}
		doc, err := parser.ParseQuery(&ast.Source{Input: p.Query})
		if err != nil {
			return nil // gqlgen's parser reports it in its own words
		}
		tokens := shape.Tokens
		if shape, err = measure(doc); err != nil {
			gerr := gqlerror.Errorf("%s", err)
			errcode.Set(gerr, errcode.ValidationFailed)
			return gerr
		}
		shape.Tokens = tokens
		b.shapes.Add(ctx, p.Query, shape)
	}
	if err := shape.Exceeds(limits); err != nil {
		return refusal(err)
	}
	if oc := graphql.GetOperationContext(ctx); oc != nil {
		oc.Stats.SetExtension(shapeExtension, shape)
	}
	return nil
}

// shapeExtension names the measured Shape in the operation's stats.
const shapeExtension = "Shape"

// refusal is a domain error as gqlgen's extensions return it: the presenter finds the domain
// error inside and gives it its code and status.
func refusal(err error) *gqlerror.Error {
	return &gqlerror.Error{Message: flightgraph.ErrorMessage(err), Err: err}
}
