// Package server assembles flightgraph's http.Handler: the routes of every edge, the middleware
// order, health and metrics, and runs it with timeouts and graceful shutdown.
package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/app"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/portal"
	"github.com/flightgraph/flightgraph/resolvers"
	portalresolvers "github.com/flightgraph/flightgraph/resolvers/portal"
	"github.com/flightgraph/flightgraph/rest"
	"github.com/flightgraph/flightgraph/web"
)

// DefaultRequestTimeout bounds the work of one request unless Config says otherwise.
const DefaultRequestTimeout = 20 * time.Second

// Pinger is what readiness checks.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Config is what the server adds to the services: its HTTP side.
type Config struct {
	// Registry is where metrics are registered; MetricsHandler serves it, on a listener of its
	// own (Run), never on the API's.
	Registry *prometheus.Registry
	// DB is what readiness checks.
	DB         Pinger
	LoaderWait time.Duration
	Version    string
	BuildTime  time.Time
	// RequestTimeout bounds the work of one request: its context's deadline, which every
	// resolver, loader and store call honours; DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
	// StreamWriteTimeout bounds each write of a stream, which has no request timeout
	// (streamWriter); DefaultStreamWriteTimeout when zero.
	StreamWriteTimeout time.Duration
	// StreamKeepAlive is how often an idle GraphQL subscription sends a keep-alive;
	// graph.StreamKeepAlive when zero.
	StreamKeepAlive time.Duration
	// Conns bound the API listener's connections (Run); zero fields take the defaults.
	Conns ConnLimits
	// CORSOrigins are the origins whose pages may call the APIs (ParseOrigins); none lets every
	// origin call (CORS).
	CORSOrigins []string
	// Trace, when set, wraps every request of the API's listener, inside its request id and
	// timeout and outside everything else: its span (tracing.Tracer.Handler). Nil traces nothing.
	Trace func(http.Handler) http.Handler
}

// Server is the HTTP edge of flightgraph over its services.
type Server struct {
	*app.Services
	cfg      Config
	handler  http.Handler
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	draining atomic.Bool // Run is draining: not ready, and answers close their connections
	conns    *connLimiter
	cors     *CORS
	// inFlight counts the API requests being served, for Shutdown.Interactive.
	inFlight atomic.Int64
}

