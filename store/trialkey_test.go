package store_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// trialFixture is an account with a session, an application and an active key approved for one
// product, on a fresh store.
type trialFixture struct {
	st      *store.AccessStore
	now     time.Time
	session string // the session's token hash
	key     *flightgraph.Key
	app     string
}

func newTrialFixture(t *testing.T, dialect string) *trialFixture {
	t.Helper()
	db := storetest.Open(t, dialect, os.Getenv)
	f := &trialFixture{st: store.NewAccessStore(db), now: storetest.Now.UTC().Truncate(time.Second), session: "session-hash", app: "app-1"}
	f.key = &flightgraph.Key{ID: "key-1", ApplicationID: f.app, Hint: "fgk_…", KeyHash: "key-hash", SecretHash: "key-secret-hash", Status: flightgraph.KeyActive, CreatedAt: f.now}
	f.tx(t, func(ctx context.Context, tx flightgraph.AccessTx) error {
		plan := &flightgraph.Plan{ID: "plan-1", Product: "flightstatus", Name: "Default", Limits: flightgraph.Limits{PerSecond: 5, PerDay: 5000}}
		products := []*flightgraph.Product{{Slug: "flightstatus", Name: "Flight Status", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthAPIKey}}
		decided := f.now
		for _, err := range []error{
			tx.SyncProducts(ctx, products, []*flightgraph.Plan{plan}),
			tx.CreateAccount(ctx, &flightgraph.Account{ID: "acc-1", Email: "ada@example.com", Name: "Ada", Role: flightgraph.RoleDeveloper, PasswordHash: "x", CreatedAt: f.now}),
			tx.CreateSession(ctx, f.session, "acc-1", f.now, f.now.Add(12*time.Hour)),
			tx.CreateApplication(ctx, &flightgraph.Application{ID: f.app, AccountID: "acc-1", Name: "App", Description: "d", CreatedAt: f.now, UpdatedAt: f.now}),
			tx.CreateKey(ctx, f.key),
			tx.CreateSubscription(ctx, &flightgraph.Subscription{ID: "sub-1", KeyID: f.key.ID, Product: "flightstatus", PlanID: plan.ID,
				Status: flightgraph.SubscriptionApproved, CreatedAt: f.now, DecidedAt: &decided}),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	return f
}

func (f *trialFixture) tx(t *testing.T, fn func(ctx context.Context, tx flightgraph.AccessTx) error) {
	t.Helper()
	ctx := context.Background()
	if err := f.st.InTx(ctx, func(tx flightgraph.AccessTx) error { return fn(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
}

// mint stores a trial key of the fixture's key, minted by session at the fixture's time plus
// after, lasting life, with a token issued to it; it returns the trial.
func (f *trialFixture) mint(t *testing.T, name, session string, after, life time.Duration) *flightgraph.TrialKey {
	t.Helper()
	at := f.now.Add(after)
	tk := &flightgraph.TrialKey{KeyHash: name + "-hash", SecretHash: name + "-secret-hash", KeyID: f.key.ID, SessionHash: session, CreatedAt: at, ExpiresAt: at.Add(life)}
	f.tx(t, func(ctx context.Context, tx flightgraph.AccessTx) error {
		if err := tx.CreateTrialKey(ctx, tk); err != nil {
			return err
		}
		return tx.CreateToken(ctx, &flightgraph.Token{Hash: name + "-token", Kind: flightgraph.TokenAccess, KeyID: f.key.ID, Grant: flightgraph.GrantClientCredentials,
			FamilyID: flightgraph.TrialFamily(tk.KeyHash), CreatedAt: at, ExpiresAt: tk.ExpiresAt})
	})
	return tk
}

// live reports whether the trial reads as its key at now, failing on errors other than not found.
func (f *trialFixture) live(t *testing.T, tk *flightgraph.TrialKey, now time.Time) bool {
	t.Helper()
	_, err := f.st.TrialKeyAccess(context.Background(), tk.KeyHash, now)
	if flightgraph.ErrorCode(err) == flightgraph.ECodeNotFound {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// tokenStored reports whether the token issued to a trial (mint) is stored.
func (f *trialFixture) tokenStored(t *testing.T, name string) bool {
	t.Helper()
	_, err := f.st.Token(context.Background(), name+"-token")
	if flightgraph.ErrorCode(err) == flightgraph.ECodeNotFound {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// TestTrialKeyAccess: a trial key reads as its key, with the trial's secret hash and expiry, only
// while the trial, its session and the key last; the real key reads as before.
func TestTrialKeyAccess(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newTrialFixture(t, dialect)
		ctx := context.Background()
		tk := f.mint(t, "trial", f.session, 0, 15*time.Minute)
		ka, err := f.st.TrialKeyAccess(ctx, tk.KeyHash, f.now)
		if err != nil {
			t.Fatal(err)
		}
		if ka.Key.ID != f.key.ID || ka.Key.SecretHash != tk.SecretHash || ka.TrialHash != tk.KeyHash || !ka.TrialExpiresAt.Equal(tk.ExpiresAt) ||
			ka.Application.ID != f.app || ka.Account.ID != "acc-1" || ka.Products["flightstatus"] == nil || ka.Products["flightstatus"].SubscriptionID != "sub-1" {
			t.Fatalf("the trial's access: key %+v, trial %q until %s, products %v", ka.Key, ka.TrialHash, ka.TrialExpiresAt, ka.Products)
		}
		real, err := f.st.KeyAccess(ctx, f.key.KeyHash)
		if err != nil || real.Key.SecretHash != f.key.SecretHash || real.Trial() || !real.TrialExpiresAt.IsZero() {
			t.Fatalf("the key's own access: %+v, %v", real, err)
		}
		if _, err := f.st.KeyAccess(ctx, tk.KeyHash); flightgraph.ErrorCode(err) != flightgraph.ECodeNotFound {
			t.Errorf("a trial key read as a key: %v", err)
		}
		if _, err := f.st.TrialKeyAccess(ctx, f.key.KeyHash, f.now); flightgraph.ErrorCode(err) != flightgraph.ECodeNotFound {
			t.Errorf("a key read as a trial key: %v", err)
		}
		if f.live(t, tk, tk.ExpiresAt) || !f.live(t, tk, tk.ExpiresAt.Add(-time.Microsecond)) {
			t.Error("a trial must read until, and not at, its expiry")
		}

		// Minted near its session's end, a trial ends with it.
		late := f.mint(t, "late", f.session, 12*time.Hour-5*time.Minute, 15*time.Minute)
		if want := f.now.Add(12 * time.Hour); !late.ExpiresAt.Equal(want) {
			t.Errorf("a trial minted 5 minutes before its session's end expires at %s, want %s", late.ExpiresAt, want)
		}
		err = f.st.InTx(ctx, func(tx flightgraph.AccessTx) error {
			return tx.CreateTrialKey(ctx, &flightgraph.TrialKey{KeyHash: "after", SecretHash: "x", KeyID: f.key.ID, SessionHash: f.session,
				CreatedAt: f.now.Add(12 * time.Hour), ExpiresAt: f.now.Add(12*time.Hour + 15*time.Minute)})
		})
		if flightgraph.ErrorCode(err) != flightgraph.ECodeNotFound {
			t.Errorf("a trial minted by an ended session: %v, want %s", err, flightgraph.ECodeNotFound)
		}

		// A revoked key's trial does not read.
		revoked := *f.key
		revoked.Status = flightgraph.KeyRevoked
		f.tx(t, func(ctx context.Context, tx flightgraph.AccessTx) error { return tx.UpdateKey(ctx, &revoked) })
		if f.live(t, tk, f.now) {
			t.Error("the trial of a revoked key reads")
		}
	})
}

// TestDeleteTrialKeys: the bound keeps a key's newest live trials, and the trials deleted take
// their tokens with them; a session's end takes its trials (and only its), and the application's
// deletion its keys' trials.
func TestDeleteTrialKeys(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newTrialFixture(t, dialect)
		f.tx(t, func(ctx context.Context, tx flightgraph.AccessTx) error {
			return tx.CreateSession(ctx, "other-session", "acc-1", f.now, f.now.Add(12*time.Hour))
		})
		var trials []*flightgraph.TrialKey
		for i := range 7 {
			// The first lasts a minute; the others, minted a second apart, 15.
			life := 15 * time.Minute
			if i == 0 {
				life = time.Minute
			}
			trials = append(trials, f.mint(t, fmt.Sprintf("t%d", i), f.session, time.Duration(i)*time.Second, life))
		}
		other := f.mint(t, "other", "other-session", 10*time.Second, 15*time.Minute)
		now := f.now.Add(2 * time.Minute) // t0 has expired
		var deleted int
		f.tx(t, func(ctx context.Context, tx flightgraph.AccessTx) (err error) {
			deleted, err = tx.DeleteTrialKeys(ctx, f.key.ID, 5, now)
			return err
		})
		// Of t1…t6 and other, the 5 newest live ones stay: t3…t6 and other.
		if deleted != 3 {
			t.Errorf("DeleteTrialKeys deleted %d, want 3: the expired one and the 2 oldest live ones", deleted)
		}
		for i, tk := range trials {
			if want := i >= 3; f.live(t, tk, now) != want || f.tokenStored(t, fmt.Sprintf("t%d", i)) != want {
				t.Errorf("trial t%d: live %v, token stored %v; want %v", i, f.live(t, tk, now), f.tokenStored(t, fmt.Sprintf("t%d", i)), want)
			}
		}

		// Signing out takes the session's trials and their tokens, not the other session's.
		var keys []string
		f.tx(t, func(ctx context.Context, tx flightgraph.AccessTx) (err error) {
			keys, err = tx.DeleteSession(ctx, f.session)
			return err
		})
		if !slices.Equal(keys, []string{f.key.ID}) {
			t.Errorf("DeleteSession returned keys %v, want [%s]", keys, f.key.ID)
		}
		for i, tk := range trials {
			if f.live(t, tk, now) || f.tokenStored(t, fmt.Sprintf("t%d", i)) {
				t.Errorf("trial t%d outlives its session", i)
			}
		}
		if !f.live(t, other, now) || !f.tokenStored(t, "other") {
			t.Error("another session's trial ended with this one")
		}

		// keep 0 deletes them all (a rotation, a revocation).
		f.tx(t, func(ctx context.Context, tx flightgraph.AccessTx) (err error) {
			deleted, err = tx.DeleteTrialKeys(ctx, f.key.ID, 0, now)
			return err
		})
		if deleted != 1 || f.live(t, other, now) || f.tokenStored(t, "other") {
			t.Errorf("DeleteTrialKeys keeping none deleted %d, and the last trial reads %v", deleted, f.live(t, other, now))
		}

		// The application goes with its keys' trials.
		f.mint(t, "last", "other-session", 20*time.Second, 15*time.Minute)
		f.tx(t, func(ctx context.Context, tx flightgraph.AccessTx) error { return tx.DeleteApplication(ctx, f.app) })
	})
}
