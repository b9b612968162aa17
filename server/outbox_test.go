package server_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestRunErasesAndSweepsMail: a running server delivers its outbox and keeps of each message only
// the trace, the recipient hashed under the offer key; and it sweeps, at once and then
// periodically, what the retention no longer keeps and the expired sign-ups.
func TestRunErasesAndSweepsMail(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		db := storetest.Open(t, dialect, os.Getenv)
		logs := &lockedBuffer{}
		cfg := testConfig(db, logs)
		cfg.OfferKey = []byte("the offer key of this test, 32 b")
		cfg.MailRetention = 48 * time.Hour
		h, _ := startServer(t, cfg)
		mail := store.NewMailStore(db)
		accessStore := store.NewAccessStore(db)
		now := storetest.Now

		// Before the server runs: a message sent 50 hours ago, one to send, two sign-ups.
		enqueue := func(m *flightgraph.Mail) {
			t.Helper()
			if err := accessStore.InTx(ctx, func(tx flightgraph.AccessTx) error { return tx.EnqueueMail(ctx, m) }); err != nil {
				t.Fatal(err)
			}
		}
		enqueue(&flightgraph.Mail{To: "old@example.com", Subject: "Old", Body: "Old.\n", CreatedAt: now.Add(-50 * time.Hour)})
		due, err := mail.DueMail(ctx, now, 1, 0)
		if err != nil || len(due) != 1 {
			t.Fatalf("lease: %v, %v", due, err)
		}
		if err := mail.MarkMailSent(ctx, due[0].ID, now.Add(-50*time.Hour), due[0].Trace(cfg.OfferKey)); err != nil {
			t.Fatal(err)
		}
		fresh := &flightgraph.Mail{To: "Ada <Ada+trips@Example.com>", Subject: "Your search: FRA to JFK on 2026-12-01", Body: "Hello Ada.\n", CreatedAt: now}
		enqueue(fresh)
		for _, s := range []*flightgraph.PendingSignUp{
			{TokenHash: "expired", Email: "expired@example.com", Name: "E", PasswordHash: "x", CreatedAt: now.Add(-25 * time.Hour), ExpiresAt: now.Add(-time.Hour)},
			{TokenHash: "pending", Email: "pending@example.com", Name: "P", PasswordHash: "x", CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		} {
			if err := accessStore.InTx(ctx, func(tx flightgraph.AccessTx) error { return tx.CreateSignUp(ctx, s) }); err != nil {
				t.Fatal(err)
			}
		}

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- h.Run(runCtx, ln, nil, server.Shutdown{Grace: time.Second}) }()
		t.Cleanup(func() { cancel(); <-done })

		raw := storetest.SQL(t, db)
		want := "hmac-sha256:" + flightgraph.MailboxHash(cfg.OfferKey, "mail-outbox-recipient", "ada@example.com")
		var rows, signUps int
		var recipient, subject, body string
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if err := raw.QueryRow(`SELECT COUNT(*), MAX(recipient), MAX(subject), MAX(body) FROM mail_outbox`).Scan(&rows, &recipient, &subject, &body); err != nil {
				t.Fatal(err)
			}
			if err := raw.QueryRow(`SELECT COUNT(*) FROM signups`).Scan(&signUps); err != nil {
				t.Fatal(err)
			}
			if rows == 1 && recipient == want && subject == "Your search" && body == "" && signUps == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the outbox holds %d rows (to %q, subject %q, body %q) and %d sign-ups; want the fresh message's trace to %q, and 1 sign-up",
					rows, recipient, subject, body, signUps, want)
			}
		}
		var pending string
		if err := raw.QueryRow(`SELECT email FROM signups`).Scan(&pending); err != nil || pending != "pending@example.com" {
			t.Fatalf("the sign-up left is %q (%v), want pending@example.com", pending, err)
		}
		if l := logs.String(); !strings.Contains(l, "swept the outbox and sign-ups") || !strings.Contains(l, "mails=1 signUps=1") {
			t.Errorf("the sweep was not logged with its counts:\n%s", l)
		}
	})
}
