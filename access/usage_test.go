package access_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// demoSubscription seeds the catalogue and the demo accounts in db, and returns the id of the
// demo key's subscription to the API.
func demoSubscription(t *testing.T, db *store.DB, api string) string {
	t.Helper()
	ctx := context.Background()
	svc := &access.Service{Store: store.NewAccessStore(db), Hasher: access.PasswordHasher{Time: 1, Memory: 64, Threads: 1}, Now: db.Now}
	if err := svc.SyncCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	demo, err := svc.SeedDemo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ka, err := store.NewAccessStore(db).KeyAccess(ctx, access.HashCredential(demo.APIKey))
	if err != nil {
		t.Fatal(err)
	}
	return ka.Products[api].SubscriptionID
}

// failingOnce is the real access store whose first AddUsage fails, as a database outage would.
type failingOnce struct {
	flightgraph.AccessStore
	failed bool
}

func (f *failingOnce) AddUsage(ctx context.Context, day string, calls map[string]int64) error {
	if !f.failed {
		f.failed = true
		return errors.New("database down")
	}
	return f.AccessStore.AddUsage(ctx, day, calls)
}

// TestUsageSurvivesAFailedFlush: counts a flush could not store stay pending and are stored by
// the next one; nothing is lost or counted twice.
func TestUsageSurvivesAFailedFlush(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		sub := demoSubscription(t, db, "flightstatus")
		u := &access.UsageRecorder{Store: &failingOnce{AccessStore: store.NewAccessStore(db)}}
		for i := 0; i < 3; i++ {
			u.Add(sub, "2026-11-22")
		}
		if err := u.Flush(ctx); err == nil {
			t.Fatal("the failing flush reported no error")
		}
		u.Add(sub, "2026-11-22")
		if err := u.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		stored, err := store.NewAccessStore(db).UsageOn(ctx, []string{sub}, "2026-11-22")
		if err != nil || stored[0] != 4 {
			t.Fatalf("stored %v (%v), want 4", stored, err)
		}
		if today, err := u.Today(ctx, []string{sub}, "2026-11-22"); err != nil || today[0] != 4 {
			t.Fatalf("today %v (%v), want 4: counted twice?", today, err)
		}
	})
}
