package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/app"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/tracing"
)

// defaultMetricsAddr is --metrics-addr's default: loopback, on the port OpenTelemetry's
// Prometheus exporter uses.
const defaultMetricsAddr = "127.0.0.1:9464"

// serveFlags declares the flags of serve on fs.
func serveFlags(fs *flag.FlagSet) *config {
	c := flags(fs)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on (FLIGHTGRAPH_ADDR)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", defaultMetricsAddr, "address to serve GET /metrics, /healthz and /readyz on, apart from the API and its connection caps; empty to serve none. When the default is taken (another flightgraph on the host), serve goes on without; a taken address set explicitly is an error (FLIGHTGRAPH_METRICS_ADDR)")
	fs.IntVar(&c.conns.Max, "max-conns", 0, "the most connections the API listener holds open; one over it is reset as it is accepted; 0 for the file limit less a reserve, at most 20000 (FLIGHTGRAPH_MAX_CONNS)")
	fs.IntVar(&c.conns.PerAddress, "max-conns-per-address", server.DefaultMaxConnsPerAddress, "the most connections one client address (IPv4 host, IPv6 /64) holds open; 0 for no cap of its own, e.g. behind a proxy (FLIGHTGRAPH_MAX_CONNS_PER_ADDRESS)")
	fs.DurationVar(&c.conns.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "how long a keep-alive connection may wait for its next request (FLIGHTGRAPH_IDLE_TIMEOUT)")
	fs.DurationVar(&c.conns.PressureIdleTimeout, "pressure-idle-timeout", server.DefaultPressureIdleTimeout, "how long it may while more than half of --max-conns are open (FLIGHTGRAPH_PRESSURE_IDLE_TIMEOUT)")
	fs.DurationVar(&c.loaderWait, "loader-wait", graph.DefaultLoaderWait, "how long dataloaders collect keys (FLIGHTGRAPH_LOADER_WAIT)")
	fs.DurationVar(&c.referenceTTL, "reference-ttl", store.DefaultSnapshotTTL, "how long the in-memory snapshot of places, fleet and carriers is trusted; 0 reads them from the database on every request (FLIGHTGRAPH_REFERENCE_TTL)")
	fs.DurationVar(&c.rollEvery, "roll-every", time.Hour, "how often to materialise the flights of the moving window; 0 never (FLIGHTGRAPH_ROLL_EVERY)")
	fs.StringVar(&c.redisURL, "redis-url", "", "redis://… to share limits between replicas; empty for in-process limits (FLIGHTGRAPH_REDIS_URL)")
	fs.BoolVar(&c.limiterLeases, "limiter-leases", true, "with --redis-url, lease places to this replica for plans of 256 calls a second or more, so that most of their calls are decided without a round trip; false while replicas of a version before leases still run, which do not count them (FLIGHTGRAPH_LIMITER_LEASES)")
	fs.StringVar(&c.smtpURL, "smtp-url", "", "smtp://user:pass@host:587?from=… to deliver mail; empty to write mail to the log (FLIGHTGRAPH_SMTP_URL)")
	fs.StringVar(&c.publicURL, "public-url", "", "the URL people reach this service at, for the links in its e-mails, e.g. https://developer.example.com; empty for http://<addr> (FLIGHTGRAPH_PUBLIC_URL)")
	fs.StringVar(&c.offerKey, "offer-key", "", "base64 of 32 or more random bytes that sign offer ids and key the HMACs of mail recipients, the same on every replica; empty on the embedded store for <data-dir>/offer-key, made on first start; required with PostgreSQL (FLIGHTGRAPH_OFFER_KEY)")
	fs.DurationVar(&c.mailRetention, "mail-retention", access.DefaultMailRetention, "how long the outbox keeps a delivered or given-up mail's trace (no body, the recipient hashed) before deleting it (FLIGHTGRAPH_MAIL_RETENTION)")
	fs.BoolVar(&c.demo, "demo", false, "create demo accounts and a demo key if there are none (always on the embedded store's first start) (FLIGHTGRAPH_DEMO)")
	fs.DurationVar(&c.tokens.ClientCredentialsTTL, "token-ttl", access.DefaultClientCredentialsTTL, "lifetime of client-credentials access tokens (FLIGHTGRAPH_TOKEN_TTL)")
	fs.DurationVar(&c.tokens.PasswordTTL, "password-token-ttl", access.DefaultPasswordTTL, "lifetime of password-grant access tokens (FLIGHTGRAPH_PASSWORD_TOKEN_TTL)")
	fs.DurationVar(&c.tokens.RefreshTTL, "refresh-token-ttl", access.DefaultRefreshTTL, "lifetime of refresh tokens (FLIGHTGRAPH_REFRESH_TOKEN_TTL)")
	fs.DurationVar(&c.requestTimeout, "request-timeout", server.DefaultRequestTimeout, "the time one request may work; its deadline stops resolvers and database calls (FLIGHTGRAPH_REQUEST_TIMEOUT)")
	fs.DurationVar(&c.drain, "drain-period", 5*time.Second, "on SIGTERM, how long /readyz answers 503 while requests are still served, before the listener closes; Ctrl-C at a terminal skips it when no request is in flight (FLIGHTGRAPH_DRAIN_PERIOD)")
	fs.BoolVar(&c.warmFares, "warm-fares", true, "compute the hubs' inspirations of this month and the next in the background at start, and keep the fare index warm (FLIGHTGRAPH_WARM_FARES)")
	fs.IntVar(&c.responseCacheMB, "response-cache-mb", live.DefaultCacheBytes>>20, "MiB of memory for the response cache: the public answers many callers read (boards, a flight's status, airports), per audience and point of sale, each kept up to its max-age and evicted as soon as the status feed changes a flight it shows, and heavy searches (inspiration, calendars, deals) for the second they were quoted in, in a quarter of it; 0 turns it off (FLIGHTGRAPH_RESPONSE_CACHE_MB)")
	fs.IntVar(&c.flightCacheMB, "flight-cache-mb", live.DefaultFlightCacheBytes>>20, "MiB of memory for the flight cache: each flight read by id (a flight's status, an offer's segments, _entities) with its legs, evicted as soon as the status feed changes it and kept at most its status's max-age, so that reading one flight seldom asks the store; 0 turns it off (FLIGHTGRAPH_FLIGHT_CACHE_MB)")
	fs.IntVar(&c.heavyConcurrency, "heavy-concurrency", 0, "heavy calls (inspirations, deals, calendars) run at once; 0: half the CPUs, at least one (FLIGHTGRAPH_HEAVY_CONCURRENCY)")
	fs.DurationVar(&c.queueWait, "queue-wait", access.DefaultQueueWait, "how long a heavy call waits for a slot before it is refused, uncharged, with 503 or 429 and Retry-After (FLIGHTGRAPH_QUEUE_WAIT)")
	fs.IntVar(&c.hashConcurrency, "password-hash-concurrency", access.DefaultHashConcurrency, "password hashes (argon2id, 19 MiB each) computed at once by sign-ins and password grants; the others wait (FLIGHTGRAPH_PASSWORD_HASH_CONCURRENCY)")
	fs.IntVar(&c.mailPerMinute, "mail-per-minute", access.DefaultMailLimits.ReplicaPerMinute, "mails this replica queues in a minute, for everyone together; past it, what would mail answers 429 MAIL_429.000 (FLIGHTGRAPH_MAIL_PER_MINUTE)")
	fs.StringVar(&c.corsOrigins, "cors-origins", "", "comma-separated origins (https://app.example.com) whose pages may call the APIs across origins; empty or * for any origin (FLIGHTGRAPH_CORS_ORIGINS)")
	fs.DurationVar(&c.grace, "shutdown-grace", 15*time.Second, "time requests in flight get to finish on shutdown (FLIGHTGRAPH_SHUTDOWN_GRACE)")
	fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", "", "base URL of an OTLP/HTTP receiver (an OpenTelemetry collector, e.g. http://localhost:4318) to export traces to, at <url>/v1/traces; empty for the standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, and with neither, no tracing at all (FLIGHTGRAPH_OTLP_ENDPOINT)")
	return c
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c := serveFlags(fs)
	fs.Usage = func() { printHelp(fs.Output()) }
	if err := parse(fs, args, getenv, stderr); err != nil {
		return err
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	if c.heavyConcurrency < 0 {
		return fmt.Errorf("--heavy-concurrency %d: want 0 (the default) or more", c.heavyConcurrency)
	}
	if c.hashConcurrency < 1 {
		return fmt.Errorf("--password-hash-concurrency %d: want 1 or more", c.hashConcurrency)
	}
	if c.mailPerMinute < 1 {
		return fmt.Errorf("--mail-per-minute %d: want 1 or more", c.mailPerMinute)
	}
	if c.requestTimeout <= 0 {
		return fmt.Errorf("--request-timeout %v: want a positive duration", c.requestTimeout)
	}
	if c.queueWait <= 0 || c.queueWait >= c.requestTimeout {
		return fmt.Errorf("--queue-wait %s: want a positive duration under --request-timeout (%s)", c.queueWait, c.requestTimeout)
	}
	if err := checkConns(c.conns); err != nil {
		return err
	}
	if c.mailRetention <= 0 {
		return fmt.Errorf("--mail-retention %v: want a positive duration", c.mailRetention)
	}
	corsOrigins, err := server.ParseOrigins(c.corsOrigins)
	if err != nil {
		return fmt.Errorf("--cors-origins: %w", err)
	}
	if c.publicURL != "" {
		u, err := url.Parse(c.publicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("--public-url %q: want an http:// or https:// URL with a host and no query, e.g. https://developer.example.com", c.publicURL)
		}
	}
	offerKey, err := c.loadOfferKey()
	if err != nil {
		return err
	}
	tracer, err := c.tracer(ctx, getenv, log)
	if err != nil {
		return err
	}
	if tracer != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracing.ShutdownTimeout)
			defer cancel()
			if err := tracer.Shutdown(sctx); err != nil {
				log.Warn("tracing: the last spans were not exported", "err", err)
			}
		}()
	}
	// Bad URLs are refused before any work: opening and seeding a store takes seconds.
	var (
		mailer     access.Mailer
		newLimiter func(access.DayUsage) access.Limiter
		lockout    access.Lockout
		mailCounts access.Lockout
	)
	if c.smtpURL != "" {
		m, err := access.NewSMTPMailer(c.smtpURL)
		if err != nil {
			return fmt.Errorf("--smtp-url: %w", err)
		}
		mailer = m
	}
	if c.redisURL != "" {
		opts, err := redis.ParseURL(c.redisURL)
		if err != nil {
			// The parser's message may quote the URL, password and all.
			return fmt.Errorf("--redis-url %s is not a redis:// or rediss:// URL", redact(c.redisURL))
		}
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		newLimiter = func(usage access.DayUsage) access.Limiter {
			shared := access.NewRedisLimiter(rdb, "fg:", usage)
			if !c.limiterLeases {
				shared.NoLeases()
			}
			return access.NewFallback(shared, access.NewMemoryLimiter(usage, time.Now), log)
		}
		lockout = access.NewLockoutFallback(access.NewRedisLockout(rdb, "fg:login:"), access.NewMemoryLockout(time.Now), log)
		mailCounts = access.NewMailCountsFallback(access.NewRedisLockout(rdb, "fg:mail:"), access.NewMemoryLockout(time.Now), log)
	}
	gcPercent, memLimit := server.TuneRuntime(getenv)
	files, err := server.RaiseFileLimit()
	if err != nil {
		log.Warn("could not raise the limit of open files to its hard limit", "limit", files, "err", err)
	}
	if c.conns.Max == 0 {
		c.conns.Max = server.DefaultMaxConns(files)
	} else if files > 0 && uint64(c.conns.Max) > files {
		log.Warn("--max-conns is over the limit of open files: accept fails with 'too many open files' before the cap is reached",
			"maxConns", c.conns.Max, "openFiles", files)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	start := time.Now()
	// The listeners open before the store, so that a taken address is said at once, not after
	// the seconds a first start spends on the data set; connections meanwhile wait in the
	// listen queue.
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	metricsLn, err := listenMetrics(c.metricsAddr, setExplicitly(fs, "metrics-addr"), log)
	if err != nil {
		ln.Close()
		return err
	}
	closeListeners := func() {
		ln.Close()
		if metricsLn != nil {
			metricsLn.Close()
		}
	}
	db, err := c.open(ctx, reg)
	if err != nil {
		closeListeners()
		return err
	}
	defer db.Close()
	if err := prepare(ctx, c, db, log); err != nil {
		closeListeners()
		return err
	}
	var (
		traceWork     func(context.Context, string) (context.Context, func(error))
		traceRequests func(http.Handler) http.Handler
	)
	if tracer != nil {
		db.OnStatement, traceWork, traceRequests = tracer.Statements(db.Dialect()), tracer.Work, tracer.Handler
	}
	svc := app.New(app.Config{
		Log: log, Stores: app.StoresOf(db), SnapshotTTL: c.referenceTTL,
		PortalURL: portalURL(c.publicURL, ln.Addr()), OfferKey: offerKey, MailRetention: c.mailRetention,
		Tokens: c.tokens, Mailer: mailer, NewLimiter: newLimiter,
		// The lockout counts failed sign-ins in the limiter's Redis, when there is one.
		PasswordHashConcurrency: c.hashConcurrency, Lockout: lockout,
		MailCounts: mailCounts, MailLimits: access.MailLimits{ReplicaPerMinute: c.mailPerMinute},
		AccessFeed: accessFeed(db, log), EventFeed: store.NewEventFeed(db), HeavyConcurrency: c.heavyConcurrency, QueueWait: c.queueWait,
		Trace: traceWork, WarmFares: c.warmFares, ResponseCacheBytes: c.responseCacheMB << 20, FlightCacheBytes: c.flightCacheMB << 20,
	})
	ver, built := buildInfo()
	srv := server.New(server.Config{Registry: reg, DB: db, Version: ver, BuildTime: built, LoaderWait: c.loaderWait,
		RequestTimeout: c.requestTimeout, Conns: c.conns, CORSOrigins: corsOrigins, Trace: traceRequests}, svc)
	if err := srv.Access.SyncCatalogue(ctx); err != nil {
		closeListeners()
		return fmt.Errorf("sync the API catalogue: %w", err)
	}
	// The embedded store is for trying it out: it gets the demo accounts whenever it has none
	// (its first start, or after migrate and seed made it); PostgreSQL only when asked.
	if db.Dialect() == store.SQLite || c.demo {
		if err := demo(ctx, srv.Access, c, stdout, log); err != nil {
			closeListeners()
			return err
		}
	}
	credentials := filepath.Join(c.dataDir, "demo-credentials.json")
	if _, err := os.Stat(credentials); err != nil || c.databaseURL != "" && !c.demo {
		credentials = "" // none, or another store's
	}
	if c.rollEvery > 0 {
		// The embedded store rolled its window in prepare; PostgreSQL rolls it now, in the background.
		go keepRolling(ctx, db, c.rollEvery, db.Dialect() == store.Postgres, log)
	}
	base := "http://" + ln.Addr().String()
	log.Info("flightgraph listening", "url", base, "portal", base+"/portal", "playground", base+"/playground", "graphql", base+"/graphql",
		"store", db.Dialect(), "version", ver,
		"startup", time.Since(start).Round(time.Millisecond), "gogc", gcPercent, "memoryLimitMiB", memLimit>>20,
		"openFiles", files, "maxConns", c.conns.Max, "maxConnsPerAddress", c.conns.PerAddress)
	if metricsLn != nil {
		log.Info("metrics and probes listening", "url", "http://"+metricsLn.Addr().String()+"/metrics",
			"probes", "http://"+metricsLn.Addr().String()+"/healthz")
		fmt.Fprintf(stdout, "metrics on http://%s/metrics\n", metricsLn.Addr())
	}
	banner(stdout, base, credentials)
	return srv.Run(ctx, ln, metricsLn, server.Shutdown{Drain: c.drain, Grace: c.grace,
		Interactive: func() bool { return errors.Is(context.Cause(ctx), errInteractiveStop) }})
}

