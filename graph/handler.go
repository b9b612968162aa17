package graph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/live"
)

// WebsocketInitTimeout is how long a WebSocket connection has to send connection_init.
const WebsocketInitTimeout = 10 * time.Second

// HandlerConfig is what a GraphQL endpoint is made of.
type HandlerConfig struct {
	// Admit admits what an operation is charged (access.Guard.Admit); the request
	// must have come through the guard's Authenticated middleware.
	Admit      func(ctx context.Context, c access.Charge) error
	Stores     Stores
	LoaderWait time.Duration
	Log        *slog.Logger
	// Recheck checks a WebSocket connection's credential again before each of its operations
	// (access.Guard.Readmit; Gate.Recheck); nil checks nothing.
	Recheck func(ctx context.Context, products []string) error
	// Timeout bounds a query or mutation that arrives on a stream (over WebSocket or
	// graphql-sse), whose request has no deadline of its own (OperationTimeout); 0: none.
	Timeout time.Duration
	// Markets, when set, checks the point of sale of every request's headers
	// (flightgraph.PointOfSaleOf), which the resolvers then read from the context; a bad one
	// refuses the request. The portal sells nothing and has none.
	Markets flightgraph.Markets
	// Responses is the response cache (Answers), nil when it is off.
	Responses *live.Cache

	// events are the loaders of subscription events, one set for every audience's endpoint.
	events *eventLoaders
}

// NewHandler returns the flight subgraph's endpoint: each caller is served by the endpoint of its
// audience's view of the schema (Audiences), Serve of the view with the prefetch plan of its
// flights.
func NewHandler(resolvers ResolverRoot, c HandlerConfig) http.Handler {
	full := NewExecutableSchema(Config{Resolvers: resolvers})
	c.events = newEventLoaders(c.Stores, cmp.Or(c.LoaderWait, DefaultLoaderWait))
	return NewAudiences(full.Schema(), func(views *Views, schema *ast.Schema, v *view) http.Handler {
		var es graphql.ExecutableSchema = full
		if schema != full.Schema() {
			es = viewSchema{ExecutableSchema: NewExecutableSchema(Config{Resolvers: resolvers, Schema: schema}), view: v}
		}
		return serve(es, c, views, PlanPrefetch(schema))
	})
}

// Serve returns the GraphQL endpoint of schema: the request's dataloaders, then gqlgen with the
// HTTP transport and, in this order, persisted queries, the document bounds (Bounds), @defer
// executed inline (InlineDeferred), the access gate with the operation's cost (Gate), the answers
// kept for the schema's readers (Answers), the cache policy of a query's answer (CacheControl),
// the operation middlewares around, and one error presenter that shows each caller
// the suggestions of what it may see (Suggestions). Every endpoint is served this way: each
// audience's of the flight subgraph, and the portal.
func Serve(schema graphql.ExecutableSchema, c HandlerConfig, around ...graphql.OperationMiddleware) http.Handler {
	return serve(schema, c, NewViews(schema.Schema()), around...)
}

