package graph

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	Admit func(ctx context.Context, c access.Charge) error
	// EnterHeavy takes a heavy-work slot for the request of ctx (access.Guard.EnterHeavy), for a
	// quote the Gate admitted without one because the response cache keeps its answer
	// (Answers.quoteKept); nil admits every quote with its slot.
	EnterHeavy func(ctx context.Context) error
	Stores     Stores
	LoaderWait time.Duration
	Log        *slog.Logger
	// Recheck checks a WebSocket connection's credential again before each of its operations
	// (access.Guard.Readmit; Gate.Recheck); nil checks nothing.
	Recheck func(ctx context.Context, products []string) error
	// Timeout bounds a query or mutation that arrives on a stream (over WebSocket or
	// graphql-sse), whose request has no deadline of its own (OperationTimeout); 0: none.
	Timeout time.Duration
	// KeepAlive is how often an idle subscription sends its client a keep-alive: over
	// graphql-sse a comment, over the legacy graphql-ws protocol its keep-alive message
	// (graphql-transport-ws leaves pings to its client); StreamKeepAlive when 0 or less.
	KeepAlive time.Duration
	// Connect authenticates the credential a WebSocket connection's connection_init carries
	// (access.InitCredentials read from its payload) and returns the context its operations run
	// in (access.Guard.Connect); it refuses a connection that has none, in its payload or its
	// upgrade's headers. Nil reads no payload: the upgrade's headers alone carry the credential.
	Connect func(ctx context.Context, creds http.Header) (context.Context, error)
	// Origin reports whether a WebSocket upgrade's Origin may open a connection (the CORS
	// allow-list's rule, server.CORS.AllowsSocket). Nil: only the page's own origin, or none
	// (gqlgen's default).
	Origin func(r *http.Request) bool
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

// StreamKeepAlive is how often an idle subscription sends its client a keep-alive, so that
// proxies keep the stream open (a client gone without a word is found by the kernel:
// server.UnackedTimeout).
const StreamKeepAlive = 15 * time.Second

