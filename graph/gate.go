package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// Gate decides access to a GraphQL operation on the operation that executes, as gqlgen parsed and
// validated it, never on a second reading of the request that could disagree with it.
//
// The first line runs once per operation, after validation and before any resolver: it collects
// the root fields exactly as execution will (graphql.CollectFields: the selected operation, every
// fragment at any depth, @skip and @include with the request's variables), names the API products
// they belong to (a field's @api; for _entities the @api of each representation's __typename),
// holds the operation to the plans of those products (cost, depth, aliases, root fields), and has
// the access guard admit the call: authentication, entitlement, limits, usage.
//
// The second line runs at execution, on every root field: it refuses a field whose products the
// first line did not admit, and logs that as a defect. A root field that belongs to no product and
// is not a portal field is refused by both lines: access fails closed.
type Gate struct {
	// Admit admits a call for the request (access.Guard.Admit): its products, the calls it
	// costs each, whether it is heavy.
	Admit func(ctx context.Context, c access.Charge) error
	// Recheck checks again that the credential of a WebSocket connection may still call the
	// products it opened at the upgrade (access.Guard.Readmit) before each of the connection's
	// operations is admitted: the connection was authenticated once, at its upgrade, and lives as long as its
	// client keeps it; a revoked key, an ended trial or a demoted account must not keep calling
	// through it. Nil checks nothing.
	Recheck func(ctx context.Context, products []string) error
	// QuoteKept reports whether the response cache keeps the answer of a quote (an operation
	// whose root fields are all heavy work) charged to products, which is then admitted without
	// a heavy-work slot (Answers.quoteKept, which takes the slot before any work when it must).
	// Nil admits every quote with its slot.
	QuoteKept func(ctx context.Context, oc *graphql.OperationContext, products []string) bool
	Log       *slog.Logger

	schema   *ast.Schema
	cost     *costModel
	roots    map[string]map[string]rootField // root type → field → what calling it takes
	entities map[string]entityType           // by name
	// maxIntrospection bounds the objects an operation's introspection holds: twice those of
	// GraphiQL's whole-schema IntrospectionQuery, so that the schema can be read but not
	// repeated by aliases.
	maxIntrospection int
}

// entityType is what resolving an entity of a type through _entities takes.
type entityType struct {
	product string     // "" when the type names none: refused
	keys    [][]string // the fields of each of its @key; a representation must give one whole set
}

// rootField is what calling one root field takes: its API product, or any authenticated caller
// (introspection), or neither (a portal field: the portal's own rules apply). A field that is not
// in the table takes what nobody has.
type rootField struct {
	product       string
	weight        flightgraph.Weight // what @api declares; zero: light
	authenticated bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.RootFieldInterceptor
	graphql.ResponseInterceptor
} = (*Gate)(nil)

// costExtension is where the first line leaves what the answer tells of the operation's cost.
const costExtension = "Charge"

// admitted is what the first line measured and charged of an admitted operation.
type admitted struct {
	charge access.Charge
	cost   int                     // the operation's cost (objects it can return)
	limits flightgraph.QueryLimits // the bounds it was held to
	// quote says that every root field is heavy work (a search priced at the second it runs):
	// the answer is a quote of its second, which Answers keeps for that second.
	quote bool
}

// Cost is extensions.cost of an admitted operation's answer: what it costs, the bounds of the
// plans it was held to, and the calls it was charged per API.
type Cost struct {
	Requested int                     `json:"requested"`
	Bounds    flightgraph.QueryLimits `json:"bounds"`
	Calls     map[string]int          `json:"calls"`
}

