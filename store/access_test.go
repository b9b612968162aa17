package store_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// accessFixture is a seeded access store: the catalogue, the demo accounts and the demo key with
// its approved subscriptions.
type accessFixture struct {
	st        *store.AccessStore
	developer *flightgraph.Account
	subs      []string // two of the demo key's subscriptions
}

func newAccessFixture(t *testing.T, dialect string) *accessFixture {
	t.Helper()
	db := storetest.Seeded(t, dialect, os.Getenv)
	ctx := context.Background()
	st := store.NewAccessStore(db)
	svc := &access.Service{Store: st, Hasher: access.PasswordHasher{Time: 1, Memory: 64, Threads: 1}, Now: db.Now}
	if err := svc.SyncCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	demo, err := svc.SeedDemo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ka, err := st.KeyAccess(ctx, access.HashCredential(demo.APIKey))
	if err != nil {
		t.Fatal(err)
	}
	return &accessFixture{st: st, developer: ka.Account,
		subs: []string{ka.Products["flightstatus"].SubscriptionID, ka.Products["inspire"].SubscriptionID}}
}

func (f *accessFixture) inTx(t *testing.T, fn func(tx flightgraph.AccessTx) error) {
	t.Helper()
	if err := f.st.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// TestAddUsageOfADeletedSubscription: the counts of a subscription gone since they were counted
// are dropped, and the others of the batch stored (the batch failed its foreign key on every
// flush, and the day's usage of every subscription was lost).
func TestAddUsageOfADeletedSubscription(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newAccessFixture(t, dialect)
		ctx := context.Background()
		const day = "2026-11-20"
		if err := f.st.AddUsage(ctx, day, map[string]int64{f.subs[0]: 3, "sub_deleted": 5}); err != nil {
			t.Fatalf("a batch with a deleted subscription: %v", err)
		}
		got, err := f.st.UsageOn(ctx, []string{f.subs[0], "sub_deleted"}, day)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 3 || got[1] != 0 {
			t.Errorf("stored %v, want [3 0]", got)
		}
	})
}

// TestUsageBetween: each subscription's stored days of the range, oldest first, in key order;
// the days outside the range and other subscriptions' days are left out.
func TestUsageBetween(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newAccessFixture(t, dialect)
		ctx := context.Background()
		a, b := f.subs[0], f.subs[1]
		for day, calls := range map[string]map[string]int64{
			"2026-11-19": {a: 1},
			"2026-11-20": {a: 2, b: 20},
			"2026-11-22": {a: 4},
			"2026-11-23": {a: 5, b: 50},
		} {
			if err := f.st.AddUsage(ctx, day, calls); err != nil {
				t.Fatal(err)
			}
		}
		got, err := f.st.UsageBetween(ctx, []string{b, "sub_none", a, b}, "2026-11-20", "2026-11-22")
		if err != nil {
			t.Fatal(err)
		}
		show := func(rows []*flightgraph.Usage) string {
			var s string
			for _, u := range rows {
				s += fmt.Sprintf("%s:%s=%d ", u.SubscriptionID[:4], u.Day, u.Calls)
			}
			return s
		}
		want := []string{"sub_:2026-11-20=20 ", "", "sub_:2026-11-20=2 sub_:2026-11-22=4 ", "sub_:2026-11-20=20 "}
		for i := range want {
			if show(got[i]) != want[i] {
				t.Errorf("key %d: %q, want %q", i, show(got[i]), want[i])
			}
		}
		if got[2][0].SubscriptionID != a || got[0][0].SubscriptionID != b {
			t.Error("rows attached to the wrong subscription")
		}
	})
}