// serve is Serve with the views its suggestions are cut by.
func serve(schema graphql.ExecutableSchema, c HandlerConfig, views *Views, around ...graphql.OperationMiddleware) http.Handler {
	h := handler.New(schema)
	// The first transport that supports a request answers it: subscriptions over WebSocket
	// (graphql-transport-ws, the upgrade's headers carrying the credential) and over server-sent
	// events (graphql-sse: a POST or a GET accepting text/event-stream; SSERequest), then HTTP, which takes every
	// method but OPTIONS (HEAD included, refused with its Allow), and Options the preflights.
	// A message is held to the body bound of the HTTP transports (gqlgen's default is 1 MiB), and
	// a connection that does not say connection_init within WebsocketInitTimeout is closed:
	// the stream has no read deadline, and an idle upgrade would otherwise hold its connection
	// for ever.
	// A schema without subscriptions (the portal's) has neither: its operations are answered
	// over HTTP, each on the credential of its own request.
	if schema.Schema().Subscription != nil {
		readLimit := int64(MaxBodyBytes)
		keepAlive := c.KeepAlive
		if keepAlive <= 0 {
			keepAlive = StreamKeepAlive
		}
		ws := transport.Websocket{KeepAlivePingInterval: keepAlive, PayloadReadLimit: &readLimit, InitTimeout: WebsocketInitTimeout}
		if c.Connect != nil {
			ws.InitFunc = initFunc(c.Connect, c.Log)
		}
		h.AddTransport(websocket{Websocket: ws, origin: c.Origin, log: c.Log, Recheck: c.Recheck})
		h.AddTransport(sse{SSE: transport.SSE{KeepAlivePingInterval: keepAlive}, Log: c.Log})
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
	answers := NewAnswers(c.Responses)
	answers.EnterHeavy = c.EnterHeavy
	h.Use(&Gate{Admit: c.Admit, Recheck: c.Recheck, QuoteKept: answers.quoteKept, Log: c.Log})
	// After the Gate, which counts the call before the cache is asked; the first of the
	// response interceptors, so that any added later runs on kept answers too.
	h.Use(answers)
	wait := c.LoaderWait
	if wait == 0 {
		wait = DefaultLoaderWait
	}
	// Each operation over a WebSocket reads with loaders of its own, which the prefetch plan
	// (around) is made on: the request is the connection's, whose loaders would serve every
	// later operation what the first read, count one network-wide search (Loaders.OneSearch) for
	// the connection's life, and take the plans of operations that run at once.
	h.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if OverWebsocket(ctx) {
			ctx = WithLoaders(ctx, NewLoaders(c.Stores, wait))
		}
		return next(ctx)
	})
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
			if r.Header.Get("Upgrade") != "" || SSERequest(r) {
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
// Its upgrade is refused ECodeCrossSite (403) unless origin allows the page's Origin (nil: the
// page's own origin only, as gqlgen's transport has it), and it closes every connection it
// accepted when the connection's work is over: gqlgen leaves open, without a word, a connection
// whose connection_init payload is not a JSON object, which a client could repeat to hold
// sockets; it is closed 4400 (REQ_400.000) here.
//
// Before each operation is read, the connection's credential is checked again for every API it
// opened (Recheck, on the operation's own pass), so that the bounds of the document (Bounds) and
// the Gate's are the plans' as they are now (access.Pass keeps what the check found); a
// credential that no longer opens them is refused by the Gate's own check, with its code.
type websocket struct {
	transport.Websocket
	origin  func(r *http.Request) bool
	log     *slog.Logger
	Recheck func(ctx context.Context, products []string) error
}

func (t websocket) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	accept := &accepted{}
	if t.origin != nil {
		if !t.origin(r) {
			writeError(t.log, w, r, flightgraph.Errorf(flightgraph.ECodeCrossSite, "a page of the origin %.100q may not open this WebSocket: it is not one of the origins allowed to call the APIs", r.Header.Get("Origin")))
			return
		}
		// The origin was checked, against the same allow-list as CORS's.
		accept.AcceptOptions.InsecureSkipVerify = true
	}
	t.Implementation = accept
	ctx := context.WithValue(context.WithValue(r.Context(), overWebsocketKey{}, true), acceptedKey{}, accept)
	if t.Recheck != nil {
		exec = rechecking{exec, t.Recheck} // inside: it rechecks on the operation's own pass
	}
	t.Websocket.Do(w, r.WithContext(ctx), uncredentialed{GraphExecutor: exec, a: accept, log: t.log})
	accept.stop()
	if accept.conn != nil {
		// Closed already, as it is unless gqlgen left it open: then these fail, harmlessly.
		accept.conn.WriteClose(4000+http.StatusBadRequest, closeReason(flightgraph.Errorf(flightgraph.ECodeBadBody, "connection_init's payload must be a JSON object")))
		accept.conn.Close()
	}
}

type acceptedKey struct{}

// accepted is gqlgen's coder/websocket implementation that keeps the connection it accepted,
// and closes a connection that is refused for want of a credential (refuse) once it has told its
// first operation why.
type accepted struct {
	transport.CoderWebsocketImplementation
	conn transport.WebsocketConn

	mu      sync.Mutex
	refusal *flightgraph.Error
	timer   *time.Timer
}

func (a *accepted) Accept(w http.ResponseWriter, r *http.Request, options transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := a.CoderWebsocketImplementation.Accept(w, r, options)
	if err != nil {
		return nil, err
	}
	a.conn = conn
	return guardedConn{WebsocketConn: conn, a: a}, nil
}

