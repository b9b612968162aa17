package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
)

// startStore is what serve does before it listens: open the embedded store, migrate, and load
// the demo data set on first start or roll its window on later ones.
func startStore(b *testing.B, dir string) {
	c := &config{dataDir: dir}
	ctx := context.Background()
	db, err := c.open(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := prepare(ctx, c, db, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFirstStart measures the first embedded start: create the database, migrate, generate
// and load the demo data set with its whole window of flights.
func BenchmarkFirstStart(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		startStore(b, filepath.Join(b.TempDir(), "data"))
	}
}

// BenchmarkLaterStart measures a start on a data folder that is already filled.
func BenchmarkLaterStart(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "data")
	startStore(b, dir)
	for b.Loop() {
		startStore(b, dir)
	}
}