// TestLimitRequestsBySubscriptions: each subscription's newest requests, at most the limit,
// newest first, in key order.
func TestLimitRequestsBySubscriptions(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newAccessFixture(t, dialect)
		ctx := context.Background()
		a, b := f.subs[0], f.subs[1]
		base := storetest.Now.UTC().Truncate(time.Second)
		f.inTx(t, func(tx flightgraph.AccessTx) error {
			for i, sub := range []string{a, a, b, a} {
				r := &flightgraph.LimitIncreaseRequest{ID: fmt.Sprintf("lim_%d", i), SubscriptionID: sub, AccountID: f.developer.ID,
					Description: "more", EstimatedPerSecond: 10, EstimatedPerDay: 1000, Status: flightgraph.LimitRequestPending,
					CreatedAt: base.Add(time.Duration(i) * time.Minute)}
				if err := tx.CreateLimitRequest(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
		got, err := f.st.LimitRequestsBySubscriptions(ctx, []string{b, a, "sub_none"}, 2)
		if err != nil {
			t.Fatal(err)
		}
		ids := func(rs []*flightgraph.LimitIncreaseRequest) []string {
			var out []string
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		for i, want := range [][]string{{"lim_2"}, {"lim_3", "lim_1"}, nil} {
			if !slices.Equal(ids(got[i]), want) {
				t.Errorf("key %d: %v, want %v", i, ids(got[i]), want)
			}
		}
	})
}

// TestSubscriptionOwners: the owner of each subscription in key order, "" for none.
func TestSubscriptionOwners(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newAccessFixture(t, dialect)
		got, err := f.st.SubscriptionOwners(context.Background(), []string{"sub_none", f.subs[1], f.subs[0]})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"", f.developer.ID, f.developer.ID}; !slices.Equal(got, want) {
			t.Fatalf("owners %v, want %v", got, want)
		}
	})
}

