package graph

import (
	"context"
	"slices"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/flightgraph/flightgraph"
)

// CacheControl computes how long the answer of a query may be cached, and by whom, from the
// schema's @cacheControl hints, the way Apollo Server's cache control computes it:
//
//   - a field's policy is its own hint, else the hint of the object type (or interface, or union)
//     it returns, the field's maxAge and scope each replacing the type's;
//   - without a maxAge, a root field, and a field returning an object that does not inherit
//     (inheritMaxAge on the field or its type), is not cacheable (maxAge 0); any other field
//     (a scalar, an enum, an inheriting object) takes its parent's age and restricts nothing;
//   - _entities restricts by the hint of each representation's type, as Apollo's subgraph
//     library does;
//   - the operation's policy is the least maxAge of its fields, PRIVATE if any field is, and
//     not cacheable when no field sets an age (a query of __typename alone).
//
// The fields are those the operation selects as execution collects them (graphql.CollectFields:
// every fragment, @skip and @include with the request's variables), for every object type that
// can appear where an abstract type is selected (each with its own hint): the same fields
// Apollo's plugin sees resolve, or more (a field under a null parent, a fragment on a type that
// did not come), so the policy is never longer nor more public than Apollo's would be. It needs
// no work during execution, and is the same for every run of the same request.
//
// A query's answer carries the policy as extensions.cacheControl in the shape Apollo's cache
// control extension (version 1) gave it, one hint per root field (path: its response name, the
// least maxAge of its subtree, PRIVATE if any of it is); the transport sends it as Cache-Control
// (answerTag). A mutation's policy is no-store, as is any answer with errors (the transport).
type CacheControl struct {
	schema *ast.Schema
	// rules holds the rule of each field of the schema, computed once.
	rules map[fieldKey]fieldRule
	// implementors lists, for each object type, what the generated code passes CollectFields
	// for it (the warmer's implementorsOf, collect.go): the fields collected here are the ones
	// execution collects, from the same memo.
	implementors map[string][]string
}

// fieldKey names a field of a type.
type fieldKey struct{ typ, field string }

// fieldRule is what selecting one field does to the operation's policy: restrict its maxAge
// (restricts), and make it private.
type fieldRule struct {
	maxAge    int
	restricts bool
	private   bool
}

// CacheHint is one hint of extensions.cacheControl: the policy of the answer at path.
type CacheHint struct {
	Path   []string `json:"path"`
	MaxAge int      `json:"maxAge"`
	Scope  string   `json:"scope"`
}

// CacheExtension is extensions.cacheControl, in the shape Apollo's cache control extension gave
// it (version 1): the answer's policy is the least maxAge of its hints, PRIVATE if any is.
type CacheExtension struct {
	Version int         `json:"version"`
	Hints   []CacheHint `json:"hints"`
}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = (*CacheControl)(nil)

// ExtensionName implements graphql.HandlerExtension.
func (c *CacheControl) ExtensionName() string { return "CacheControl" }

// Validate implements graphql.HandlerExtension: it reads the hints of the schema.
func (c *CacheControl) Validate(es graphql.ExecutableSchema) error {
	c.load(es.Schema())
	return nil
}

// load reads the hints of schema.
func (c *CacheControl) load(schema *ast.Schema) {
	c.schema = schema
	c.rules = map[fieldKey]fieldRule{}
	w := &warmer{schema: schema, implementors: map[string][]string{}}
	for _, def := range schema.Types {
		if def.Kind == ast.Object {
			w.implementorsOf(def)
		}
	}
	c.implementors = w.implementors
	for name, def := range c.schema.Types {
		for _, f := range def.Fields {
			c.rules[fieldKey{name, f.Name}] = ruleOf(c.schema, f, c.isRoot(def))
		}
	}
}

func (c *CacheControl) isRoot(def *ast.Definition) bool {
	return def == c.schema.Query || def == c.schema.Mutation || def == c.schema.Subscription
}