// banner tells a person who started the server where to go: the portal, the playground and the
// GraphQL endpoint at the address it listens on, and the file with the demo accounts (empty for
// none). It names the file, never what is in it: the passwords go only there (see demo).
func banner(w io.Writer, base, credentials string) {
	fmt.Fprintf(w, "flightgraph listening on %s\n", base)
	fmt.Fprintf(w, "  portal      %s/portal\n", base)
	fmt.Fprintf(w, "  playground  %s/playground\n", base)
	fmt.Fprintf(w, "  GraphQL     %s/graphql\n", base)
	if credentials != "" {
		fmt.Fprintf(w, "  demo accounts, API key and secret: %s (readable by you only)\n", credentials)
	}
}

// setExplicitly reports whether the flag name was set, by an argument or by its FLIGHTGRAPH_*
// variable (parse sets those through fs.Set too), rather than left at its default.
func setExplicitly(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// listenMetrics opens the metrics listener at addr; "" is none. Metrics have a listener of their
// own, loopback by default, so that the API's clients never see them.
//
// When addr is the default, left so, and another process holds it (a second flightgraph on a
// developer's machine), the server goes on without metrics rather than not at all, and says so.
// It does not move to a free port instead: nothing would scrape or probe a port picked at random,
// while whatever scrapes the default would go on reaching the other process, so metrics there
// would only seem served; the API's listener answers /healthz and /readyz all the same. An
// address set explicitly that is taken stays an error: whoever set it means to scrape it.
func listenMetrics(addr string, explicit bool, log *slog.Logger) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		return ln, nil
	case !explicit && errors.Is(err, syscall.EADDRINUSE):
		log.Warn("the default metrics address is taken, most likely by another flightgraph: serving no metrics; "+
			"/healthz and /readyz answer on the API's address. Set --metrics-addr (FLIGHTGRAPH_METRICS_ADDR) to a free address for metrics, or to empty for none",
			"metricsAddr", addr, "err", err)
		return nil, nil
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("--metrics-addr %s is taken by another process: choose a free address, or --metrics-addr= for no metrics: %w", addr, err)
	}
	return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
}

