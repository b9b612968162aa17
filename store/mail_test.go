package store_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// refuseUpdates makes the database refuse, by a trigger, the updates of the outbox for which
// when (SQL over OLD and NEW) holds, until the returned function drops the trigger.
func refuseUpdates(t *testing.T, db *store.DB, when string) (drop func()) {
	t.Helper()
	raw := storetest.SQL(t, db)
	stmts := []string{`CREATE TRIGGER refuse BEFORE UPDATE ON mail_outbox FOR EACH ROW WHEN (` + when + `) BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`}
	dropStmts := []string{`DROP TRIGGER refuse`}
	if db.Dialect() == store.Postgres {
		stmts = []string{
			`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`,
			`CREATE TRIGGER refuse BEFORE UPDATE ON mail_outbox FOR EACH ROW WHEN (` + when + `) EXECUTE FUNCTION refuse()`,
		}
		dropStmts = []string{`DROP TRIGGER refuse ON mail_outbox`, `DROP FUNCTION refuse()`}
	}
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return func() {
		for _, s := range dropStmts {
			if _, err := raw.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
}

// TestMailMarkErasesAtOnce: marking a message delivered or given up and erasing it are one
// write. When either half fails, the message is left as it was: to be sent, whole; never marked
// done with its body, nor erased and still due.
func TestMailMarkErasesAtOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		db := storetest.Open(t, dialect, os.Getenv)
		mail := store.NewMailStore(db)
		trace := flightgraph.MailTrace{Recipient: "hmac-sha256:00", Subject: "Your search"}
		for _, c := range []struct {
			name, when string
			mark       func(id int64) error
		}{
			{"sent, the erasure refused", `NEW.body = ''`, func(id int64) error { return mail.MarkMailSent(ctx, id, storetest.Now, trace) }},
			{"sent, the mark refused", `NEW.sent_at IS NOT NULL`, func(id int64) error { return mail.MarkMailSent(ctx, id, storetest.Now, trace) }},
			{"given up, the erasure refused", `NEW.recipient <> OLD.recipient`, func(id int64) error { return mail.GiveUpMail(ctx, id, "550", trace) }},
			{"given up, the mark refused", `NEW.next_attempt_at <> OLD.next_attempt_at`, func(id int64) error { return mail.GiveUpMail(ctx, id, "550", trace) }},
		} {
			t.Run(c.name, func(t *testing.T) {
				m := &flightgraph.Mail{To: "ada@example.com", Subject: "Your search: FRA to JFK", Body: "Hello Ada.\n", CreatedAt: storetest.Now}
				must(t, store.NewAccessStore(db).InTx(ctx, func(tx flightgraph.AccessTx) error { return tx.EnqueueMail(ctx, m) }))
				due, err := mail.DueMail(ctx, storetest.Now, 1, time.Minute)
				if err != nil || len(due) != 1 {
					t.Fatalf("lease: %v, %v", due, err)
				}
				drop := refuseUpdates(t, db, c.when)
				if err := c.mark(due[0].ID); err == nil {
					t.Fatal("the refused write succeeded")
				}
				drop()
				// Still leased (one minute): it is due again after the lease, whole and unsent.
				again, err := mail.DueMail(ctx, storetest.Now.Add(2*time.Minute), 1, time.Minute)
				if err != nil || len(again) != 1 {
					t.Fatalf("after the failed write, %d messages due (%v), want the one", len(again), err)
				}
				if g := again[0]; g.ID != due[0].ID || g.To != m.To || g.Subject != m.Subject || g.Body != m.Body || g.SentAt != nil {
					t.Fatalf("after the failed write the message holds %+v, want %+v whole and unsent", g, m)
				}
				must(t, c.mark(due[0].ID))
				if left, err := mail.DueMail(ctx, storetest.Now.Add(time.Hour), 1, 0); err != nil || len(left) != 0 {
					t.Fatalf("after the write, %d messages due (%v), want none", len(left), err)
				}
			})
		}
	})
}

// TestMailReasonClipped: a failed attempt's reason is cut to 500 bytes where a character begins,
// since PostgreSQL refuses text that is not UTF-8.
func TestMailReasonClipped(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		db := storetest.Open(t, dialect, os.Getenv)
		mail := store.NewMailStore(db)
		must(t, store.NewAccessStore(db).InTx(ctx, func(tx flightgraph.AccessTx) error {
			return tx.EnqueueMail(ctx, &flightgraph.Mail{To: "ada@example.com", Subject: "S", Body: "B", CreatedAt: storetest.Now})
		}))
		due, err := mail.DueMail(ctx, storetest.Now, 1, 0)
		if err != nil || len(due) != 1 {
			t.Fatalf("lease: %v, %v", due, err)
		}
		reason := strings.Repeat("a", 499) + "é and more"
		must(t, mail.MarkMailFailed(ctx, due[0].ID, reason, storetest.Now))
		again, err := mail.DueMail(ctx, storetest.Now, 1, 0)
		if err != nil || len(again) != 1 {
			t.Fatalf("lease: %v, %v", again, err)
		}
		if got := again[0].LastError; got != strings.Repeat("a", 499) || !utf8.ValidString(got) {
			t.Fatalf("last error %q (%d bytes), want the 499 a's", got, len(got))
		}
	})
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