// refuse marks the connection as refused with fe (no credential in its connection_init nor its
// upgrade's headers): every operation it sends is answered fe before anything of it is read
// (uncredentialed), and the connection is closed 4401 once the first is answered, or after
// WebsocketInitTimeout if none comes. The refusal is an operation's error, not only a close
// frame, so that a gateway that subscribes for a client without a credential tells its client
// the code: gateways do not pass a close frame's reason on.
func (a *accepted) refuse(fe *flightgraph.Error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refusal = fe
	a.timer = time.AfterFunc(WebsocketInitTimeout, a.close)
}

// refused returns the refusal of the connection, nil when it has none.
func (a *accepted) refused() *flightgraph.Error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refusal
}

// close closes a refused connection with its refusal.
func (a *accepted) close() {
	if fe := a.refused(); fe != nil {
		a.conn.WriteClose(4000+flightgraph.Lookup(fe.Code).Status, closeReason(fe))
		a.conn.Close()
	}
}

// stop stops the refused connection's timer.
func (a *accepted) stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.timer != nil {
		a.timer.Stop()
	}
}

// guardedConn is the accepted connection, which closes itself after it wrote the end of an
// operation (complete) if the connection is refused (accepted.refuse).
type guardedConn struct {
	transport.WebsocketConn
	a *accepted
}

func (c guardedConn) WriteJSON(v any) error {
	err := c.WebsocketConn.WriteJSON(v)
	if c.a.refused() == nil {
		return err
	}
	var m struct{ Type string }
	if b, merr := json.Marshal(v); merr == nil && json.Unmarshal(b, &m) == nil && m.Type == "complete" {
		c.a.close()
	}
	return err
}

// SetReadLimit and SetReadDeadline keep the accepted connection's own: gqlgen holds messages to
// the transport's PayloadReadLimit only through them.
func (c guardedConn) SetReadLimit(limit int64) {
	c.WebsocketConn.(transport.WebsocketReadLimiter).SetReadLimit(limit)
}

func (c guardedConn) SetReadDeadline(t time.Time) error {
	return c.WebsocketConn.(transport.WebsocketReadDeadliner).SetReadDeadline(t)
}

// uncredentialed runs the operations of a WebSocket connection: each on a pass of its own
// (access.ForOperation), admitted and holding heavy work for itself, given back when it ends, and
// taking its place in the refusals' windows, kept when it is refused;
// and every operation of a refused connection (accepted.refuse) answered with its refusal, before
// the operation is parsed: nothing of it runs.
type uncredentialed struct {
	graphql.GraphExecutor
	a   *accepted
	log *slog.Logger
}

// operationPass is where an operation's own pass waits, in its OperationContext, between its
// admission and its execution.
const operationPass = "WebsocketOperationPass"

type ownPass struct {
	pass *access.Pass
	end  func()
}

func (e uncredentialed) CreateOperationContext(ctx context.Context, p *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	if fe := e.a.refused(); fe != nil {
		return nil, gqlerror.List{{Message: fe.Message, Extensions: extensions(fe.Code, fe.Parameter)}}
	}
	ctx, end, err := access.ForOperation(ctx)
	if err != nil {
		// Its refusals' window is full: refused before anything of it is read.
		fe := flightgraph.Public(ctx, e.log, err, "path", "/graphql (WebSocket operation)")
		ext := extensions(fe.Code, fe.Parameter)
		if n := fe.RetryAfterSeconds(); n > 0 {
			ext["retryAfter"] = n
		}
		return nil, gqlerror.List{{Message: fe.Message, Extensions: ext}}
	}
	rc, errs := e.GraphExecutor.CreateOperationContext(ctx, p)
	if errs != nil || rc == nil {
		if errs != nil {
			// Nothing executes: a refusal, which keeps its place (access.ForOperation), as a
			// refused request's does (the HTTP transport's, graphql-sse's refusing).
			access.Refused(ctx)
		}
		end()
		return rc, errs
	}
	rc.Stats.SetExtension(operationPass, ownPass{pass: access.PassFromContext(ctx), end: end})
	return rc, nil
}