// InterceptResponse implements graphql.ResponseInterceptor: an admitted operation's answer tells
// what it cost and was charged (extensions.cost) and, for each API charged, what is left of the
// plan's second and day and when they reset (extensions.limits: the limit headers' figures, which
// a gateway may not pass on), so that a client can budget by them; a refused one was charged
// nothing and says nothing more than its error.
func (g *Gate) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil || !graphql.HasOperationContext(ctx) {
		return resp
	}
	a, ok := graphql.GetOperationContext(ctx).Stats.GetExtension(costExtension).(admitted)
	if !ok || len(a.charge.Products) == 0 {
		return resp
	}
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	resp.Extensions["cost"] = Cost{Requested: a.cost, Bounds: a.limits, Calls: a.charge.Calls}
	if pass := access.PassFromContext(ctx); pass != nil {
		limits := map[string]access.LimitStatus{}
		for api, d := range pass.Decisions() {
			limits[api] = access.StatusOf(d)
		}
		resp.Extensions["limits"] = limits
	}
	return resp
}

// ExtensionName implements graphql.HandlerExtension.
func (g *Gate) ExtensionName() string { return "Gate" }

// Validate implements graphql.HandlerExtension: it reads the product table from the schema's
// @api and @portal directives.
func (g *Gate) Validate(es graphql.ExecutableSchema) error {
	if g.Admit == nil {
		return errors.New("graph: a Gate needs Admit")
	}
	if g.Log == nil {
		g.Log = slog.New(slog.DiscardHandler)
	}
	g.schema = es.Schema()
	g.cost = newCostModel(g.schema)
	g.roots, g.entities = productTable(g.schema)
	doc, errs := gqlparser.LoadQuery(g.schema, IntrospectionQuery)
	if errs != nil {
		return fmt.Errorf("graph: the introspection query does not validate: %w", errs)
	}
	_, whole := operationCost(g.cost, &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}, math.MaxInt32, math.MaxInt32)
	g.maxIntrospection = 2 * whole
	return nil
}

// productTable reads which product each root field and entity type belongs to.
func productTable(schema *ast.Schema) (map[string]map[string]rootField, map[string]entityType) {
	roots := map[string]map[string]rootField{}
	for _, root := range []*ast.Definition{schema.Query, schema.Mutation, schema.Subscription} {
		if root == nil {
			continue
		}
		fields := map[string]rootField{}
		for _, f := range root.Fields {
			switch {
			case f.Name == "__schema" || f.Name == "__type" || f.Name == "_service":
				fields[f.Name] = rootField{authenticated: true}
			case f.Directives.ForName("portal") != nil:
				fields[f.Name] = rootField{}
			default:
				if p := apiOf(f.Directives); p != "" {
					fields[f.Name] = rootField{product: p, weight: weightOf(f.Directives)}
				}
			}
		}
		roots[root.Name] = fields
	}
	entities := map[string]entityType{}
	for name, def := range schema.Types {
		for _, key := range def.Directives.ForNames("key") {
			e := entities[name]
			e.product = apiOf(def.Directives)
			if a := key.Arguments.ForName("fields"); a != nil && a.Value != nil {
				e.keys = append(e.keys, strings.Fields(a.Value.Raw))
			}
			entities[name] = e
		}
	}
	return roots, entities
}

// apiOf returns the product an @api directive names, or "".
func apiOf(dirs ast.DirectiveList) string {
	if d := dirs.ForName("api"); d != nil {
		if a := d.Arguments.ForName("product"); a != nil && a.Value != nil {
			return a.Value.Raw
		}
	}
	return ""
}

// weightOf returns what an @api directive declares one call weighs: its calls (when more than
// one) and whether it is heavy.
func weightOf(dirs ast.DirectiveList) flightgraph.Weight {
	var w flightgraph.Weight
	if d := dirs.ForName("api"); d != nil {
		if a := d.Arguments.ForName("calls"); a != nil && a.Value != nil {
			if n, err := strconv.Atoi(a.Value.Raw); err == nil && n > 1 {
				w.Calls = n
			}
		}
		if a := d.Arguments.ForName("heavy"); a != nil && a.Value != nil {
			w.Heavy = a.Value.Raw == "true"
		}
	}
	return w
}