// serve is Serve with the views its suggestions are cut by.
func serve(schema graphql.ExecutableSchema, c HandlerConfig, views *Views, around ...graphql.OperationMiddleware) http.Handler {
	h := handler.New(schema)
	// The first transport that supports a request answers it: subscriptions over WebSocket
	// (graphql-transport-ws, the upgrade's headers carrying the credential) and over server-sent
	// events (graphql-sse: a POST accepting text/event-stream), then HTTP, which takes every
	// method but OPTIONS (HEAD included, refused with its Allow), and Options the preflights.
	// A message is held to the body bound of the HTTP transports (gqlgen's default is 1 MiB), and
	// a connection that does not say connection_init within WebsocketInitTimeout is closed:
	// the stream has no read deadline, and an idle upgrade would otherwise hold its connection
	// for ever.
	// A schema without subscriptions (the portal's) has neither: its operations are answered
	// over HTTP, each on the credential of its own request.
	if schema.Schema().Subscription != nil {
		readLimit := int64(MaxBodyBytes)
		h.AddTransport(websocket{Websocket: transport.Websocket{KeepAlivePingInterval: 15 * time.Second, PayloadReadLimit: &readLimit, InitTimeout: WebsocketInitTimeout},
			Recheck: c.Recheck})
		h.AddTransport(sse{Log: c.Log})
	}
	h.AddTransport(HTTP{Log: c.Log})
	h.AddTransport(transport.Options{})
	h.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	// Bounds holds each document to its caller's plan before gqlgen parses it; this is the
	// backstop if it ever did not.
	h.SetParserTokenLimit(flightgraph.MaxQueryLimits.MaxTokens) // the most any plan, standard or granted, allows
	h.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	h.Use(NewBounds())
	// Before the Gate: what it admits and charges is what executes, deferred fragments inline.
	h.Use(InlineDeferred{})
	h.Use(&Gate{Admit: c.Admit, Recheck: c.Recheck, Log: c.Log})
	// After the Gate, which counts the call before the cache is asked; the first of the
	// response interceptors, so that any added later runs on kept answers too.
	h.Use(NewAnswers(c.Responses))
	wait := c.LoaderWait
	if wait == 0 {
		wait = DefaultLoaderWait
	}
	// Each event of a subscription reads with loaders of its own: the request's would serve
	// every event the flight as it was at the first. The event's loaders are shared by the
	// replica's subscribers of the event with the same selection (eventLoaders, ForEvent), so
	// that an event costs its reads once, not once per subscriber.
	events := c.events
	if events == nil {
		events = newEventLoaders(c.Stores, wait)
	}
	h.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if oc := graphql.GetOperationContext(ctx); oc != nil && oc.Operation != nil && oc.Operation.Operation == ast.Subscription {
			ctx = withEventSlot(ctx, events, For(ctx))
		}
		return next(ctx)
	})
	if c.Timeout > 0 {
		h.AroundResponses(OperationTimeout(c.Timeout))
	}
	// Added after Answers, so around it: a kept answer gets its cache hints too.
	h.Use(&CacheControl{})
	// The operations of one WebSocket share its request, and so would share its loaders: each
	// gets loaders of its own, so that one's cached rows and prefetch plan are not another's.
	h.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if OverWebsocket(ctx) {
			ctx = WithLoaders(ctx, NewLoaders(c.Stores, wait))
		}
		return next(ctx)
	})
	for _, m := range around {
		h.AroundOperations(m)
	}
	h.SetErrorPresenter(ErrorPresenter(c.Log, NewSuggestions(views)))
	h.SetRecoverFunc(Recover(c.Log))
	loaded := Middleware(c.Stores, wait, h)
	if c.Responses != nil {
		// What the request reads is recorded from its start, loaders and prefetches included,
		// for the answer's tags (Answers). A stream (a WebSocket, graphql-sse) keeps no answer
		// and lives long: it records nothing.
		inner := loaded
		loaded = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
				inner.ServeHTTP(w, r)
				return
			}
			ctx, _ := flightgraph.WithCacheTags(r.Context())
			inner.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	if c.Markets == nil {
		return loaded
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			loaded.ServeHTTP(w, r)
			return
		}
		pos, err := flightgraph.PointOfSaleOf(r.Context(), r.Header, c.Markets, false)
		if err != nil {
			writeError(c.Log, w, r, err)
			return
		}
		// The labels are in the negotiated language, English when Accept-Language names
		// none the service speaks: Content-Language tells which, as REST's does.
		w.Header().Set("Content-Language", string(pos.Language))
		loaded.ServeHTTP(w, r.WithContext(flightgraph.WithPointOfSale(r.Context(), pos)))
	})
}