// tracer returns the tracer that exports spans to --otlp-endpoint, or to the endpoint of the
// standard OTEL_* variables; nil when neither names one (or OTEL_SDK_DISABLED=true,
// OTEL_TRACES_EXPORTER=none): then nothing traces, and nothing on the way of a request costs
// anything for it. The SDK reports the exports that fail through the log, at WARN.
func (c *config) tracer(ctx context.Context, getenv func(string) string, log *slog.Logger) (*tracing.Tracer, error) {
	want, err := tracing.Wanted(c.otlpEndpoint, getenv)
	if err != nil || !want {
		return nil, err
	}
	endpoint := c.otlpEndpoint
	if endpoint != "" {
		if endpoint, err = tracing.TracesURL(endpoint); err != nil {
			return nil, fmt.Errorf("--otlp-endpoint: %w", err)
		}
	} else {
		endpoint = cmp.Or(getenv(tracing.EnvTracesEndpoint), getenv(tracing.EnvEndpoint)+" (+/v1/traces)")
	}
	ver, _ := buildInfo()
	t, err := tracing.New(ctx, tracing.Config{Endpoint: c.otlpEndpoint, Version: ver})
	if err != nil {
		return nil, err
	}
	// The SDK's one error handler is process-wide; the process has one tracer.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing: the OTLP export failed", "err", err) }))
	log.Info("tracing: spans are exported over OTLP/HTTP", "endpoint", redact(endpoint))
	return t, nil
}