// New builds the handler over the services.
func New(cfg Config, svc *app.Services) *Server {
	if cfg.LoaderWait == 0 {
		cfg.LoaderWait = graph.DefaultLoaderWait
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.StreamWriteTimeout <= 0 {
		cfg.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &Server{Services: svc, cfg: cfg, cors: NewCORS(cfg.CORSOrigins)}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flightgraph_http_requests_total", Help: "HTTP requests by route, method and status code.",
	}, []string{"route", "method", "code"})
	s.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "flightgraph_http_request_duration_seconds", Help: "HTTP request durations by route.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"route", "method"})
	cfg.Registry.MustRegister(s.requests, s.duration)
	s.cfg.Conns = cfg.Conns.withDefaults()
	s.conns = newConnLimiter(s.cfg.Conns, cfg.Registry)
	countFallbacks(cfg.Registry, svc.Limiter, "flightgraph_limiter_fallbacks_total",
		"Limit decisions this replica made on its own because the shared limiter (Redis) failed.")
	countFallbacks(cfg.Registry, svc.Lockout, "flightgraph_signin_lockout_fallbacks_total",
		"Sign-in attempts this replica counted on its own because the shared lockout (Redis) failed.")
	countFallbacks(cfg.Registry, svc.MailBudget.Counts(), "flightgraph_mail_budget_fallbacks_total",
		"Mails this replica counted in its mail budget on its own because the shared counts (Redis) failed.")
	cfg.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "flightgraph_password_hashes_total",
		Help: "Password hashes (argon2id) computed by sign-ins, password grants and sign-ups.",
	}, func() float64 { return float64(s.Hashes.Computed()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "flightgraph_password_hashes_waiting",
			Help: "Password hashes waiting for one of the --password-hash-concurrency slots.",
		}, func() float64 { return float64(s.Hashes.Waiting()) }))

	if heavy := svc.Guard.Heavy; heavy != nil {
		// Shed calls are told apart from failed ones: a 503 or 429 the replica chose, in a few
		// milliseconds and uncharged, is capacity, not a fault.
		shed := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "flightgraph_heavy_calls_shed_total",
			Help: "Heavy calls refused before they were charged: WS_503.000 when every heavy-work slot was busy, LIMIT_429.002 while the key's own heavy call ran.",
		}, []string{"code"})
		cfg.Registry.MustRegister(shed, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "flightgraph_heavy_slots_busy", Help: "Heavy-work slots taken (see --heavy-concurrency).",
		}, func() float64 { n, _ := heavy.Taken(); return float64(n) }))
		heavy.OnShed = func(code string) { shed.WithLabelValues(code).Inc() }
	}

	mux := http.NewServeMux()
	gql, playground := s.graphQL(), web.Playground()
	mux.Handle("/graphql", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Add("Vary", "Accept") // the page or GraphQL, by Accept: caches must not mix them
		}
		if web.WantsPage(r) {
			playground.ServeHTTP(w, r) // a browser's visit: GraphiQL, which then posts here
			return
		}
		gql.ServeHTTP(w, r)
	}))
	mux.Handle("GET /playground", playground)
	portalAPI := s.portalGraphQL()
	mux.Handle("/portal/graphql", portalAPI)
	// The binary serves plain HTTP: behind an https public URL, TLS ends at a proxy, and the
	// pages' cookie must be Secure (and __Host-) all the same.
	(&web.Portal{API: portalAPI, Log: s.Log, Now: s.Now, Secure: strings.HasPrefix(strings.ToLower(svc.Access.PortalURL), "https://")}).Register(mux)
	mux.Handle("/oauthcust/oauth/token", s.Tokens)
	api := &rest.API{Travel: s.Travel, Guard: s.Guard, Log: s.Log, Now: s.Now, Version: cfg.Version, BuildTime: cfg.BuildTime, Live: svc.Live, Answers: svc.Answers}
	api.Register(mux)
	mux.Handle("GET /openapi.json", api.OpenAPIHandler())
	mux.Handle("/openapi.json", api.OpenAPIElse())
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	// Any other path is the original's unknown URL, in the REST error shape, or, when a route
	// has the path under another method, 405 with its Allow (rest.API.Unknown). It is guarded
	// like the routes (credentials looked up, a place in the refusals window, its 404 counted as
	// a refusal), so that a hidden API's route, which the guard answers with the same 404, cannot
	// be told from it by a 429 once the window fills.
	unknown := s.Guard.Authenticated(api.Error)(http.HandlerFunc(api.Unknown))
	mux.Handle("GET "+web.StaticPrefix, web.Static(unknown))
	// The bare address: a person's browser goes to the portal; an API client asking for JSON
	// keeps the unknown path's 404.
	mux.Handle("GET /{$}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if web.WantsPage(r) {
			http.Redirect(w, r, "/portal", http.StatusSeeOther)
			return
		}
		unknown.ServeHTTP(w, r)
	}))
	mux.Handle("/", unknown)
	// Outermost first: request id and timeout, then the trace, then metrics and the access log,
	// then CORS, which answers the APIs' preflights before the access guard sees them, then
	// compression (inside them all, so that they see the status and time of the answer as sent).
	h := s.observe(s.cors.Handler(compress(mux)))
	if cfg.Trace != nil {
		h = cfg.Trace(h)
	}
	s.handler = s.withRequestID(h)
	return s
}

// MetricsHandler serves the registry's metrics in the Prometheus text format. The API listener
// does not serve it: metrics tell request rates, routes and error counts that are nobody else's
// business, so Run serves them on a listener of their own, loopback by default.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{Registry: s.cfg.Registry})
}

// countFallbacks serves, as the counter name, how many decisions v made on its own while its
// shared store failed, if v is a fallback that counts them.
func countFallbacks(reg *prometheus.Registry, v any, name, help string) {
	if f, ok := v.(interface{ Fallbacks() int64 }); ok {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f.Fallbacks()) }))
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	s.handler.ServeHTTP(w, r)
}

// graphQL is /graphql: the access guard authenticates, then the GraphQL handler admits the
// operation that will execute (graph.Gate) and runs it.
func (s *Server) graphQL() http.Handler {
	c := s.graphConfig()
	c.Markets = s.Travel
	c.Responses = s.Answers
	h := graph.NewHandler(&resolvers.Resolver{Travel: s.Travel, Now: s.Now, Airframes: dataset.Airframes, Live: s.Live, Events: s.Events}, c)
	return s.Guard.Authenticated(graph.ErrorWriter(s.Log))(h)
}

// portalGraphQL is the portal's GraphQL endpoint, apart from the flight subgraph so that nothing
// of the portal enters a company's supergraph; the same guard, bounds and gate stand before it.
func (s *Server) portalGraphQL() http.Handler {
	schema := portal.NewExecutableSchema(portal.Config{Resolvers: &portalresolvers.Resolver{Access: s.Access}})
	return s.Guard.Authenticated(graph.ErrorWriter(s.Log))(graph.Serve(schema, s.graphConfig()))
}

func (s *Server) graphConfig() graph.HandlerConfig {
	return graph.HandlerConfig{Admit: s.Guard.Admit, EnterHeavy: s.Guard.EnterHeavy, Stores: s.Graph, LoaderWait: s.cfg.LoaderWait, Log: s.Log, Timeout: s.cfg.RequestTimeout, KeepAlive: s.cfg.StreamKeepAlive,
		Recheck: s.Guard.Readmit, Connect: s.Guard.Connect, Origin: s.cors.AllowsSocket}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": s.cfg.Version})
}

