package access_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

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
			u.Add(sub, "2026-11-22", 1)
		}
		if err := u.Flush(ctx); err == nil {
			t.Fatal("the failing flush reported no error")
		}
		u.Add(sub, "2026-11-22", 1)
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

// TestUsageHistory: a subscription's history is its stored days plus the calls not stored yet,
// a day without calls 0, oldest first; its owner and operators read it, anyone else is told it
// does not exist and no one without a session reads it. The portal reaches subscriptions only
// through their owner or an operator: this is the line behind that, for a path opened by mistake.
func TestUsageHistory(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		sub := demoSubscription(t, db, "flightstatus")
		st := store.NewAccessStore(db)
		owners, err := st.SubscriptionOwners(ctx, []string{sub})
		if err != nil {
			t.Fatal(err)
		}
		owner, err := st.AccountByID(ctx, owners[0])
		if err != nil {
			t.Fatal(err)
		}
		today := time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)
		u := &access.UsageRecorder{Store: st}
		u.Add(sub, "2026-11-20", 1)
		u.Add(sub, "2026-11-20", 1)
		if err := u.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		u.Add(sub, "2026-11-20", 1) // pending on a stored day
		u.Add(sub, "2026-11-22", 1) // pending today
		u.Add(sub, "2026-11-23", 1) // tomorrow's is no part of it
		svc := &access.Service{Store: st, Usage: u, Now: func() time.Time { return today }}
		as := func(acc *flightgraph.Account) context.Context {
			return flightgraph.WithCaller(ctx, &flightgraph.Caller{Kind: flightgraph.CallerSession, Account: acc})
		}
		h, err := svc.UsageHistory(as(owner), []string{sub})
		if err != nil {
			t.Fatal(err)
		}
		days := h[0]
		if len(days) != flightgraph.MaxUsageDays || days[0].Day != "2026-08-25" {
			t.Fatalf("%d days from %s, want %d from 2026-08-25", len(days), days[0].Day, flightgraph.MaxUsageDays)
		}
		var got []string
		for _, d := range days[len(days)-4:] {
			got = append(got, fmt.Sprintf("%s=%d", d.Day, d.Calls))
		}
		if want := []string{"2026-11-19=0", "2026-11-20=3", "2026-11-21=0", "2026-11-22=1"}; !slices.Equal(got, want) {
			t.Errorf("the last days: %v, want %v", got, want)
		}

		operator := &flightgraph.Account{ID: "acc_op", Role: flightgraph.RoleOperator}
		if _, err := svc.UsageHistory(as(operator), []string{sub}); err != nil {
			t.Errorf("an operator: %v", err)
		}
		for _, c := range []struct {
			name string
			ctx  context.Context
			code string
		}{
			{"another developer", as(&flightgraph.Account{ID: "acc_other", Role: flightgraph.RoleDeveloper}), flightgraph.ECodeNotFound},
			{"a partner", as(&flightgraph.Account{ID: "acc_other", Role: flightgraph.RolePartner}), flightgraph.ECodeNotFound},
			{"no session", ctx, flightgraph.ECodeNotSignedIn},
		} {
			if _, err := svc.UsageHistory(c.ctx, []string{sub}); flightgraph.ErrorCode(err) != c.code {
				t.Errorf("%s: %v, want %s", c.name, err, c.code)
			}
			if _, err := svc.SubscriptionLimitRequests(c.ctx, []string{sub}); flightgraph.ErrorCode(err) != c.code {
				t.Errorf("%s, limit requests: %v, want %s", c.name, err, c.code)
			}
		}
		// One subscription of someone else's refuses the whole batch.
		if _, err := svc.UsageHistory(as(owner), []string{sub, "sub_none"}); flightgraph.ErrorCode(err) != flightgraph.ECodeNotFound {
			t.Errorf("a batch with a subscription not the owner's: %v", err)
		}
	})
}