// checkConns refuses connection limits that make no sense.
func checkConns(l server.ConnLimits) error {
	switch {
	case l.Max < 0:
		return fmt.Errorf("--max-conns %d: want 0 (from the file limit) or more", l.Max)
	case l.PerAddress < 0:
		return fmt.Errorf("--max-conns-per-address %d: want 0 (no cap of its own) or more", l.PerAddress)
	case l.IdleTimeout <= 0:
		return fmt.Errorf("--idle-timeout %v: want a positive duration", l.IdleTimeout)
	case l.PressureIdleTimeout <= 0 || l.PressureIdleTimeout > l.IdleTimeout:
		return fmt.Errorf("--pressure-idle-timeout %v: want a positive duration, at most --idle-timeout (%v)", l.PressureIdleTimeout, l.IdleTimeout)
	}
	return nil
}

// portalURL is where the links of e-mails send people: the portal under the public URL, or under
// the listen address when none is set.
func portalURL(public string, addr net.Addr) string {
	if public == "" {
		public = "http://" + addr.String()
	}
	return strings.TrimRight(public, "/") + "/portal"
}

// accessFeed is the feed of other replicas' changes to access: PostgreSQL's LISTEN/NOTIFY, and
// nothing for the embedded store, which one process serves.
func accessFeed(db *store.DB, log *slog.Logger) flightgraph.AccessFeed {
	if db.Dialect() == store.Postgres {
		return store.NewAccessFeed(db, log)
	}
	return nil
}