// readyz answers 503 while the server drains or the database does not answer, so that a load
// balancer stops sending.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.cfg.DB.Ping(ctx); err != nil {
		s.Log.Warn("not ready", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "down"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "database": "up"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// withRequestID gives every request an id (the caller's X-Request-Id when it is sane), echoed in
// the response and carried in the context for logs and masked errors, and bounds its time.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if len(id) == 0 || len(id) > 64 {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-Id", id)
		if s.draining.Load() {
			// The server is about to close: the client should open its next connection
			// elsewhere rather than reuse this one.
			w.Header().Set("Connection", "close")
		}
		var (
			ctx    context.Context
			cancel context.CancelFunc
		)
		if streaming(r) {
			// A subscription lives as long as its client keeps it: no request timeout and no
			// deadline for the whole response, but one for each write (streamWriter), so that a
			// client that stops reading does not hold its handler.
			ctx, cancel = context.WithCancel(flightgraph.WithRequestID(r.Context(), id))
			readStreamBody(r)
			rc := http.NewResponseController(w)
			rc.SetWriteDeadline(time.Time{})
			rc.SetReadDeadline(time.Time{})
			w = newStreamWriter(w, s.cfg.StreamWriteTimeout)
		} else {
			ctx, cancel = context.WithTimeout(flightgraph.WithRequestID(r.Context(), id), s.cfg.RequestTimeout)
		}
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// MaxHeaderBytes bounds a request's line and headers on the API's listener: a GET's query string
// with them, so that the operation of a GraphQL GET (over the HTTP transport or graphql-sse) is
// held to 64 KiB before any handler reads it; past it, Go's server answers 431.
const MaxHeaderBytes = 64 << 10

// streaming reports whether r opens a subscription: a WebSocket upgrade of /graphql, a
// graphql-sse request to /graphql (a POST with a JSON body or a GET, accepting
// text/event-stream: graph.SSERequest, the transport's own test), or the REST events stream.
// Nothing else is: an Accept naming text/event-stream on any other route (a search, a sign-in,
// the portal's API) must not lift the request's timeout and read deadline, or a client could hold
// a connection and a heavy-work slot for as long as it likes by trickling its body or by asking a
// slow question. A query or mutation that comes over graphql-sse is held to the request timeout
// all the same (graph.OperationTimeout); a GET's operation is in its query string, which the
// server's header bound holds (MaxHeaderBytes) before any handler runs.
func streaming(r *http.Request) bool {
	switch r.URL.Path {
	case "/graphql":
		if r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			return true
		}
		// What the SSE transport takes: anything else is answered by the HTTP transport,
		// within the request's time.
		return graph.SSERequest(r)
	case rest.EventsPath:
		return r.Method == http.MethodGet
	}
	return false
}

// readStreamBody reads the body of a streaming request (a graphql-sse POST) before its read
// deadline is lifted, at most graph.MaxBodyBytes and one byte more (enough for the transport to
// refuse it as too large), so that the body cannot be trickled for ever; the transport then reads
// it from memory, a failure (the deadline passed) as it happened.
func readStreamBody(r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, graph.MaxBodyBytes+1))
	rest := io.Reader(eofReader{})
	if err != nil {
		rest = errReader{err}
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), rest))
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// observe counts and times requests by the mux pattern that served them (never the raw path,
// which would make one series per flight id) and writes the access log.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &access.StatusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.Status == 0 {
			sw.Status = http.StatusOK
		}
		if errors.Is(r.Context().Err(), context.Canceled) && (sw.Status < 400 || sw.Status >= 500) {
			// The connection failed under the request (the client went away): an answer went
			// nowhere, and a failure is none of the server's. A 4xx is kept: it is the refusal
			// of what the client did send (a body too slow or cut off).
			sw.Status = graph.StatusClientClosed
		}
		route := r.Pattern
		if route == "" || route == "/" {
			route = "unmatched"
		}
		elapsed := time.Since(start)
		s.requests.WithLabelValues(route, r.Method, strconv.Itoa(sw.Status)).Inc()
		s.duration.WithLabelValues(route, r.Method).Observe(elapsed.Seconds())
		if level := accessLogLevel(sw.Status); s.Log.Enabled(r.Context(), level) {
			s.Log.LogAttrs(r.Context(), level, "request", slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", sw.Status), slog.Duration("elapsed", elapsed), slog.String("requestId", flightgraph.RequestIDFromContext(r.Context())))
		}
	})
}

