package access_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// MustMail enqueues a message to to, created at at, and leases it (as the outbox does before
// sending it) at at; it returns its id.
func (mt *mailTest) MustMail(t *testing.T, to string, at time.Time) int64 {
	t.Helper()
	mt.MustEnqueue(t, &flightgraph.Mail{To: to, Subject: "Your search: FRA to JFK", Body: "Hello.\n", CreatedAt: at})
	due, err := mt.mail.DueMail(context.Background(), at, 1, 0)
	if err != nil || len(due) != 1 || due[0].To != to {
		t.Fatalf("lease %s: %v, %v", to, due, err)
	}
	return due[0].ID
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// MustSignUp adds a pending sign-up that expires at expires.
func (mt *mailTest) MustSignUp(t *testing.T, email string, expires time.Time) {
	t.Helper()
	must(t, store.NewAccessStore(mt.db).InTx(context.Background(), func(tx flightgraph.AccessTx) error {
		return tx.CreateSignUp(context.Background(), &flightgraph.PendingSignUp{TokenHash: "hash-" + email, Email: email, Name: "N",
			PasswordHash: "x", CreatedAt: expires.Add(-access.SignUpTTL), ExpiresAt: expires})
	}))
}

// left returns the ids of the outbox's messages and the addresses of the pending sign-ups.
func (mt *mailTest) left(t *testing.T) (mails []int64, signUps []string) {
	t.Helper()
	for _, r := range mt.outboxRows(t) {
		mails = append(mails, r.id)
	}
	rows, err := storetest.SQL(t, mt.db).Query(`SELECT email FROM signups ORDER BY email`)
	must(t, err)
	defer rows.Close()
	for rows.Next() {
		var e string
		must(t, rows.Scan(&e))
		signUps = append(signUps, e)
	}
	must(t, rows.Err())
	return mails, signUps
}

// TestSweeperDeletesDoneMail: the sweep deletes the messages delivered, and given up, more than
// the retention ago, and the expired sign-ups; it keeps recent ones and every message still to
// send, however old. Replicas sweeping at once delete each row once.
func TestSweeperDeletesDoneMail(t *testing.T) {
	forEachDialect(t, func(t *testing.T, mt *mailTest) {
		ctx := context.Background()
		now := mt.clock.Now()
		old, recent := now.Add(-100*time.Hour), now.Add(-24*time.Hour)
		trace := flightgraph.MailTrace{Recipient: "hmac-sha256:00", Subject: "Your search"}

		oldSent := mt.MustMail(t, "old-sent@example.com", old)
		must(t, mt.mail.MarkMailSent(ctx, oldSent, old.Add(time.Minute), trace))
		oldGivenUp := mt.MustMail(t, "old-given-up@example.com", old)
		must(t, mt.mail.GiveUpMail(ctx, oldGivenUp, "550", trace))
		// A server down for days: still to send, however old.
		oldRetrying := mt.MustMail(t, "old-retrying@example.com", old)
		must(t, mt.mail.MarkMailFailed(ctx, oldRetrying, "dial: refused", now.Add(time.Hour)))
		recentSent := mt.MustMail(t, "recent-sent@example.com", recent)
		must(t, mt.mail.MarkMailSent(ctx, recentSent, recent, trace))
		recentGivenUp := mt.MustMail(t, "recent-given-up@example.com", recent)
		must(t, mt.mail.GiveUpMail(ctx, recentGivenUp, "550", trace))
		// Sent long after it was made: the retention counts from the sending.
		lateSent := mt.MustMail(t, "late-sent@example.com", old)
		must(t, mt.mail.MarkMailSent(ctx, lateSent, recent, trace))
		oldUntried := mt.MustMail(t, "old-untried@example.com", old)
		must(t, mt.mail.MarkMailFailed(ctx, oldUntried, "", old)) // due again, as a lease that ran out
		mt.MustSignUp(t, "expired@example.com", now.Add(-time.Minute))
		mt.MustSignUp(t, "pending@example.com", now.Add(time.Hour))

		// Two replicas sweep at once.
		var logs limitLogBuffer
		sweepers := []*access.Sweeper{
			{Mail: mt.mail, Access: store.NewAccessStore(mt.db), Retention: 72 * time.Hour, Now: mt.clock.Now},
			{Mail: mt.mail, Access: store.NewAccessStore(mt.db), Retention: 72 * time.Hour, Now: mt.clock.Now},
		}
		var wg sync.WaitGroup
		var mails, signUps [2]int64
		var errs [2]error
		for i, s := range sweepers {
			wg.Go(func() { mails[i], signUps[i], errs[i] = s.Sweep(ctx) })
		}
		wg.Wait()
		must(t, errs[0])
		must(t, errs[1])
		if m, s := mails[0]+mails[1], signUps[0]+signUps[1]; m != 2 || s != 1 {
			t.Errorf("the sweeps deleted %v messages and %v sign-ups; want 2 and 1 in all", mails, signUps)
		}
		leftMails, leftSignUps := mt.left(t)
		want := []int64{oldRetrying, recentSent, recentGivenUp, lateSent, oldUntried}
		if !slices.Equal(leftMails, want) || len(leftSignUps) != 1 || leftSignUps[0] != "pending@example.com" {
			t.Errorf("left %v and sign-ups %v; want %v and [pending@example.com]", leftMails, leftSignUps, want)
		}
		// The messages still to send are whole.
		for _, r := range mt.outboxRows(t) {
			if (r.id == oldRetrying || r.id == oldUntried) && (r.body == "" || !strings.HasPrefix(r.recipient, "old-")) {
				t.Errorf("message %d, still to send, holds %+v", r.id, r)
			}
		}

		// Run sweeps at once, then every interval, and logs counts only.
		mt.clock.Add(49 * time.Hour)
		s := &access.Sweeper{Mail: mt.mail, Access: store.NewAccessStore(mt.db), Retention: 72 * time.Hour, Now: mt.clock.Now,
			Log: slog.New(slog.NewTextHandler(&logs, nil))}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { s.Run(runCtx, time.Hour); close(done) }()
		deadline := time.Now().Add(5 * time.Second)
		// Done once the first sweep has logged: it deletes the mails, then the sign-ups.
		for {
			if leftMails, _ := mt.left(t); slices.Equal(leftMails, []int64{oldRetrying, oldUntried}) && strings.Contains(logs.String(), "swept") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Run did not sweep: %v left", leftMails)
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		<-done
		if !strings.Contains(logs.String(), "mails=3") || !strings.Contains(logs.String(), "signUps=1") || strings.Contains(logs.String(), "@") {
			t.Errorf("the sweep's log must count what went, and hold nothing of it:\n%s", logs.String())
		}
	})
}