// websocket is gqlgen's WebSocket transport whose operations know they came over it
// (OverWebsocket): the Gate checks the connection's credential again before each.
//
// Before each operation is read, the connection's credential is checked again for every API it
// opened (Recheck), so that the bounds of the document (Bounds) and the Gate's are the plans'
// as they are now (access.Pass keeps what the check found); a credential that no longer opens
// them is refused by the Gate's own check, with its code.
type websocket struct {
	transport.Websocket
	Recheck func(ctx context.Context, products []string) error
}

func (t websocket) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if t.Recheck != nil {
		exec = rechecking{exec, t.Recheck}
	}
	t.Websocket.Do(w, r.WithContext(context.WithValue(r.Context(), overWebsocketKey{}, true)), exec)
}

// rechecking checks the credential of a WebSocket connection again before each operation.
type rechecking struct {
	graphql.GraphExecutor
	recheck func(ctx context.Context, products []string) error
}

func (e rechecking) CreateOperationContext(ctx context.Context, p *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	// Its error is the Gate's to report, once it knows the operation's APIs.
	_ = e.recheck(ctx, access.Opened(ctx))
	return e.GraphExecutor.CreateOperationContext(ctx, p)
}

// sse is gqlgen's graphql-sse transport over a writer that flushes through the middleware's
// wrappers: gqlgen asks the writer itself for http.Flusher, which they implement by Unwrap.
//
// The body is read here, as the HTTP transport reads it (at most MaxBodyBytes, one JSON object,
// gzip inflated within the bound), and refused in the same way: gqlgen's own reading takes a
// body of any size into memory (io.ReadAll, twice over as a string), and logs a body it cannot
// decode whole, a sign-in's password with it.
type sse struct {
	transport.SSE
	Log *slog.Logger
}

func (t sse) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	p := &graphql.RawParams{}
	err := flightgraph.ReadJSON(w, r, MaxBodyBytes, p, "the body must be one JSON object {query, operationName, variables, extensions}")
	if err == nil {
		err = hasQuery(p)
	}
	if err != nil {
		HTTP{Log: t.Log}.refuse(w, r, err)
		return
	}
	body, err := json.Marshal(p)
	if err != nil {
		HTTP{Log: t.Log}.refuse(w, r, flightgraph.Errorf(flightgraph.ECodeBadBody, "the body cannot be read again: %s", err))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.Header.Del("Content-Encoding")
	t.SSE.Do(flusher{w}, r, refusing{exec})
}

// refusing marks a request whose operation is refused before execution as refused
// (access.Refused), as the HTTP transport does: graphql-sse answers a refusal 200 with an event,
// and without the mark the refusals' windows of the client's address and credential would never
// count it, so that a client could send refused operations (a hidden API's, no credential's, an
// exhausted plan's) without end.
type refusing struct{ graphql.GraphExecutor }

func (e refusing) CreateOperationContext(ctx context.Context, p *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	rc, errs := e.GraphExecutor.CreateOperationContext(ctx, p)
	if errs != nil {
		access.Refused(ctx)
	}
	return rc, errs
}

// flusher flushes with http.ResponseController, which finds the Flusher under wrappers.
type flusher struct{ http.ResponseWriter }

func (f flusher) Flush() { http.NewResponseController(f.ResponseWriter).Flush() }

func (f flusher) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// OperationTimeout bounds, by d, the execution of a query or mutation whose context has no
// deadline: one that came over a stream (a WebSocket, graphql-sse), whose request lives as long
// as its client keeps it and so has none. A heavy search sent that way would otherwise run, and
// hold its heavy-work slot, without end. A subscription is left to its stream's own bounds.
func OperationTimeout(d time.Duration) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		if _, ok := ctx.Deadline(); ok {
			return next(ctx)
		}
		if !graphql.HasOperationContext(ctx) {
			return next(ctx)
		}
		if oc := graphql.GetOperationContext(ctx); oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
			return next(ctx)
		}
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return next(ctx)
	}
}