// calls is what an operation, or one of its root fields, takes: the products it calls, the calls
// that its fields which declare calls cost each product (each time they are selected), and
// whether any is heavy.
type calls struct {
	products      []string
	weighted      map[string]int
	heavy         bool
	authenticated bool
	// light says that a root field is not heavy work (nor __typename).
	light bool
}

// charge is what the operation is charged: per product, the calls of its fields that declare
// some, or one call for its light fields together.
func (c *calls) charge() access.Charge {
	ch := access.Charge{Products: c.products, Heavy: c.heavy, Calls: map[string]int{}}
	for _, p := range c.products {
		ch.Calls[p] = max(c.weighted[p], 1)
	}
	return ch
}

// fieldCalls returns what calling one root field of the root type takes. Its error is a domain
// error for a request's own fault (a representation that is no entity), and any other error for a
// schema that lets a field or entity type belong to no product.
func (g *Gate) fieldCalls(root string, f graphql.CollectedField, vars map[string]any, into *calls) error {
	if f.Name == "__typename" {
		return nil
	}
	if f.Name == "_entities" {
		into.light = true
		// Every representation must be an entity the resolvers will resolve, so that the
		// products charged are exactly those resolved: a representation gqlgen would refuse
		// later is refused here, before anything runs.
		for i, r := range representations(f.ArgumentMap(vars)) {
			rep, _ := r.(map[string]any)
			typename, _ := rep["__typename"].(string)
			e, isEntity := g.entities[typename]
			if !isEntity {
				return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "representations",
					"representation %d is not an object whose __typename is an entity type (%s)", i, strings.Join(slices.Sorted(maps.Keys(g.entities)), ", "))
			}
			if !slices.ContainsFunc(e.keys, func(key []string) bool { return givesKey(rep, key) }) {
				return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "representations", "representation %d lacks the key of %s", i, typename)
			}
			if e.product == "" {
				return fmt.Errorf("graph: the entity %s belongs to no API", typename)
			}
			into.add(e.product)
		}
		return nil
	}
	rf, ok := g.roots[root][f.Name]
	switch {
	case !ok:
		return fmt.Errorf("graph: %s.%s belongs to no API and is not a portal field", root, f.Name)
	case rf.authenticated:
		into.authenticated, into.light = true, true
	case rf.product != "":
		into.light = into.light || !rf.weight.Heavy
		into.add(rf.product)
		if rf.weight.Calls > 0 {
			if into.weighted == nil {
				into.weighted = map[string]int{}
			}
			into.weighted[rf.product] += rf.weight.Calls
		}
		into.heavy = into.heavy || rf.weight.Heavy
	}
	return nil
}

// givesKey reports whether a representation gives every field of a key, each a value the entity
// resolver can take as a string.
func givesKey(rep map[string]any, key []string) bool {
	for _, k := range key {
		if _, err := graphql.UnmarshalString(rep[k]); rep[k] == nil || err != nil {
			return false
		}
	}
	return true
}

func (c *calls) add(product string) {
	if !slices.Contains(c.products, product) {
		c.products = append(c.products, product)
	}
}