// prepare brings the store up to date before serving. The embedded store migrates and seeds itself; PostgreSQL is migrated and
// seeded by the migrate and seed commands, so that replicas never race to do it, and serve only
// checks it.
func prepare(ctx context.Context, c *config, db *store.DB, log *slog.Logger) error {
	ds := store.NewDatasetStore(db)
	if db.Dialect() == store.SQLite {
		if err := db.Migrate(ctx); err != nil {
			return err
		}
		loaded, st, err := dataset.Ensure(ctx, ds, dataset.Options{Seed: dataset.DefaultSeed, Scale: 1}, time.Now(), log)
		if err != nil {
			return fmt.Errorf("load demo data: %w", err)
		}
		if loaded {
			log.Info("demo data set created", "dir", c.dataDir, "flights", st.Flights)
		}
		return nil
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if v == 0 {
		return errors.New("the PostgreSQL database has no schema: run 'flightgraph migrate' and 'flightgraph seed' first")
	}
	if latest := store.LatestVersion(db.Dialect()); v < latest {
		return fmt.Errorf("the PostgreSQL schema is at version %d, this build needs %d: run 'flightgraph migrate'", v, latest)
	}
	if st, err := ds.DatasetState(ctx); err == nil && st == nil {
		log.Warn("the database holds no data set: run 'flightgraph seed'")
	}
	return nil
}

// loadOfferKey decodes --offer-key; without one, on the embedded store, it reads
// <data dir>/offer-key, or makes it (readable by the owner only) on the first start. PostgreSQL
// means replicas, which must share the key: there it is required.
func (c *config) loadOfferKey() ([]byte, error) {
	text, path := c.offerKey, filepath.Join(c.dataDir, "offer-key")
	if text == "" && c.databaseURL != "" {
		return nil, errors.New("--offer-key (FLIGHTGRAPH_OFFER_KEY) is required with PostgreSQL: every replica signs and reads offer ids with it; make one with: head -c 32 /dev/urandom | base64")
	}
	if text == "" {
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			key := make([]byte, 32)
			rand.Read(key)
			text = base64.StdEncoding.EncodeToString(key)
			if err := os.MkdirAll(c.dataDir, 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, []byte(text+"\n"), 0o600); err != nil {
				return nil, fmt.Errorf("write the offer key: %w", err)
			}
		case err != nil:
			return nil, fmt.Errorf("read the offer key: %w", err)
		default:
			text = string(b)
		}
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("the offer key (--offer-key or %s) must be base64 of 32 or more bytes", path)
	}
	return key, nil
}

