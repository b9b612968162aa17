package graph

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/plugin/federation/fedruntime"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// Views is the schema as each audience (access.Audience) sees it, the way a contract variant of a
// supergraph is: the root types, the directives, the introspection types and the built-in
// scalars, and what they reach, without a field or type whose @api names an API outside the
// audience, nor what only those reach. A developer's schema has no bestOffersFeed (partners'
// Metasearch) and no cargoCapacity or CargoCapacity (staff's Cargo). Each audience's view is
// computed once, and is the one answer to "what may this caller see of the schema": its
// documents are validated and executed against it (Audiences), so that introspection, the
// federation SDL and the validator's messages name nothing else. It only hides: execution still
// refuses a caller what it was not admitted to (Gate's second line).
type Views struct {
	schema *ast.Schema
	views  sync.Map // audience → *view
}

// NewViews returns the Views of schema.
func NewViews(schema *ast.Schema) *Views { return &Views{schema: schema} }

// view is one audience's view of the schema.
type view struct {
	// reached names the types the audience sees; outside reports whether an @api names an API it
	// does not see.
	reached map[string]bool
	outside func(ast.DirectiveList) bool
	// hidden names what only the part of the schema outside the audience defines: types, fields,
	// arguments, input fields, enum values.
	hidden map[string]bool
	// schema is what the audience sees; the whole schema when it sees all of it.
	schema *ast.Schema

	sdlOnce sync.Once
	sdl     string
}

// of returns audience's view, computing it the first time.
func (vs *Views) of(audience string) *view {
	if v, ok := vs.views.Load(audience); ok {
		return v.(*view)
	}
	sees := map[string]bool{}
	for _, slug := range strings.Split(audience, ",") {
		sees[slug] = true
	}
	s := vs.schema
	v := &view{reached: map[string]bool{}, outside: func(dirs ast.DirectiveList) bool { p := apiOf(dirs); return p != "" && !sees[p] }}
	visible := map[string]bool{}
	var reach func(name string)
	reach = func(name string) {
		def := s.Types[name]
		if v.reached[name] || def == nil || v.outside(def.Directives) {
			return
		}
		v.reached[name] = true
		visible[name] = true
		for _, f := range def.Fields {
			if v.outside(f.Directives) {
				continue
			}
			if reach(f.Type.Name()); !v.reached[f.Type.Name()] {
				continue // a field of a type the audience does not see
			}
			visible[f.Name] = true
			for _, a := range f.Arguments {
				visible[a.Name] = true
				reach(a.Type.Name())
			}
		}
		for _, e := range def.EnumValues {
			visible[e.Name] = true
		}
		for _, i := range def.Interfaces {
			reach(i)
		}
		if def.Kind == ast.Union || def.Kind == ast.Interface {
			for _, t := range s.GetPossibleTypes(def) {
				reach(t.Name)
			}
		}
	}
	for _, root := range []*ast.Definition{s.Query, s.Mutation, s.Subscription} {
		if root != nil {
			reach(root.Name)
		}
	}
	for name, def := range s.Types {
		if strings.HasPrefix(name, "__") || def.BuiltIn && def.Kind == ast.Scalar {
			reach(name)
		}
	}
	for _, d := range s.Directives {
		visible[d.Name] = true
		for _, a := range d.Arguments {
			visible[a.Name] = true
			reach(a.Type.Name())
		}
	}
	v.hidden = map[string]bool{}
	add := func(name string) {
		if !visible[name] {
			v.hidden[name] = true
		}
	}
	for name, def := range s.Types {
		add(name)
		for _, f := range def.Fields {
			add(f.Name)
			for _, a := range f.Arguments {
				add(a.Name)
			}
		}
		for _, e := range def.EnumValues {
			add(e.Name)
		}
	}
	v.schema = v.prune(s)
	got, _ := vs.views.LoadOrStore(audience, v)
	return got.(*view)
}

// field reports whether the view shows a field of a type it shows.
func (v *view) field(f *ast.FieldDefinition) bool {
	return !v.outside(f.Directives) && v.reached[f.Type.Name()]
}

// names returns those of names the view shows.
func (v *view) names(names []string) []string {
	var out []string
	for _, n := range names {
		if v.reached[n] {
			out = append(out, n)
		}
	}
	return out
}