// DispatchOperation runs the operation on its own pass, which it gives back once the
// operation's context ends (the transport cancels it when the operation is over).
func (e uncredentialed) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	if own, ok := rc.Stats.GetExtension(operationPass).(ownPass); ok {
		if own.pass != nil {
			ctx = access.WithPass(ctx, own.pass)
		}
		context.AfterFunc(ctx, own.end)
	}
	return e.GraphExecutor.DispatchOperation(ctx, rc)
}

func (e uncredentialed) DispatchError(ctx context.Context, list gqlerror.List) *graphql.Response {
	if e.a.refused() != nil || !graphql.HasOperationContext(ctx) {
		// Refused before it was read (a refused connection's, a full refusals' window): the
		// errors are made for the wire already, and nothing of the operation is known.
		return &graphql.Response{Errors: list}
	}
	return e.GraphExecutor.DispatchError(ctx, list)
}

// initFunc reads the credential of a connection_init's payload (access.InitCredentials) and has
// connect authenticate it. A refusal closes the connection with 4000 and the catalogue entry's
// HTTP status (4401 for a missing or bad credential, 4403 for a credential of the wrong kind or
// two that disagree, 4400 for a payload that cannot be read, 4429 when the refusals' window is
// full, 45xx when a backing service failed), its reason the code and message (masked as the
// edges mask them, Public); graphql-ws's client gives both to the page (its CloseEvent). A
// connection without any credential is acknowledged instead, to be refused at its first
// operation and closed then (accepted.refuse).
func initFunc(connect func(ctx context.Context, creds http.Header) (context.Context, error), log *slog.Logger) transport.WebsocketInitFunc {
	return func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		creds, err := access.InitCredentials(payload)
		if err != nil {
			access.Refused(ctx)
		} else {
			var connected context.Context
			if connected, err = connect(ctx, creds); err == nil {
				return connected, nil, nil
			}
		}
		fe := flightgraph.Public(ctx, log, err, "path", "/graphql (connection_init)")
		if a, ok := ctx.Value(acceptedKey{}).(*accepted); ok && fe.Code == flightgraph.ECodeMissingCredentials {
			// Acknowledged, to refuse its first operation and close (accepted.refuse).
			a.refuse(fe)
			return ctx, nil, nil
		}
		ctx = transport.WithWebsocketCloseCode(ctx, 4000+flightgraph.Lookup(fe.Code).Status)
		return transport.AppendCloseReason(ctx, closeReason(fe)), nil, fe
	}
}

// maxCloseReason is the most bytes a WebSocket close frame's reason holds (RFC 6455 §5.5).
const maxCloseReason = 123