// conditions refuses an operation whose @skip or @include condition is a variable that is not a
// boolean, which validation lets through when the variable has a default and the request gives it
// as null: gqlgen's CollectFields would panic on it wherever it stands, and the client would get
// a 500 for its own mistake. Every selection of the document is looked at once.
func conditions(oc *graphql.OperationContext) error {
	var walk func(ast.SelectionSet) error
	check := func(dirs ast.DirectiveList) error {
		for _, d := range dirs {
			if d.Name != "skip" && d.Name != "include" {
				continue
			}
			if a := d.Arguments.ForName("if"); a != nil && a.Value != nil && a.Value.Kind == ast.Variable {
				if _, ok := oc.Variables[a.Value.Raw].(bool); !ok {
					return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, a.Value.Raw, "the condition of @%s, $%s, must be true or false", d.Name, a.Value.Raw)
				}
			}
		}
		return nil
	}
	walk = func(set ast.SelectionSet) error {
		for _, sel := range set {
			var err error
			switch sel := sel.(type) {
			case *ast.Field:
				if err = check(sel.Directives); err == nil {
					err = walk(sel.SelectionSet)
				}
			case *ast.InlineFragment:
				if err = check(sel.Directives); err == nil {
					err = walk(sel.SelectionSet)
				}
			case *ast.FragmentSpread:
				err = check(sel.Directives)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(oc.Operation.SelectionSet); err != nil {
		return err
	}
	for _, f := range oc.Doc.Fragments {
		if err := walk(f.SelectionSet); err != nil {
			return err
		}
	}
	return nil
}

// operationCalls returns what the operation of oc takes, from its root fields as execution
// collects them.
func (g *Gate) operationCalls(oc *graphql.OperationContext) (c calls, err error) {
	root := rootType(g.schema, oc.Operation.Operation)
	if root == nil {
		return c, fmt.Errorf("graph: the schema has no %s type", oc.Operation.Operation)
	}
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{root.Name}) {
		if err := g.fieldCalls(root.Name, f, oc.Variables, &c); err != nil {
			return c, err
		}
	}
	slices.Sort(c.products)
	return c, nil
}

// MutateOperationContext implements graphql.OperationContextMutator: the first line. It runs
// after validation and before execution; an error refuses the operation with nothing executed.
func (g *Gate) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	// The request's record (its trace) learns which operation this is, admitted or not.
	flightgraph.RecordFromContext(ctx).NoteOperation(string(oc.Operation.Operation), oc.Operation.Name)
	if getRefuses(ctx, oc.Operation.Operation) {
		return refusal(flightgraph.Errorf(flightgraph.ECodeMethodNotAllowed, "a %s takes POST", oc.Operation.Operation))
	}
	if err := conditions(oc); err != nil {
		return refusal(err)
	}
	c, err := g.operationCalls(oc)
	var fe *flightgraph.Error
	if errors.As(err, &fe) {
		return refusal(err)
	} else if err != nil {
		g.Log.ErrorContext(ctx, "defect: a GraphQL operation selects a field that belongs to no API", "requestId", flightgraph.RequestIDFromContext(ctx), "err", err)
		return refusal(flightgraph.Errorf(flightgraph.ECodeNotApproved, "the operation selects a field that no API offers"))
	}
	// An operation on a WebSocket connection checks its credential again first: the bounds
	// and the plans it is charged to are the credential's as they are now, not as the
	// connection's upgrade found them (access.Pass).
	if g.Recheck != nil && OverWebsocket(ctx) {
		if err := g.Recheck(ctx, c.products); err != nil {
			return refusal(err)
		}
	}
	// The bounds of the plans the operation will be charged to.
	limits := access.QueryLimits(ctx, c.products)
	shape, ok := oc.Stats.GetExtension(shapeExtension).(Shape)
	if !ok {
		// Bounds measured nothing (it is not installed, or forgot): measure here, before any
		// walk that expands fragments.
		if shape, err = measure(oc.Doc); err != nil {
			return refusal(flightgraph.Errorf(flightgraph.ECodeBadFormat, "%s", err))
		}
	}
	if err := shape.Exceeds(limits); err != nil {
		return refusal(err)
	}
	cost, introspected := operationCost(g.cost, oc, limits.MaxCost, g.maxIntrospection)
	if cost > limits.MaxCost {
		return refusal(flightgraph.Errorf(flightgraph.ECodeQueryCost,
			"the operation costs %d (objects it can return, lists counted at their first argument or declared size); the plan allows %d", cost, limits.MaxCost))
	}
	if introspected > g.maxIntrospection {
		return refusal(flightgraph.Errorf(flightgraph.ECodeQueryCost,
			"the operation's introspection holds %d objects, more than twice the whole schema (%d)", introspected, g.maxIntrospection))
	}
	if c.authenticated {
		if err := access.RequireCaller(ctx); err != nil {
			return refusal(err)
		}
	}
	charge := c.charge()
	quote := c.heavy && !c.light
	if quote && g.QuoteKept != nil && g.QuoteKept(ctx, oc, c.products) {
		// Answered from the response cache: charged and limited as ever, but light work.
		charge.Heavy = false
	}
	if err := g.Admit(ctx, charge); err != nil {
		return refusal(err)
	}
	oc.Stats.SetExtension(costExtension, admitted{charge: charge, cost: cost, limits: limits, quote: quote})
	oc.DisableIntrospection = flightgraph.CallerFromContext(ctx).Kind == flightgraph.CallerAnonymous
	return nil
}

