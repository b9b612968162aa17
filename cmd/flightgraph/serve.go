package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
)

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c := flags(fs, getenv)
	fs.StringVar(&c.addr, "addr", envOr(getenv, "FLIGHTGRAPH_ADDR", "127.0.0.1:8080"), "address to listen on (FLIGHTGRAPH_ADDR)")
	fs.DurationVar(&c.loaderWait, "loader-wait", envDuration(getenv, "FLIGHTGRAPH_LOADER_WAIT", graph.DefaultLoaderWait), "how long dataloaders collect keys (FLIGHTGRAPH_LOADER_WAIT)")
	fs.DurationVar(&c.rollEvery, "roll-every", envDuration(getenv, "FLIGHTGRAPH_ROLL_EVERY", time.Hour), "how often to materialise the flights of the moving window; 0 never (FLIGHTGRAPH_ROLL_EVERY)")
	fs.DurationVar(&c.grace, "shutdown-grace", envDuration(getenv, "FLIGHTGRAPH_SHUTDOWN_GRACE", 15*time.Second), "time requests in flight get to finish on shutdown (FLIGHTGRAPH_SHUTDOWN_GRACE)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	gcPercent, memLimit := server.TuneRuntime(getenv)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	start := time.Now()
	db, err := c.open(ctx, reg)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := prepare(ctx, c, db, log); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	srv := server.New(server.Config{
		Log: log, Registry: reg, DB: db, Version: version, LoaderWait: c.loaderWait,
		Stores: graph.Stores{Flights: store.NewFlightStore(db), Places: store.NewPlaceStore(db),
			Aircraft: store.NewAircraftStore(db), Network: store.NewNetworkStore(db)},
	})
	if c.rollEvery > 0 {
		go keepRolling(ctx, db, c.rollEvery, log)
	}
	log.Info("flightgraph listening", "url", "http://"+ln.Addr().String()+"/graphql", "store", db.Dialect(), "version", version,
		"startup", time.Since(start).Round(time.Millisecond), "gogc", gcPercent, "memoryLimitMiB", memLimit>>20)
	fmt.Fprintf(stdout, "flightgraph listening on http://%s (GraphQL at /graphql)\n", ln.Addr())
	return srv.Run(ctx, ln, c.grace)
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// prepare brings the store up to date before serving. The embedded store migrates and seeds
// itself on first start; PostgreSQL is migrated and seeded by the migrate and seed commands, so
// that replicas never race to do it, and serve only checks it and rolls the window.
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
	if st, err := ds.DatasetState(ctx); err == nil && st == nil {
		log.Warn("the database holds no data set: run 'flightgraph seed'")
	}
	return nil
}

// keepRolling moves the window of materialised flights as the days pass: at once, then every
// interval. On PostgreSQL it runs in the background, so a replica starts serving at once; two
// replicas rolling the same date conflict on its key, one transaction fails whole, and the next
// roll finds the date done.
func keepRolling(ctx context.Context, db *store.DB, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
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