// closeReason is the reason of a close frame that refuses a connection with fe: its code and
// message, cut to what a close frame holds.
func closeReason(fe *flightgraph.Error) string {
	s := fe.Code + ": " + fe.Message
	if len(s) <= maxCloseReason {
		return s
	}
	s = s[:maxCloseReason-len("…")]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
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
// It takes both requests of graphql-sse's distinct connections mode (SSERequest): a POST whose
// JSON body is the operation, as gqlgen's transport does, and a GET whose query string is
// (query, operationName, variables, extensions), which Hive Gateway sends by default and gqlgen's
// transport does not take. Either is read by the HTTP transport's reading (HTTP.read), bounded as
// it is: a body at most MaxBodyBytes, one JSON object, gzip inflated within the bound; a query
// string within the server's header bound; refused in the catalogue's shape. gqlgen's own reading
// took a body of any size into memory (io.ReadAll, twice over as a string), and logged a body it
// could not decode whole, a sign-in's password with it.
//
// The operation is then prepared here (CreateOperationContext: parsed, validated, admitted by the
// Gate) and handed to gqlgen's transport, which streams it. A refusal before execution is counted
// in the refusals' windows (access.Refused), as the HTTP transport counts it: graphql-sse answers
// it 200 with an event, and without the mark a client could send refused operations (a hidden
// API's, no credential's, an exhausted plan's) without end. A mutation over GET is refused 405
// with Allow: POST before any stream opens, as over the HTTP transport: a GET must not change
// anything (graphql-sse's protocol asks the same). A query over GET, as over POST, is answered as
// a stream of one event then complete (what graphql-sse's own server does), within the
// operation timeout of a stream's queries (OperationTimeout).
type sse struct {
	transport.SSE
	Log *slog.Logger
}

// SSERequest reports whether r is a graphql-sse request, which the GraphQL endpoints with
// subscriptions answer as a stream: a POST with a JSON body (what gqlgen's transport.SSE takes)
// or a GET, either accepting text/event-stream. It is the one reading of the question, for the
// transport and for the server, which lifts the request's timeout only for streams.
func SSERequest(r *http.Request) bool {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	switch r.Method {
	case http.MethodGet:
		return !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") // the WebSocket transport's
	case http.MethodPost:
		return transport.SSE{}.Supports(r)
	}
	return false
}

// Supports implements graphql.Transport.
func (sse) Supports(r *http.Request) bool { return SSERequest(r) }

func (t sse) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	p, err := HTTP{Log: t.Log}.read(w, r)
	if err != nil {
		HTTP{Log: t.Log}.refuse(w, r, err)
		return
	}
	p.Headers = r.Header
	p.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx := r.Context()
	if r.Method == http.MethodGet {
		ctx = context.WithValue(ctx, getOnlyKey{}, true)
		r = r.WithContext(ctx)
	}
	rc, errs := exec.CreateOperationContext(ctx, p)
	if errs != nil {
		access.Refused(ctx)
		for _, e := range errs {
			if code := flightgraph.ErrorCode(e.Err); code == flightgraph.ECodeMethodNotAllowed {
				w.Header().Set("Allow", "POST") // the operation is a mutation
				w.Header().Set("Content-Type", "application/json")
				flightgraph.SetCacheHeaders(w.Header(), flightgraph.NoStore)
				w.WriteHeader(flightgraph.Lookup(code).Status)
				writeResponse(w, &graphql.Response{Errors: gqlerror.List{{Message: flightgraph.ErrorMessage(e.Err), Extensions: extensions(code, "")}}})
				return
			}
		}
	}
	// gqlgen's transport reads a body, which the prepared executor does not look at: the
	// operation is the one read and prepared above.
	r.Body = io.NopCloser(strings.NewReader("{}"))
	r.Header.Del("Content-Encoding")
	sw := &sseWriter{ResponseWriter: w}
	defer sw.close()
	t.SSE.Do(sw, r, prepared{exec, rc, errs})
}

// sseWriter is the writer gqlgen's SSE transport writes a stream to: it flushes with
// http.ResponseController, which finds the Flusher under wrappers, and writes nothing once the
// stream's handler is over. The transport's keep-alive goroutine stops when the request's context
// ends, which is only after Do has returned: a ping it writes in between would reach a response
// net/http has finished, whose buffers serve other responses.
type sseWriter struct {
	http.ResponseWriter
	mu     sync.Mutex
	closed bool
}

func (s *sseWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errStreamOver
	}
	return s.ResponseWriter.Write(p)
}

func (s *sseWriter) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		http.NewResponseController(s.ResponseWriter).Flush()
	}
}

// errStreamOver is what a write to a stream whose handler is over returns.
var errStreamOver = errors.New("graph: the stream's handler is over")

func (s *sseWriter) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

func (s *sseWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// prepared is an executor whose operation has already been prepared (sse.Do): gqlgen's SSE
// transport asks for it by CreateOperationContext.
type prepared struct {
	graphql.GraphExecutor
	rc   *graphql.OperationContext
	errs gqlerror.List
}

func (e prepared) CreateOperationContext(context.Context, *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	return e.rc, e.errs
}

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