// TestAuditLogFilters: each filter matches exactly, an action ending in '.' as a prefix whose
// characters are all literal; filters combine; actions list each action once, in order.
func TestAuditLogFilters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newAccessFixture(t, dialect)
		ctx := context.Background()
		at := storetest.Now.UTC()
		f.inTx(t, func(tx flightgraph.AccessTx) error {
			for _, e := range []flightgraph.AuditEntry{
				{Actor: "acc_x", Action: "t.one", TargetType: "thing", TargetID: "th_1"},
				{Actor: "acc_y", Action: "t.two", TargetType: "thing", TargetID: "th_1"},
				{Actor: "acc_x", Action: "t_u.three", TargetType: "thing", TargetID: "th_2"},
				{Actor: "acc_x", Action: "tzu.four", TargetType: "other", TargetID: "th_2"},
				{Actor: "acc_x", Action: "T.five", TargetType: "thing", TargetID: "th_3"},
				{Actor: "acc_y", Action: "t.", TargetType: "thing", TargetID: "th_3"},
			} {
				e.At = at
				if err := tx.AddAudit(ctx, &e); err != nil {
					return err
				}
			}
			return nil
		})
		actions := func(fl flightgraph.AuditFilter, limit, offset int) []string {
			t.Helper()
			es, err := f.st.AuditLog(ctx, fl, limit, offset)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range es {
				out = append(out, e.Action)
			}
			return out
		}
		for _, c := range []struct {
			name string
			f    flightgraph.AuditFilter
			want []string
		}{
			{"action", flightgraph.AuditFilter{Action: "t.one"}, []string{"t.one"}},
			{"prefix", flightgraph.AuditFilter{Action: "t."}, []string{"t.", "t.two", "t.one"}},
			{"prefix with an underscore", flightgraph.AuditFilter{Action: "t_u."}, []string{"t_u.three"}},
			{"prefix with a wildcard", flightgraph.AuditFilter{Action: "%."}, nil},
			{"no such action", flightgraph.AuditFilter{Action: "t"}, nil},
			{"quote", flightgraph.AuditFilter{Action: "' OR '1'='1"}, nil},
			{"actor", flightgraph.AuditFilter{Actor: "acc_y"}, []string{"t.", "t.two"}},
			{"target", flightgraph.AuditFilter{TargetType: "thing", TargetID: "th_2"}, []string{"t_u.three"}},
			{"target id", flightgraph.AuditFilter{TargetID: "th_2"}, []string{"tzu.four", "t_u.three"}},
			{"target type", flightgraph.AuditFilter{TargetType: "other"}, []string{"tzu.four"}},
			{"all four", flightgraph.AuditFilter{Action: "t.", Actor: "acc_x", TargetType: "thing", TargetID: "th_1"}, []string{"t.one"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				if got := actions(c.f, 100, 0); !slices.Equal(got, c.want) {
					t.Errorf("%+v: %q, want %q", c.f, got, c.want)
				}
			})
		}
		if got := actions(flightgraph.AuditFilter{Actor: "acc_x"}, 2, 1); !slices.Equal(got, []string{"tzu.four", "t_u.three"}) {
			t.Errorf("a page of acc_x's: %q", got)
		}

		all, err := f.st.AuditLog(ctx, flightgraph.AuditFilter{}, 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		distinct := map[string]bool{}
		for _, e := range all {
			distinct[e.Action] = true
		}
		var want []string
		for a := range distinct {
			want = append(want, a)
		}
		got, err := f.st.AuditActions(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if sort.Strings(want); !slices.Equal(sortedCopy(got), want) || len(got) < 6 {
			t.Errorf("actions %q, want %q", got, want)
		}
		for i := 1; i < len(got); i++ {
			if got[i] == got[i-1] {
				t.Errorf("%q listed twice", got[i])
			}
		}
		if few, err := f.st.AuditActions(ctx, 3); err != nil || !slices.Equal(few, got[:3]) {
			t.Errorf("the first 3 actions: %q (%v), want %q", few, err, got[:3])
		}
	})
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// TestAccountsFilters: accounts newest first, of a role, with a part of an e-mail taken
// literally.
func TestAccountsFilters(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newAccessFixture(t, dialect)
		ctx := context.Background()
		base := f.developer.CreatedAt.UTC().Add(time.Hour).Truncate(time.Second) // after the demo accounts
		f.inTx(t, func(tx flightgraph.AccessTx) error {
			for i, a := range []struct {
				email string
				role  flightgraph.Role
			}{
				{"ann@one.example", flightgraph.RoleDeveloper},
				{"bo_b@two.example", flightgraph.RolePartner},
				{"cy@one.example", flightgraph.RoleDeveloper},
				{"dee%x@one.example", flightgraph.RoleStaff},
			} {
				if err := tx.CreateAccount(ctx, &flightgraph.Account{ID: fmt.Sprintf("acc_%d", i), Email: a.email, Name: "N", Role: a.role,
					PasswordHash: "x", CreatedAt: base.Add(time.Duration(i) * time.Minute)}); err != nil {
					return err
				}
			}
			return nil
		})
		emails := func(fl flightgraph.AccountFilter, limit, offset int) []string {
			t.Helper()
			as, err := f.st.Accounts(ctx, fl, limit, offset)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, a := range as {
				out = append(out, a.Email)
			}
			return out
		}
		for _, c := range []struct {
			name   string
			f      flightgraph.AccountFilter
			limit  int
			offset int
			want   []string
		}{
			{"newest first", flightgraph.AccountFilter{}, 3, 0, []string{"dee%x@one.example", "cy@one.example", "bo_b@two.example"}},
			{"a page", flightgraph.AccountFilter{}, 2, 1, []string{"cy@one.example", "bo_b@two.example"}},
			{"role", flightgraph.AccountFilter{Role: flightgraph.RoleDeveloper}, 10, 0, []string{"cy@one.example", "ann@one.example", f.developer.Email}},
			{"email", flightgraph.AccountFilter{Email: "one.example"}, 10, 0, []string{"dee%x@one.example", "cy@one.example", "ann@one.example"}},
			{"email in capitals", flightgraph.AccountFilter{Email: "ONE.Example"}, 10, 0, []string{"dee%x@one.example", "cy@one.example", "ann@one.example"}},
			{"role and email", flightgraph.AccountFilter{Role: flightgraph.RoleDeveloper, Email: "cy@"}, 10, 0, []string{"cy@one.example"}},
			{"percent", flightgraph.AccountFilter{Email: "%"}, 10, 0, []string{"dee%x@one.example"}},
			{"underscore", flightgraph.AccountFilter{Email: "_"}, 10, 0, []string{"bo_b@two.example"}},
			{"backslash", flightgraph.AccountFilter{Email: `\`}, 10, 0, nil},
			{"quote", flightgraph.AccountFilter{Email: "' OR '1'='1"}, 10, 0, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				if got := emails(c.f, c.limit, c.offset); !slices.Equal(got, c.want) {
					t.Errorf("%+v: %q, want %q", c.f, got, c.want)
				}
			})
		}
	})
}
