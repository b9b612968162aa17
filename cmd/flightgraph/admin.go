package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/store"
)

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	c := flags(fs)
	if err := parse(fs, args, getenv, stderr); err != nil {
		return err
	}
	db, err := c.open(ctx, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	before, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	after, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s schema at version %d (was %d)\n", db.Dialect(), after, before)
	return nil
}

func seed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	c := flags(fs)
	fs.Int64Var(&c.seed, "seed", dataset.DefaultSeed, "seed of the generator: the same seed gives the same data (FLIGHTGRAPH_SEED)")
	fs.IntVar(&c.scale, "scale", 1, fmt.Sprintf("multiply the network, 1 to %d; 10 gives over a million flights (FLIGHTGRAPH_SCALE)", dataset.MaxScale))
	var back, ahead int
	fs.IntVar(&back, "days-back", dataset.DaysBack, "materialise flights from this many days before today")
	fs.IntVar(&ahead, "days-ahead", dataset.DaysAhead, "materialise flights up to this many days after today")
	if err := parse(fs, args, getenv, stderr); err != nil {
		return err
	}
	if c.scale < 1 || c.scale > dataset.MaxScale {
		return fmt.Errorf("--scale: scale must be between 1 and %d, got %d", dataset.MaxScale, c.scale)
	}
	opts := dataset.Options{Seed: c.seed, Scale: c.scale, DaysBack: back, DaysAhead: ahead}
	if err := opts.Validate(); err != nil {
		return err
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	db, err := c.open(ctx, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	start := time.Now()
	st, err := dataset.Seed(ctx, store.NewDatasetStore(db), opts, time.Now(), log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seeded %s: %d flights (%d legs) over %d dates in %s\n", db.Dialect(), st.Flights, st.Legs, st.Dates, time.Since(start).Round(time.Millisecond))
	return nil
}