// demo creates the demo accounts and key, prints them and writes them to
// <data dir>/demo-credentials.json, readable by the owner only. Demo accounts that exist already
// are left alone.
func demo(ctx context.Context, svc *access.Service, c *config, stdout io.Writer, log *slog.Logger) error {
	creds, err := svc.SeedDemo(ctx)
	if flightgraph.ErrorCode(err) == flightgraph.ECodeConflict {
		log.Info("demo accounts exist already", "file", filepath.Join(c.dataDir, "demo-credentials.json"))
		return nil
	} else if err != nil {
		return err
	}
	body, _ := json.MarshalIndent(creds, "", "  ")
	if err := os.MkdirAll(c.dataDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(c.dataDir, "demo-credentials.json")
	if err := os.WriteFile(path, append(body, '\n'), 0o600); err != nil {
		return fmt.Errorf("write demo credentials: %w", err)
	}
	// The file is the only place the passwords go: a log is read by more people than the data
	// folder, kept longer, and shipped elsewhere.
	fmt.Fprintf(stdout, "Demo accounts created: their e-mails, passwords, key and secret are in %s (readable by you only)\n", path)
	return nil
}

// buildInfo is the binary's version and when it was built: its commit's time, else its file's
// modification time.
func buildInfo() (string, time.Time) {
	v, at := versionInfo()
	if !at.IsZero() {
		return v, at
	}
	return v, fileTime()
}

func fileTime() time.Time {
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			return fi.ModTime()
		}
	}
	return time.Now()
}

// keepRolling moves the window of materialised flights as the days pass: at once if now, then
// every interval. On PostgreSQL it runs in the background, so a replica starts serving at once;
// two replicas rolling the same date conflict on its key, one transaction fails whole, and the
// next roll finds the date done.
func keepRolling(ctx context.Context, db *store.DB, every time.Duration, now bool, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	if !now {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	for {
		if _, err := dataset.Roll(ctx, store.NewDatasetStore(db), dataset.Window(time.Now()), log); err != nil && ctx.Err() == nil {
			log.Warn("could not materialise the flight window", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