// InterceptRootField implements graphql.RootFieldInterceptor: the second line, around every root
// field. A root field whose products the first line did not admit is refused before its resolver
// runs, as the first line would have refused it; the miss is logged as the defect it is, and the
// answer then carries no data at all (see refusedAtExecution).
func (g *Gate) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	rfc := graphql.GetRootFieldContext(ctx)
	oc := graphql.GetOperationContext(ctx)
	root := rootType(g.schema, oc.Operation.Operation)
	var (
		c   calls
		err error
	)
	if rfc == nil || root == nil {
		err = errors.New("graph: a root field without its context")
	} else {
		err = g.fieldCalls(root.Name, rfc.Field, oc.Variables, &c)
	}
	for _, p := range c.products {
		if err != nil {
			break
		}
		err = access.Require(ctx, p)
	}
	if err == nil && c.authenticated {
		err = access.RequireCaller(ctx)
	}
	if err == nil {
		if len(c.products) == 1 {
			// The field runs as the credential its API was admitted with (a paired token's
			// customer and grant for an OAuth API).
			ctx = access.AsCallerOf(ctx, c.products[0])
		}
		return next(ctx)
	}
	name := "?"
	if rfc != nil {
		name = rfc.Field.Name
	}
	g.Log.ErrorContext(ctx, "defect: a GraphQL root field reached execution without admission", "requestId", flightgraph.RequestIDFromContext(ctx),
		"field", name, "err", err)
	var fe *flightgraph.Error
	if !errors.As(err, &fe) {
		err = flightgraph.Errorf(flightgraph.ECodeNotApproved, "the field %s is not offered by any API", name)
	}
	graphql.AddError(ctx, &gqlerror.Error{Message: flightgraph.ErrorMessage(err), Path: ast.Path{ast.PathName(name)}, Err: refusedAtExecution{err}})
	return graphql.Null
}

// refusedAtExecution marks the error of a root field the second line refused: the transport
// then answers with no data at all, whatever the other root fields made, since the operation
// was admitted on a wrong reading of it.
type refusedAtExecution struct{ error }

func (r refusedAtExecution) Unwrap() error { return r.error }

// getOnlyKey marks an operation read from a GET request (getRefuses): false over the HTTP
// transport, true over graphql-sse.
type getOnlyKey struct{}

// representations returns _entities' argument as gqlgen coerces it: a single representation
// stands for a list of one.
func representations(args map[string]any) []any {
	return graphql.CoerceList(args["representations"])
}

// getRefuses reports whether op is one that the GET request the transport read it from must not
// run: a GET must not change anything, so it carries a query, or, as graphql-sse's stream (whose
// mark is true), a query or a subscription. A mutation over GET is refused 405.
func getRefuses(ctx context.Context, op ast.Operation) bool {
	stream, get := ctx.Value(getOnlyKey{}).(bool)
	return get && op != ast.Query && !(stream && op == ast.Subscription)
}

type overWebsocketKey struct{}

// OverWebsocket reports whether the operation of ctx came over a WebSocket connection, which
// carries many operations on the credential of its upgrade.
func OverWebsocket(ctx context.Context) bool {
	v, _ := ctx.Value(overWebsocketKey{}).(bool)
	return v
}