// prune returns s without what the view does not show, or s itself when it shows all of it. The
// definitions it changes are copies; the others are shared with s.
func (v *view) prune(s *ast.Schema) *ast.Schema {
	p := &ast.Schema{Types: map[string]*ast.Definition{}, Directives: s.Directives, PossibleTypes: map[string][]*ast.Definition{},
		Implements: map[string][]*ast.Definition{}, Description: s.Description, Comment: s.Comment, SchemaDirectives: s.SchemaDirectives}
	changed := false
	for name, def := range s.Types {
		if !v.reached[name] {
			changed = true
			continue
		}
		var fields ast.FieldList
		for _, f := range def.Fields {
			if v.field(f) {
				fields = append(fields, f)
			}
		}
		members, interfaces := v.names(def.Types), v.names(def.Interfaces)
		if len(fields) != len(def.Fields) || len(members) != len(def.Types) || len(interfaces) != len(def.Interfaces) {
			c := *def
			c.Fields, c.Types, c.Interfaces = fields, members, interfaces
			def = &c
			changed = true
		}
		p.Types[name] = def
	}
	if !changed {
		return s
	}
	for _, m := range []struct{ from, to map[string][]*ast.Definition }{{s.PossibleTypes, p.PossibleTypes}, {s.Implements, p.Implements}} {
		for name, defs := range m.from {
			if !v.reached[name] {
				continue
			}
			for _, d := range defs {
				if def := p.Types[d.Name]; def != nil {
					m.to[name] = append(m.to[name], def)
				}
			}
		}
	}
	root := func(d *ast.Definition) *ast.Definition {
		if d == nil || len(p.Types[d.Name].Fields) == 0 {
			return nil
		}
		return p.Types[d.Name]
	}
	p.Query, p.Mutation, p.Subscription = root(s.Query), root(s.Mutation), root(s.Subscription)
	return p
}

// sdlOf returns the federation SDL the view shows of full, the whole subgraph's (the same for
// every call): its definitions without the types, fields, union members and interfaces the view
// does not show, formatted once. Descriptions stay; comments go.
func (v *view) sdlOf(full string) string {
	v.sdlOnce.Do(func() {
		doc, err := parser.ParseSchema(&ast.Source{Name: "subgraph", Input: full})
		if err != nil {
			// The SDL gqlgen serves was parsed at start-up; never a partial schema if it was not.
			panic("graph: the subgraph's SDL does not parse: " + err.Error())
		}
		keep := func(defs ast.DefinitionList) ast.DefinitionList {
			var out ast.DefinitionList
			for _, def := range defs {
				if !v.reached[def.Name] {
					continue
				}
				c := *def
				c.Fields = nil
				for _, f := range def.Fields {
					if v.field(f) {
						c.Fields = append(c.Fields, f)
					}
				}
				c.Types, c.Interfaces = v.names(def.Types), v.names(def.Interfaces)
				out = append(out, &c)
			}
			return out
		}
		doc.Definitions, doc.Extensions = keep(doc.Definitions), keep(doc.Extensions)
		var b bytes.Buffer
		formatter.NewFormatter(&b).FormatSchemaDocument(doc)
		v.sdl = b.String()
	})
	return v.sdl
}

// viewSchema is the flight subgraph's executable schema as one audience sees it: documents are
// parsed, validated, costed and executed against the view, so that a name the caller may not see
// is refused as one that does not exist, with the same words; introspection (__schema, __type)
// answers from the view, and _service answers the view's SDL.
type viewSchema struct {
	graphql.ExecutableSchema
	view *view
}

// Exec implements graphql.ExecutableSchema.
func (vs viewSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	// gqlgen's _service answers the whole SDL whatever the schema; only an operation that may ask
	// for it pays for the middleware that answers the view's instead. The operation context is
	// this request's own.
	if oc := graphql.GetOperationContext(ctx); strings.Contains(oc.RawQuery, "_service") {
		next := oc.ResolverMiddleware
		oc.ResolverMiddleware = func(ctx context.Context, resolve graphql.Resolver) (any, error) {
			res, err := next(ctx, resolve)
			if svc, ok := res.(fedruntime.Service); ok && err == nil { // only _service answers one
				svc.SDL = vs.view.sdlOf(svc.SDL)
				return svc, nil
			}
			return res, err
		}
	}
	return vs.ExecutableSchema.Exec(ctx)
}

// Audiences serves each caller from the endpoint of its audience's view of the schema, made the
// first time one of its callers calls: the views are few (the public, partners, staff), and
// each endpoint keeps its own parsed documents, persisted queries and kept answers, so that
// nothing read for one audience is served to another. The guard must have authenticated the
// request: its caller's role names the audience.
type Audiences struct {
	views    *Views
	endpoint func(*view) http.Handler
	made     sync.Map // audience → func() http.Handler (sync.OnceValue) making its endpoint once
}

// NewAudiences returns the Audiences of full, whose endpoints endpoint makes for each view.
func NewAudiences(full *ast.Schema, endpoint func(views *Views, schema *ast.Schema, view *view) http.Handler) *Audiences {
	a := &Audiences{views: NewViews(full)}
	a.endpoint = func(v *view) http.Handler { return endpoint(a.views, v.schema, v) }
	return a
}

// ServeHTTP implements http.Handler.
func (a *Audiences) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	audience := access.Audience(flightgraph.CallerFromContext(r.Context()).Role())
	once, ok := a.made.Load(audience)
	if !ok {
		v := a.views.of(audience)
		once, _ = a.made.LoadOrStore(audience, sync.OnceValue(func() http.Handler { return a.endpoint(v) }))
	}
	once.(func() http.Handler)().ServeHTTP(w, r)
}
