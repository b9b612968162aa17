package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
)

// config is every setting, from flags first and FLIGHTGRAPH_* variables second.
type config struct {
	addr           string
	metricsAddr    string
	dataDir        string
	databaseURL    string
	dbMaxConns     int
	logFormat      string
	logLevel       string
	loaderWait     time.Duration
	referenceTTL   time.Duration
	drain          time.Duration
	requestTimeout time.Duration
	grace          time.Duration
	rollEvery      time.Duration
	redisURL       string
	limiterLeases  bool
	smtpURL        string
	publicURL      string
	offerKey       string
	mailRetention  time.Duration
	demo           bool
	tokens         access.TokenLifetimes
	// hashConcurrency bounds the password hashes computed at once.
	hashConcurrency int
	// heavyConcurrency bounds the heavy calls run at once (0: the default), queueWait their
	// wait for a slot.
	heavyConcurrency int
	warmFares        bool
	// responseCacheMB bounds the response cache in MiB; 0 turns it off.
	responseCacheMB int
	// flightCacheMB bounds the entity cache of the flights read by id in MiB; 0 turns it off.
	flightCacheMB int
	queueWait     time.Duration
	// mailPerMinute bounds the mails this replica queues in a minute.
	mailPerMinute int
	seed          int64
	scale         int

	// conns bound the API listener's connections.
	conns server.ConnLimits
	// corsOrigins are the origins whose pages may call the APIs; empty for any.
	corsOrigins string
	// otlpEndpoint is the OTLP/HTTP receiver's base URL that traces go to; empty for the
	// standard OTEL_* variables, and no tracing without them.
	otlpEndpoint string
}

// flags declares the common settings on fs; each usage names the FLIGHTGRAPH_* variable that
// also sets it (see parse).
func flags(fs *flag.FlagSet) *config {
	c := &config{}
	fs.StringVar(&c.dataDir, "data-dir", "flightgraph-data", "folder of the embedded store (FLIGHTGRAPH_DATA_DIR)")
	fs.StringVar(&c.databaseURL, "database-url", "", "postgres://… to use PostgreSQL; empty for the embedded SQLite store in --data-dir (FLIGHTGRAPH_DATABASE_URL)")
	fs.IntVar(&c.dbMaxConns, "db-max-conns", 0, "the most connections to PostgreSQL this process holds for queries, besides one per LISTEN feed; keep replicas × it under the server's max_connections; 0 for the default, 20 (FLIGHTGRAPH_DB_MAX_CONNS)")
	fs.StringVar(&c.logFormat, "log-format", "text", "text or json (FLIGHTGRAPH_LOG_FORMAT)")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error (FLIGHTGRAPH_LOG_LEVEL)")
	return c
}

// envName finds the FLIGHTGRAPH_* variable a flag's usage names.
var envName = regexp.MustCompile(`\((FLIGHTGRAPH_[A-Z_]+)\)`)

// parse sets the flags from their FLIGHTGRAPH_* variables, then from args, so that a flag beats
// its variable; a bad variable is reported as clearly as a bad flag.
func parse(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	var bad error
	fs.VisitAll(func(f *flag.Flag) {
		m := envName.FindStringSubmatch(f.Usage)
		if m == nil || bad != nil {
			return
		}
		if v := getenv(m[1]); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				bad = fmt.Errorf("%s=%q: %v", m[1], v, err)
			}
		}
	})
	if bad != nil {
		return bad
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// dsn returns the store URL: the given one, or the SQLite file in the data folder.
func (c *config) dsn() string {
	if c.databaseURL != "" {
		return c.databaseURL
	}
	return "sqlite:" + filepath.Join(c.dataDir, "flightgraph.db")
}

func (c *config) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", c.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", c.logFormat)
}

// open opens the store and counts its queries in reg.
func (c *config) open(ctx context.Context, reg *prometheus.Registry) (*store.DB, error) {
	if c.dbMaxConns < 0 {
		return nil, fmt.Errorf("--db-max-conns %d: want 0 (the default) or more", c.dbMaxConns)
	}
	db, err := store.Open(ctx, c.dsn())
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", redact(c.dsn()), err)
	}
	if c.dbMaxConns > 0 && db.Dialect() == store.Postgres {
		db.SetMaxConns(c.dbMaxConns)
	}
	if reg != nil {
		queries := prometheus.NewCounter(prometheus.CounterOpts{Name: "flightgraph_db_queries_total", Help: "SQL round trips to the store."})
		reg.MustRegister(queries)
		db.OnQuery = queries.Inc
	}
	return db, nil
}

// redact hides the password of a database URL for logs.
func redact(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			cred := dsn[i+3 : at]
			if colon := strings.Index(cred, ":"); colon >= 0 {
				return dsn[:i+3] + cred[:colon] + ":***" + dsn[at:]
			}
		}
	}
	return dsn
}