// cacheHint is one @cacheControl directive's arguments.
type cacheHint struct {
	maxAge           int
	hasMaxAge        bool
	scope            string // "", PUBLIC or PRIVATE
	inherits, hinted bool
}

func hintOf(dirs ast.DirectiveList) cacheHint {
	d := dirs.ForName("cacheControl")
	if d == nil {
		return cacheHint{}
	}
	h := cacheHint{hinted: true}
	if a := d.Arguments.ForName("maxAge"); a != nil && a.Value != nil && a.Value.Kind == ast.IntValue {
		h.maxAge, _ = strconv.Atoi(a.Value.Raw)
		h.hasMaxAge = true
	}
	if a := d.Arguments.ForName("scope"); a != nil && a.Value != nil {
		h.scope = a.Value.Raw
	}
	if a := d.Arguments.ForName("inheritMaxAge"); a != nil && a.Value != nil {
		h.inherits = a.Value.Raw == "true"
	}
	return h
}

func composite(def *ast.Definition) bool {
	return def != nil && (def.Kind == ast.Object || def.Kind == ast.Interface || def.Kind == ast.Union)
}

// ruleOf is the rule of field f: Apollo's, as the type's comment says.
func ruleOf(schema *ast.Schema, f *ast.FieldDefinition, root bool) fieldRule {
	ret := schema.Types[f.Type.Name()]
	var h cacheHint
	inherits := false
	if composite(ret) {
		h = hintOf(ret.Directives)
		inherits = h.inherits
	}
	fh := hintOf(f.Directives)
	if fh.inherits && !h.hasMaxAge {
		inherits = true
	} else if fh.hasMaxAge {
		h.maxAge, h.hasMaxAge = fh.maxAge, true
	}
	if fh.scope != "" {
		h.scope = fh.scope
	}
	r := fieldRule{maxAge: h.maxAge, restricts: h.hasMaxAge, private: h.scope == "PRIVATE"}
	if !h.hasMaxAge && (composite(ret) && !inherits || root) {
		r.maxAge, r.restricts = 0, true // Apollo's defaultMaxAge
	}
	return r
}

// entityRule is what resolving an entity of the type named does through _entities: the type's
// own hint, not cacheable without one.
func entityRule(schema *ast.Schema, typename string) fieldRule {
	h := hintOf(schema.Types[typename].Directives)
	return fieldRule{maxAge: h.maxAge, restricts: true, private: h.scope == "PRIVATE"}
}

// policy accumulates a policy: unset until a field restricts it.
type policy struct {
	maxAge  int
	set     bool
	private bool
}

func (p *policy) restrict(r fieldRule) {
	if r.restricts {
		if !p.set || r.maxAge < p.maxAge {
			p.maxAge = r.maxAge
		}
		p.set = true
	}
	p.private = p.private || r.private
}

func (p policy) cachePolicy() flightgraph.CachePolicy {
	if !p.set {
		return flightgraph.CachePolicy{Private: p.private}
	}
	return flightgraph.CachePolicy{MaxAge: max(p.maxAge, 0), Private: p.private}
}

// Policy returns the policy of the operation of oc, and the hint of each of its root fields
// (by response name, in the operation's order). A mutation or subscription is not cacheable.
func (c *CacheControl) Policy(oc *graphql.OperationContext) (flightgraph.CachePolicy, []CacheHint) {
	if oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Query || c.schema == nil || c.schema.Query == nil {
		return flightgraph.NoStore, nil
	}
	w := cacheWalker{c: c, oc: oc}
	var all policy
	var hints []CacheHint
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{c.schema.Query.Name}) {
		if f.Name == "__typename" {
			continue
		}
		var p policy
		if f.Name == "_entities" {
			w.entities(f, &p)
		} else {
			w.field(c.schema.Query, f, &p, 0)
		}
		all.restrict(fieldRule{maxAge: p.maxAge, restricts: p.set, private: p.private})
		cp := p.cachePolicy()
		scope := "PUBLIC"
		if cp.Private {
			scope = "PRIVATE"
		}
		hints = append(hints, CacheHint{Path: []string{f.Alias}, MaxAge: cp.MaxAge, Scope: scope})
	}
	return all.cachePolicy(), hints
}