// accessLogLevel is the level of a request's access-log line. Answers that served the call
// (below 400) and a plan's refusals (429) are DEBUG: at INFO a line each would cost a cheap call
// a measurable share (issue 22), and flightgraph_http_requests_total counts them by route and
// status all the same. Other client errors, the client gone (499) and server errors stay INFO,
// each with its request id: they are what someone reads the log for, and they are bounded (the
// refusals' windows).
func accessLogLevel(status int) slog.Level {
	if status < http.StatusBadRequest || status == http.StatusTooManyRequests {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// Shutdown says how Run stops once its context is done.
type Shutdown struct {
	// Drain is how long /readyz answers 503 while requests are still served, so that load
	// balancers stop sending before the listener closes; answers meanwhile close their
	// keep-alive connections.
	Drain time.Duration
	// Grace is how long requests in flight then get to finish.
	Grace time.Duration
	// Interactive, when set, is asked once the context is done: true when a person at a
	// terminal asked the stop (Ctrl-C) and waits for it. Then, with no request in flight, Run
	// skips the drain: no load balancer sends to a process run by hand, and the drain would only
	// make the person wait. With requests in flight, or under a supervisor, it drains.
	Interactive func() bool
}

// Run serves the API on ln, within the connection limits of Config.Conns, and, unless metrics is
// nil, GET /metrics, /healthz and /readyz on metrics, until ctx is done; then it shuts both down
// gracefully: it drains (readiness fails, requests are still served), stops accepting, lets
// requests in flight finish for up to the grace period, and returns. If either listener fails,
// Run shuts the other down and returns the error.
//
// The probes are served on the metrics listener as well as on the API's because no share of the
// API's connections can be kept for them: a connection is refused before its request is read.
// There the API's clients cannot reach them, nor fill its connections.
func (s *Server) Run(ctx context.Context, ln, metrics net.Listener, sd Shutdown) error {
	errorLog := slog.NewLogLogger(s.Log.Handler(), slog.LevelWarn)
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      s.cfg.RequestTimeout + 10*time.Second,
		IdleTimeout:       s.cfg.Conns.IdleTimeout,
		ConnState:         s.conns.connState,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          errorLog,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	servers := []*http.Server{srv}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(s.conns.listener(ln)) }()
	if metrics != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.MetricsHandler())
		mux.HandleFunc("GET /healthz", s.healthz)
		mux.HandleFunc("GET /readyz", s.readyz)
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
			WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 16 << 10, ErrorLog: errorLog}
		servers = append(servers, msrv)
		go func() { errc <- msrv.Serve(metrics) }()
	}
	// Background work of the access core: usage counts to the store, mail to the server, the
	// sweep of delivered mail and expired sign-ups, other replicas' changes to the guard's cache.
	bg, stopBg := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { s.Usage.Run(bg, 5*time.Second) })
	wg.Go(func() { s.conns.run(bg) })
	wg.Go(func() { s.Outbox.Run(bg, 10*time.Second) })
	wg.Go(func() { s.Sweeper.Run(bg, 0) })
	if s.Live != nil {
		s.Live.Hub.Start(bg)
		wg.Go(func() { s.Clock.Run(bg) })
		if s.EventFeed != nil {
			wg.Go(func() {
				if err := s.EventFeed.Watch(bg, s.Live.Hub.Notify); err != nil {
					s.Log.Error("the event feed stopped; other replicas' events reach this one at the hub's poll", "err", err)
				}
			})
		}
	}
	wg.Go(func() { s.Travel.RunIndex(bg) })
	wg.Go(func() {
		if err := s.Guard.Follow(bg); err != nil {
			s.Log.Error("the access feed stopped; other replicas' changes reach this one when its cache entries expire", "err", err)
		}
	})
	defer func() { stopBg(); wg.Wait() }()
	var failed error
	select {
	case failed = <-errc:
	case <-ctx.Done():
	}
	if failed == nil && sd.Drain > 0 && sd.Interactive != nil && sd.Interactive() && s.inFlight.Load() == 0 {
		s.Log.Info("stopping at once: interrupted at a terminal with no request in flight, so there is nothing to drain")
	} else if failed == nil && sd.Drain > 0 {
		s.draining.Store(true)
		s.Log.Info("draining: /readyz answers 503 while requests are still served", "drain", sd.Drain)
		select {
		case <-time.After(sd.Drain):
		case failed = <-errc:
		}
	}
	s.Log.Info("shutting down: no new connections; requests in flight finish", "grace", sd.Grace)
	sctx, cancel := context.WithTimeout(context.Background(), sd.Grace)
	defer cancel()
	var errs []error
	for _, hs := range servers {
		if err := hs.Shutdown(sctx); err != nil {
			errs = append(errs, err)
		}
	}
	// Collect what each Serve returned: the failure already read, and one answer per other server.
	pending := len(servers)
	if failed != nil {
		errs = append(errs, failed)
		pending--
	}
	for range pending {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
