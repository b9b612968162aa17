// Package server assembles flightgraph's http.Handler: the routes of every edge, the middleware
// order, health and metrics, and runs it with timeouts and graceful shutdown.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/resolvers"
	"github.com/flightgraph/flightgraph/rest"
	"github.com/flightgraph/flightgraph/travel"
)

// MaxComplexity bounds a GraphQL operation's cost; the schema has cycles (city → airports →
// city), so without a bound one query could ask for the whole graph many times over.
const MaxComplexity = 2000

// RequestTimeout bounds the work of one request.
const RequestTimeout = 20 * time.Second

// Pinger is what readiness checks.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Config holds the server's dependencies.
type Config struct {
	Log      *slog.Logger
	Registry *prometheus.Registry // metrics are registered here and served at /metrics
	DB       Pinger
	Stores   graph.Stores // what GraphQL, REST and the dataloaders read of the flight graph
	Access   flightgraph.AccessStore
	Mail     flightgraph.MailStore
	Mailer   access.Mailer // default: the log
	// NewLimiter builds the limiter over the usage counts; default: in-process.
	NewLimiter func(usage access.DayUsage) access.Limiter
	Hasher     access.PasswordHasher
	// PasswordHashConcurrency bounds the password hashes computed at once by the portal and the
	// token endpoint together; 0 means access.DefaultHashConcurrency.
	PasswordHashConcurrency int
	// Lockout counts sign-in and password grant attempts; default: in-process, on Now.
	Lockout    access.Lockout
	Tokens     access.TokenLifetimes
	PortalURL  string
	LoaderWait time.Duration
	// ReferenceTTL is how long the snapshot of reference data (places, fleet, carriers) is
	// trusted (travel.Reference); 0 reads them from the store on every request.
	ReferenceTTL time.Duration
	Now          func() time.Time
	Version      string
	BuildTime    time.Time
}

// Server is the HTTP edge of flightgraph.
type Server struct {
	cfg      Config
	travel   *travel.Service
	handler  http.Handler
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	// Access is the portal's service, for the commands that seed accounts and keys.
	Access *access.Service
	Guard  *access.Guard
	Usage  *access.UsageRecorder
	Outbox *access.Outbox
	// Hashes is the gate every password hash goes through.
	Hashes *access.HashGate
}

// New builds the handler.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.LoaderWait == 0 {
		cfg.LoaderWait = graph.DefaultLoaderWait
	}
	if cfg.Hasher == (access.PasswordHasher{}) {
		cfg.Hasher = access.DefaultPasswordHasher
	}
	if cfg.PasswordHashConcurrency <= 0 {
		cfg.PasswordHashConcurrency = access.DefaultHashConcurrency
	}
	if cfg.Lockout == nil {
		cfg.Lockout = access.NewMemoryLockout(cfg.Now)
	}
	if cfg.Mailer == nil {
		cfg.Mailer = access.NewLogMailer(cfg.Log)
	}
	if cfg.ReferenceTTL > 0 {
		ref := travel.NewReference(cfg.Stores.Places, cfg.Stores.Aircraft, cfg.Stores.Network, cfg.ReferenceTTL, cfg.Log)
		cfg.Stores.Places, cfg.Stores.Aircraft, cfg.Stores.Network = ref.Places(), ref.Fleet(), ref.Network()
	}
	s := &Server{cfg: cfg, travel: &travel.Service{Flights: cfg.Stores.Flights, Places: cfg.Stores.Places,
		Aircraft: cfg.Stores.Aircraft, Network: cfg.Stores.Network, Now: cfg.Now}}
	s.Usage = &access.UsageRecorder{Store: cfg.Access, Log: cfg.Log}
	var limiter access.Limiter = access.NewMemoryLimiter(s.Usage.DayUsage, cfg.Now)
	if cfg.NewLimiter != nil {
		limiter = cfg.NewLimiter(s.Usage.DayUsage)
	}
	s.Guard = &access.Guard{Store: cfg.Access, Limiter: limiter, Usage: s.Usage, Now: cfg.Now, Log: cfg.Log}
	s.Outbox = access.NewOutbox(cfg.Mail, cfg.Mailer, cfg.Log)
	// One gate and one lockout for both ways of signing in, so that their hashes share one bound.
	s.Hashes = access.NewHashGate(cfg.PasswordHashConcurrency)
	s.Access = &access.Service{Store: cfg.Access, Hasher: cfg.Hasher, Hashes: s.Hashes, Lockout: cfg.Lockout, Now: cfg.Now, Log: cfg.Log,
		PortalURL: cfg.PortalURL, Changed: func(keyID string) { s.Guard.Forget(keyID); s.Outbox.Notify() }}
	tokens := &access.TokenService{Store: cfg.Access, Hasher: cfg.Hasher, Hashes: s.Hashes, Lockout: cfg.Lockout, Now: cfg.Now, Log: cfg.Log,
		Revoked: s.Guard.ForgetFamily, Lifetimes: cfg.Tokens}
	cfg.Stores.Access = cfg.Access
	cfg.Stores.UsageToday = func(ctx context.Context, subs []string) ([]int64, error) {
		return s.Usage.Today(ctx, subs, cfg.Now().UTC().Format(flightgraph.DateLayout))
	}
	s.cfg = cfg
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flightgraph_http_requests_total", Help: "HTTP requests by route, method and status code.",
	}, []string{"route", "method", "code"})
	s.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "flightgraph_http_request_duration_seconds", Help: "HTTP request durations by route.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"route", "method"})
	cfg.Registry.MustRegister(s.requests, s.duration)
	countFallbacks(cfg.Registry, limiter, "flightgraph_limiter_fallbacks_total",
		"Limit decisions this replica made on its own because the shared limiter (Redis) failed.")
	countFallbacks(cfg.Registry, cfg.Lockout, "flightgraph_signin_lockout_fallbacks_total",
		"Sign-in attempts this replica counted on its own because the shared lockout (Redis) failed.")
	cfg.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "flightgraph_password_hashes_total",
		Help: "Password hashes (argon2id) computed by sign-ins, password grants and sign-ups.",
	}, func() float64 { return float64(s.Hashes.Computed()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "flightgraph_password_hashes_waiting",
			Help: "Password hashes waiting for one of the --password-hash-concurrency slots.",
		}, func() float64 { return float64(s.Hashes.Waiting()) }))

	mux := http.NewServeMux()
	mux.Handle("/graphql", s.graphQL())
	mux.Handle("/oauthcust/oauth/token", tokens)
	api := &rest.API{Travel: s.travel, Guard: s.Guard, Log: cfg.Log, Now: cfg.Now, Version: cfg.Version, BuildTime: cfg.BuildTime}
	api.Register(mux)
	mux.Handle("GET /openapi.json", api.OpenAPIHandler())
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{Registry: cfg.Registry}))
	// Any other path is the original's unknown URL, in the REST error shape.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		api.Error(w, r, flightgraph.Errorf(flightgraph.ECodeUnknownPath, "The requested URL %s does not exist.", r.URL.Path))
	})
	// Outermost first: request id and timeout, then metrics and the access log.
	s.handler = s.withRequestID(s.observe(mux))
	return s
}

