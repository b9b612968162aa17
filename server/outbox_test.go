package server_test

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
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
			// The sweep logs its counts after its deletions commit: the log is waited for too.
			l := logs.String()
			swept := strings.Contains(l, "swept the outbox and sign-ups") && strings.Contains(l, "mails=1 signUps=1")
			if rows == 1 && recipient == want && subject == "Your search" && body == "" && signUps == 1 && swept {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the outbox holds %d rows (to %q, subject %q, body %q) and %d sign-ups; want the fresh message's trace to %q, and 1 sign-up; the sweep logged with its counts: %v\n%s",
					rows, recipient, subject, body, signUps, want, swept, l)
			}
		}
		var pending string
		if err := raw.QueryRow(`SELECT email FROM signups`).Scan(&pending); err != nil || pending != "pending@example.com" {
			t.Fatalf("the sign-up left is %q (%v), want pending@example.com", pending, err)
		}
	})
}

// TestSignUpMailGoesOutAtOnce: a sign-up's mail reaches a real SMTP server as soon as the
// request that queued it has answered, not on the outbox's next tick (10 s in Run): the store
// tells the outbox when a transaction that queued mail commits.
func TestSignUpMailGoesOutAtOnce(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Open(t, dialect, os.Getenv)
		smtpd := startMailSink(t)
		mailer, err := access.NewSMTPMailer("smtp://" + smtpd.addr + "?from=noreply%40flightgraph.example")
		if err != nil {
			t.Fatal(err)
		}
		s := newServerWith(t, db, func(c *serverConfig) { c.Mailer = mailer })
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.srv.Run(runCtx, ln, nil, server.Shutdown{Grace: time.Second}) }()
		t.Cleanup(func() { cancel(); <-done })
		// Run's first pass delivers what was queued before it (the demo set-up's mail): wait for
		// it to end, so that what follows can only be sent by a notification or the next tick.
		settle := time.Now().Add(10 * time.Second)
		for time.Now().Before(settle) && smtpd.count() < s.mailCount(t) {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		before := smtpd.count()

		resp := s.portalAs(t, nil, `mutation($in: SignUpInput!) { signUp(input: $in) { message } }`,
			map[string]any{"in": map[string]any{"email": "ada@example.com", "password": "a long enough password", "name": "Ada"}})
		if len(resp.Errors) > 0 {
			t.Fatalf("signUp: %+v", resp.Errors)
		}
		answered := time.Now()
		for smtpd.count() == before {
			if time.Since(answered) > 3*time.Second {
				t.Fatalf("the sign-up mail was not delivered within 3 s of the answer (the outbox's tick is 10 s)")
			}
			time.Sleep(5 * time.Millisecond)
		}
		took := time.Since(answered)
		if got := smtpd.last(); got.to != "ada@example.com" || !strings.Contains(got.data, "Confirm your address") {
			t.Fatalf("the server received a mail to %q:\n%s", got.to, got.data)
		}
		t.Logf("%s: the sign-up mail reached the SMTP server %v after the answer", dialect, took.Round(time.Millisecond))
	})
}

// mailCount is how many messages the outbox holds, delivered or not.
func (s *testServer) mailCount(t testing.TB) int {
	t.Helper()
	var n int
	if err := storetest.SQL(t, s.db).QueryRow(`SELECT COUNT(*) FROM mail_outbox`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// mailSink is an in-process SMTP server, without authentication, that keeps what it accepts.
type mailSink struct {
	addr string
	mu   sync.Mutex
	msgs []sunkMail
}

// sunkMail is one message as the mail sink got it.
type sunkMail struct{ to, data string }

// startMailSink serves SMTP on a free loopback port until the test ends.
func startMailSink(t *testing.T) *mailSink {
	t.Helper()
	sink := &mailSink{}
	s := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{sink: sink}, nil }))
	s.Domain = "localhost"
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sink.addr = ln.Addr().String()
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return sink
}

func (m *mailSink) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.msgs)
}

func (m *mailSink) last() sunkMail {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.msgs) == 0 {
		return sunkMail{}
	}
	return m.msgs[len(m.msgs)-1]
}

// sinkSession is one SMTP session of the mail sink.
type sinkSession struct {
	sink *mailSink
	to   string
}

func (s *sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = to
	return nil
}
func (s *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.sink.mu.Lock()
	defer s.sink.mu.Unlock()
	s.sink.msgs = append(s.sink.msgs, sunkMail{to: s.to, data: string(b)})
	return nil
}
func (s *sinkSession) Reset()        { s.to = "" }
func (s *sinkSession) Logout() error { return nil }