// cacheWalker walks an operation's selections as execution collects them.
type cacheWalker struct {
	c  *CacheControl
	oc *graphql.OperationContext
}

// field restricts p by field f of the object type parent and by what f selects.
func (w *cacheWalker) field(parent *ast.Definition, f graphql.CollectedField, p *policy, depth int) {
	rule, ok := w.c.rules[fieldKey{parent.Name, f.Name}]
	if !ok && f.Definition != nil {
		rule = ruleOf(w.c.schema, f.Definition, w.c.isRoot(parent)) // one gqlparser adds: __schema, __type
	}
	p.restrict(rule)
	if len(f.Selections) == 0 || f.Definition == nil || depth > 64 { // validation bounds real documents far below 64
		return
	}
	w.selections(f.Selections, w.c.schema.Types[f.Definition.Type.Name()], p, depth+1)
}

// selections restricts p by the fields set selects on def, for each object type def stands for.
func (w *cacheWalker) selections(set ast.SelectionSet, def *ast.Definition, p *policy, depth int) {
	if def == nil {
		return
	}
	objects := []*ast.Definition{def}
	abstract := def.IsAbstractType()
	if abstract {
		objects = w.c.schema.GetPossibleTypes(def)
	}
	for _, obj := range objects {
		if h := hintOf(obj.Directives); abstract {
			// Any of them may come: the hint of each restricts, as the object's would.
			p.restrict(fieldRule{maxAge: h.maxAge, restricts: h.hasMaxAge, private: h.scope == "PRIVATE"})
		}
		for _, f := range graphql.CollectFields(w.oc, set, w.c.implementors[obj.Name]) {
			if f.Name != "__typename" {
				w.field(obj, f, p, depth)
			}
		}
	}
}

// entities restricts p by _entities: by the hint of each representation's type and the fields
// the operation selects on it. A representation without an entity's __typename restricts it
// to not cacheable (the Gate refuses it before execution anyway).
func (w *cacheWalker) entities(f graphql.CollectedField, p *policy) {
	var seen []string
	for _, r := range representations(f.ArgumentMap(w.oc.Variables)) {
		rep, _ := r.(map[string]any)
		typename, _ := rep["__typename"].(string)
		if slices.Contains(seen, typename) {
			continue
		}
		seen = append(seen, typename)
		def := w.c.schema.Types[typename]
		if def == nil || def.Kind != ast.Object {
			p.restrict(fieldRule{restricts: true})
			continue
		}
		p.restrict(entityRule(w.c.schema, typename))
		for _, sub := range graphql.CollectFields(w.oc, f.Selections, w.c.implementors[def.Name]) {
			if sub.Name != "__typename" {
				w.field(def, sub, p, 1)
			}
		}
	}
	if len(seen) == 0 {
		p.restrict(fieldRule{restricts: true}) // no representation: nothing to cache
	}
}

// InterceptResponse implements graphql.ResponseInterceptor: a query's answer gets its hints in
// extensions.cacheControl, and the transport its policy. It runs outside Answers, so that a
// kept answer (introspection) gets them too.
func (c *CacheControl) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil || !graphql.HasOperationContext(ctx) {
		return resp
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Query || len(resp.Errors) > 0 {
		return resp // not kept (the transport): and a refused operation's variables may not collect
	}
	if _, kept := answerKeyOf(ctx); kept {
		return resp // the schema's answers are kept by their ETag, the same bytes each time (Answers)
	}
	p, hints := c.Policy(oc)
	tagPolicy(ctx, p)
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	if hints == nil {
		hints = []CacheHint{}
	}
	resp.Extensions["cacheControl"] = CacheExtension{Version: 1, Hints: hints}
	return resp
}