// countFallbacks serves, as the counter name, how many decisions v made on its own while its
// shared store failed, if v is a fallback that counts them.
func countFallbacks(reg *prometheus.Registry, v any, name, help string) {
	if f, ok := v.(interface{ Fallbacks() int64 }); ok {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f.Fallbacks()) }))
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// graphQL is /graphql: the access guard (products from the operation's root fields), then the
// request's dataloaders, then gqlgen.
func (s *Server) graphQL() http.Handler {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &resolvers.Resolver{Travel: s.travel, Access: s.Access, Now: s.cfg.Now}})
	apq := lru.New[string](1000)
	h := handler.New(schema)
	h.AddTransport(transport.Options{})
	h.AddTransport(transport.GET{})
	h.AddTransport(graph.POST{})
	h.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	h.Use(extension.Introspection{})
	h.Use(extension.AutomaticPersistedQuery{Cache: apq})
	h.Use(extension.FixedComplexityLimit(MaxComplexity))
	h.AroundOperations(graph.PlanPrefetch(schema.Schema()))
	h.SetErrorPresenter(graph.ErrorPresenter(s.cfg.Log))
	h.SetRecoverFunc(graph.Recover(s.cfg.Log))
	classify := graph.NewClassifier(schema.Schema(), apq).Classify
	return s.Guard.Middleware(classify, graph.ErrorWriter(s.cfg.Log))(graph.Middleware(s.cfg.Stores, s.cfg.LoaderWait, h))
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": s.cfg.Version})
}

// readyz answers 503 while the database does not answer, so a load balancer stops sending.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.cfg.DB.Ping(ctx); err != nil {
		s.cfg.Log.Warn("not ready", "err", err)
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
		ctx, cancel := context.WithTimeout(flightgraph.WithRequestID(r.Context(), id), RequestTimeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe counts and times requests by the mux pattern that served them (never the raw path,
// which would make one series per flight id) and writes the access log.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		route := r.Pattern
		if route == "" || route == "/" {
			route = "unmatched"
		}
		elapsed := time.Since(start)
		s.requests.WithLabelValues(route, r.Method, strconv.Itoa(sw.status)).Inc()
		s.duration.WithLabelValues(route, r.Method).Observe(elapsed.Seconds())
		s.cfg.Log.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", sw.status), slog.Duration("elapsed", elapsed), slog.String("requestId", flightgraph.RequestIDFromContext(r.Context())))
	})
}

// Run serves on ln until ctx is done, then shuts down gracefully: it stops accepting, lets
// requests in flight finish for up to grace, and returns.
func (s *Server) Run(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      RequestTimeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// Background work of the access core: usage counts to the store, mail to the server.
	bg, stopBg := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { s.Usage.Run(bg, 5*time.Second) })
	wg.Go(func() { s.Outbox.Run(bg, 10*time.Second) })
	defer func() { stopBg(); wg.Wait() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.cfg.Log.Info("shutting down", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
