package access_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// The test server's only account. The password has characters that need escaping in a URL.
const (
	testUser     = "mailer"
	testPassword = "s3cr3t&p@ss/w0rd"
)

// received is one message as the test server got it.
type received struct {
	from, to string
	data     []byte
	tls      bool
}

// smtpServer is an in-process SMTP server that requires AUTH PLAIN and records what it accepts.
type smtpServer struct {
	addr string

	mu         sync.Mutex
	msgs       []received
	refuseRcpt int // how many RCPTs to answer 451 still
	rejectRcpt bool
}

// serverOption changes the test server before it starts.
type serverOption func(*smtp.Server)

// withTLS makes the server offer STARTTLS, or speak TLS from the start when implicit.
func withTLS(t *testing.T, implicit bool) serverOption {
	return func(s *smtp.Server) {
		s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
		if implicit {
			s.Network = "implicit"
		}
	}
}

// startSMTP serves on addr ("127.0.0.1:0" for any port) until the test ends.
func startSMTP(t *testing.T, addr string, opts ...serverOption) *smtpServer {
	t.Helper()
	srv := &smtpServer{}
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{srv: srv, conn: c}, nil
	}))
	s.Domain = "localhost"
	s.AllowInsecureAuth = true
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	s.ErrorLog = log.New(io.Discard, "", 0) // refused TLS handshakes are part of the tests
	for _, opt := range opts {
		opt(s)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	if s.Network == "implicit" {
		s.Network = ""
		ln = tls.NewListener(ln, s.TLSConfig)
	}
	srv.addr = ln.Addr().String()
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return srv
}

// url returns the SMTP URL of the server with the test account and extra query.
func (srv *smtpServer) url(scheme, password, query string) string {
	u := url.URL{Scheme: scheme, User: url.UserPassword(testUser, password), Host: srv.addr, RawQuery: query}
	return u.String()
}

// received returns a copy of the messages accepted so far.
func (srv *smtpServer) received() []received {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return append([]received(nil), srv.msgs...)
}

type smtpSession struct {
	srv      *smtpServer
	conn     *smtp.Conn
	authed   bool
	from, to string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != testUser || password != testPassword {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, opts *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, opts *smtp.RcptOptions) error {
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	// Like many servers, the replies repeat the address.
	if s.srv.rejectRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "<" + to + ">: no such user"}
	}
	if s.srv.refuseRcpt > 0 {
		s.srv.refuseRcpt--
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "<" + to + ">: try again later"}
	}
	s.to = to
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	s.srv.msgs = append(s.srv.msgs, received{from: s.from, to: s.to, data: data, tls: isTLS})
	return nil
}

func (s *smtpSession) Reset()        { s.from, s.to = "", "" }
func (s *smtpSession) Logout() error { return nil }

// selfSigned returns a certificate for 127.0.0.1 that no client trusts.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "flightgraph test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// mailClock is a settable clock, shared by the store and the outboxes of a test.
type mailClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *mailClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *mailClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// mailTest is what the store-backed tests share.
type mailTest struct {
	db    *store.DB
	mail  *store.MailStore
	clock *mailClock
}

// forEachDialect runs fn on a fresh store of every configured dialect.
func forEachDialect(t *testing.T, fn func(t *testing.T, mt *mailTest)) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Open(t, dialect, os.Getenv)
		c := &mailClock{now: storetest.Now}
		db.Now = c.Now
		fn(t, &mailTest{db: db, mail: store.NewMailStore(db), clock: c})
	})
}

// MustEnqueue adds messages to the outbox.
func (mt *mailTest) MustEnqueue(t *testing.T, msgs ...*flightgraph.Mail) {
	t.Helper()
	// As every change that sends mail does: in a transaction of the access store.
	err := store.NewAccessStore(mt.db).InTx(context.Background(), func(tx flightgraph.AccessTx) error {
		for _, m := range msgs {
			if err := tx.EnqueueMail(context.Background(), m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
}

// peek returns the unsent messages due at at without hiding them: a zero lease.
func (mt *mailTest) peek(t *testing.T, at time.Time) []*flightgraph.Mail {
	t.Helper()
	due, err := mt.mail.DueMail(context.Background(), at, 100, 0)
	if err != nil {
		t.Fatalf("due mail: %v", err)
	}
	return due
}

// outbox returns an Outbox on the test's store and clock.
func (mt *mailTest) outbox(t *testing.T, mailer access.Mailer) *access.Outbox {
	o := access.NewOutbox(mt.mail, mailer, slog.New(slog.NewTextHandler(t.Output(), nil)))
	o.Now = mt.clock.Now
	return o
}

// MustSMTPMailer returns a mailer for rawURL.
func MustSMTPMailer(t *testing.T, rawURL string) *access.SMTPMailer {
	t.Helper()
	m, err := access.NewSMTPMailer(rawURL)
	if err != nil {
		t.Fatalf("NewSMTPMailer: %v", err)
	}
	return m
}

func testMails(n int) []*flightgraph.Mail {
	out := make([]*flightgraph.Mail, n)
	for i := range out {
		out[i] = &flightgraph.Mail{
			To:      fmt.Sprintf("dev%d@example.com", i),
			Subject: fmt.Sprintf("Message %d", i),
			Body:    fmt.Sprintf("Hello %d.\n", i),
		}
	}
	return out
}

func TestOutboxDelivers(t *testing.T) {
	forEachDialect(t, func(t *testing.T, mt *mailTest) {
		srv := startSMTP(t, "127.0.0.1:0")
		msgs := []*flightgraph.Mail{
			{To: "ada@example.com", Subject: "Your key is approved", Body: "Hello Ada,\n\nyour key is ready: https://portal.example.com/keys?id=1&x=2\n"},
			{To: "Zoé <zoe@example.com>", Subject: "Café crème – demande acceptée", Body: "Bonjour Zoé,\r\nvotre demande est acceptée.\r\n.\r\nUne ligne qui commence par un point, ci-dessus.\r\n"},
			{To: "bob@example.com", Subject: "Long", Body: strings.Repeat("a line far longer than seventy-six characters, to be soft-wrapped; ", 4)},
		}
		mt.MustEnqueue(t, msgs...)
		o := mt.outbox(t, MustSMTPMailer(t, srv.url("smtp", testPassword, "from="+url.QueryEscape("Flight Graph <noreply@flightgraph.example>"))))

		sent, failed, err := o.DeliverDue(context.Background())
		if err != nil || sent != 3 || failed != 0 {
			t.Fatalf("DeliverDue = %d sent, %d failed, %v; want 3, 0, nil", sent, failed, err)
		}
		got := srv.received()
		if len(got) != 3 {
			t.Fatalf("server received %d messages, want 3", len(got))
		}
		ids := map[string]bool{}
		for i, r := range got {
			want := msgs[i]
			addr, _ := mail.ParseAddress(want.To)
			if r.from != "noreply@flightgraph.example" || r.to != addr.Address {
				t.Errorf("message %d: envelope %q → %q, want noreply@flightgraph.example → %q", i, r.from, r.to, addr.Address)
			}
			if bytes.Contains(bytes.ReplaceAll(r.data, []byte("\r\n"), nil), []byte("\n")) || bytes.Contains(bytes.ReplaceAll(r.data, []byte("\r\n"), nil), []byte("\r")) {
				t.Errorf("message %d: not all line endings are CRLF:\n%q", i, r.data)
			}
			for _, line := range strings.Split(string(r.data), "\r\n") {
				if len(line) > 78 {
					t.Errorf("message %d: line of %d characters: %q", i, len(line), line)
				}
			}
			pm, err := mail.ReadMessage(bytes.NewReader(r.data))
			if err != nil {
				t.Fatalf("message %d does not parse: %v\n%s", i, err, r.data)
			}
			h := pm.Header
			for _, name := range []string{"From", "To", "Subject", "Date", "Message-Id", "MIME-Version", "Content-Type"} {
				if h.Get(name) == "" {
					t.Errorf("message %d: no %s header", i, name)
				}
			}
			if from, err := h.AddressList("From"); err != nil || len(from) != 1 || from[0].Name != "Flight Graph" || from[0].Address != "noreply@flightgraph.example" {
				t.Errorf("message %d: From %v, %v", i, from, err)
			}
			if to, err := h.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != addr.Address || to[0].Name != addr.Name {
				t.Errorf("message %d: To %v (%v), want %v", i, to, err, addr)
			}
			if subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject")); err != nil || subject != want.Subject {
				t.Errorf("message %d: Subject %q (%v), want %q", i, subject, err, want.Subject)
			}
			if _, err := h.Date(); err != nil {
				t.Errorf("message %d: Date %q: %v", i, h.Get("Date"), err)
			}
			if _, err := mail.ParseAddress(h.Get("Message-Id")); err != nil || ids[h.Get("Message-Id")] {
				t.Errorf("message %d: Message-Id %q is malformed or repeated (%v)", i, h.Get("Message-Id"), err)
			}
			ids[h.Get("Message-Id")] = true
			if ct := h.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("message %d: Content-Type %q", i, ct)
			}
			body, err := io.ReadAll(quotedprintable.NewReader(pm.Body))
			if err != nil {
				t.Fatalf("message %d: body: %v", i, err)
			}
			wantBody := strings.ReplaceAll(strings.ReplaceAll(want.Body, "\r\n", "\n"), "\n", "\r\n")
			if string(body) != wantBody && string(body) != wantBody+"\r\n" {
				t.Errorf("message %d: body\n%q\nwant\n%q", i, body, wantBody)
			}
		}
		t.Logf("message 1:\n%s", got[1].data)
		if !strings.Contains(string(got[1].data), "=C3=A9") {
			t.Errorf("the é of message 1 is not quoted-printable:\n%s", got[1].data)
		}

		sent, failed, err = o.DeliverDue(context.Background())
		if err != nil || sent != 0 || failed != 0 {
			t.Fatalf("second DeliverDue = %d sent, %d failed, %v; want 0, 0, nil", sent, failed, err)
		}
		if due := mt.peek(t, mt.clock.Now().Add(24*time.Hour)); len(due) != 0 {
			t.Fatalf("%d messages still in the outbox after delivery", len(due))
		}
		if n := len(srv.received()); n != 3 {
			t.Fatalf("server received %d messages, want 3", n)
		}
	})
}

func TestOutboxRetriesAfterRestart(t *testing.T) {
	forEachDialect(t, func(t *testing.T, mt *mailTest) {
		srv := startSMTP(t, "127.0.0.1:0")
		srv.mu.Lock()
		srv.refuseRcpt = 3
		srv.mu.Unlock()
		mt.MustEnqueue(t, testMails(3)...)
		mailer := MustSMTPMailer(t, srv.url("smtp", testPassword, ""))
		start := mt.clock.Now()

		sent, failed, err := mt.outbox(t, mailer).DeliverDue(context.Background())
		if err != nil || sent != 0 || failed != 3 {
			t.Fatalf("DeliverDue = %d sent, %d failed, %v; want 0, 3, nil", sent, failed, err)
		}
		// DefaultBackoff waits 8 to 10 s after a first failure.
		if due := mt.peek(t, start.Add(7*time.Second)); len(due) != 0 {
			t.Fatalf("%d messages due again at once, want none before the backoff", len(due))
		}
		mt.clock.Add(2 * time.Hour)
		due := mt.peek(t, mt.clock.Now())
		if len(due) != 3 {
			t.Fatalf("%d messages in the outbox, want 3", len(due))
		}
		for _, m := range due {
			if m.SentAt != nil || !strings.Contains(m.LastError, "451") || !strings.Contains(m.LastError, "try again later") {
				t.Errorf("message %d: sent at %v, last error %q; want unsent with the 451", m.ID, m.SentAt, m.LastError)
			}
			if strings.Contains(m.LastError, testPassword) {
				t.Errorf("message %d: last error %q contains the password", m.ID, m.LastError)
			}
			if strings.Contains(m.LastError, "dev") {
				t.Errorf("message %d: last error %q contains the address", m.ID, m.LastError)
			}
		}

		// A new Outbox, as after a restart, finds them all.
		sent, failed, err = mt.outbox(t, mailer).DeliverDue(context.Background())
		if err != nil || sent != 3 || failed != 0 {
			t.Fatalf("after restart DeliverDue = %d sent, %d failed, %v; want 3, 0, nil", sent, failed, err)
		}
		if n := len(srv.received()); n != 3 {
			t.Fatalf("server received %d messages, want 3", n)
		}
	})
}

func TestOutboxServerDown(t *testing.T) {
	forEachDialect(t, func(t *testing.T, mt *mailTest) {
		// Take a free port and leave it closed, so the server can start there later.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		mt.MustEnqueue(t, testMails(3)...)
		down := &smtpServer{addr: addr}
		mailer := MustSMTPMailer(t, down.url("smtp", testPassword, ""))

		// A server that is down fails every message alike: the pass stops at the first.
		sent, failed, err := mt.outbox(t, mailer).DeliverDue(context.Background())
		if err != nil || sent != 0 || failed != 1 {
			t.Fatalf("DeliverDue = %d sent, %d failed, %v; want 0, 1, nil", sent, failed, err)
		}
		due := mt.peek(t, mt.clock.Now())
		if len(due) != 2 {
			t.Fatalf("%d messages due, want the 2 not tried", len(due))
		}
		for _, m := range due {
			if m.LastError != "" {
				t.Errorf("message %d not tried has last error %q", m.ID, m.LastError)
			}
		}

		srv := startSMTP(t, addr)
		mt.clock.Add(time.Hour)
		sent, failed, err = mt.outbox(t, mailer).DeliverDue(context.Background())
		if err != nil || sent != 3 || failed != 0 {
			t.Fatalf("after the server started DeliverDue = %d sent, %d failed, %v; want 3, 0, nil", sent, failed, err)
		}
		if n := len(srv.received()); n != 3 {
			t.Fatalf("server received %d messages, want 3", n)
		}
	})
}

func TestOutboxGivesUpPermanentRejection(t *testing.T) {
	forEachDialect(t, func(t *testing.T, mt *mailTest) {
		srv := startSMTP(t, "127.0.0.1:0")
		srv.mu.Lock()
		srv.rejectRcpt = true
		srv.mu.Unlock()
		mails := testMails(1)
		mt.MustEnqueue(t, mails...)
		var logs bytes.Buffer
		o := access.NewOutbox(mt.mail, MustSMTPMailer(t, srv.url("smtp", testPassword, "")), slog.New(slog.NewTextHandler(&logs, nil)))
		o.Now = mt.clock.Now
		o.Key = testKey
		o.PermanentAttempts = 2
		for attempt := 1; attempt <= 2; attempt++ {
			if sent, failed, err := o.DeliverDue(context.Background()); err != nil || sent != 0 || failed != 1 {
				t.Fatalf("attempt %d: DeliverDue = %d sent, %d failed, %v; want 0, 1, nil", attempt, sent, failed, err)
			}
			mt.clock.Add(2 * time.Hour)
		}
		if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "domain=example.com") {
			t.Errorf("giving up was not logged at error level with the domain:\n%s", logs.String())
		}
		// The server's reply repeated the address; neither the log nor the row does.
		if strings.Contains(logs.String(), "dev0") {
			t.Errorf("the log holds the address:\n%s", logs.String())
		}
		mt.clock.Add(365 * 24 * time.Hour)
		if sent, failed, err := o.DeliverDue(context.Background()); err != nil || sent+failed != 0 {
			t.Fatalf("after giving up DeliverDue = %d sent, %d failed, %v; want nothing", sent, failed, err)
		}
		// Given up, the message keeps its error and trace, and neither its body nor its address.
		due := mt.peek(t, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
		if len(due) != 1 || due[0].SentAt != nil || !strings.Contains(due[0].LastError, "550") {
			t.Fatalf("outbox holds %+v, want the message with its 550", due)
		}
		want := mails[0].Trace(testKey)
		if m := due[0]; m.Body != "" || m.To != want.Recipient || m.Subject != want.Subject || strings.Contains(m.LastError, "dev0") {
			t.Errorf("given up, the message holds to %q, subject %q, body %q, error %q; want its trace %+v, no body and no address",
				m.To, m.Subject, m.Body, m.LastError, want)
		}
	})
}

func TestOutboxLease(t *testing.T) {
	forEachDialect(t, func(t *testing.T, mt *mailTest) {
		srv := startSMTP(t, "127.0.0.1:0")
		const n = 20
		mt.MustEnqueue(t, testMails(n)...)
		mailer := MustSMTPMailer(t, srv.url("smtp", testPassword, ""))
		outboxes := []*access.Outbox{mt.outbox(t, mailer), mt.outbox(t, mailer)}

		var wg sync.WaitGroup
		sent := make([]int, len(outboxes))
		errs := make([]error, len(outboxes))
		start := make(chan struct{})
		for i, o := range outboxes {
			o.Batch = n
			wg.Go(func() {
				<-start
				sent[i], _, errs[i] = o.DeliverDue(context.Background())
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("outbox %d: %v", i, err)
			}
		}
		// A replica may stop early when it loses a race for a row; another pass finds the rest.
		more, _, err := outboxes[0].DeliverDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("sent %v concurrently, then %d", sent, more)

		count := map[string]int{}
		for _, r := range srv.received() {
			pm, err := mail.ReadMessage(bytes.NewReader(r.data))
			if err != nil {
				t.Fatal(err)
			}
			count[pm.Header.Get("Message-Id")]++
		}
		if len(count) != n || sent[0]+sent[1]+more != n {
			t.Errorf("server received %d distinct messages, outboxes sent %d+%d+%d; want %d", len(count), sent[0], sent[1], more, n)
		}
		for id, c := range count {
			if c != 1 {
				t.Errorf("message %s received %d times", id, c)
			}
		}
	})
}

func TestOutboxRunNotify(t *testing.T) {
	forEachDialect(t, func(t *testing.T, mt *mailTest) {
		srv := startSMTP(t, "127.0.0.1:0")
		mails := testMails(2)
		mt.MustEnqueue(t, mails[0])
		o := mt.outbox(t, MustSMTPMailer(t, srv.url("smtp", testPassword, "")))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			o.Run(ctx, time.Hour)
			close(done)
		}()
		waitReceived(t, srv, 1)
		// Only Notify can bring the second message before the hour is up.
		mt.MustEnqueue(t, mails[1])
		o.Notify()
		waitReceived(t, srv, 2)
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}
	})
}

func waitReceived(t *testing.T, srv *smtpServer, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if len(srv.received()) >= n {
			return
		}
	}
	t.Fatalf("server received %d messages, want %d", len(srv.received()), n)
}

func TestOutboxDefaultBackoff(t *testing.T) {
	for _, tc := range []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 8 * time.Second, 10 * time.Second},
		{2, 16 * time.Second, 20 * time.Second},
		{5, 128 * time.Second, 160 * time.Second},
		{9, 2048 * time.Second, 2560 * time.Second},
		{10, 48 * time.Minute, time.Hour},
		{12, 48 * time.Minute, time.Hour},
		{1000, 48 * time.Minute, time.Hour},
	} {
		for range 50 {
			if d := access.DefaultBackoff(tc.attempt); d < tc.min || d > tc.max {
				t.Fatalf("DefaultBackoff(%d) = %v, want %v to %v", tc.attempt, d, tc.min, tc.max)
			}
		}
	}
}

// testKey hashes the recipients of delivered mail in the tests that check the hashes.
var testKey = []byte("an outbox test key of 32 bytes..")

// recordingMailer accepts every message and keeps a copy.
type recordingMailer struct {
	mu   sync.Mutex
	sent []flightgraph.Mail
}

func (r *recordingMailer) Send(_ context.Context, m *flightgraph.Mail) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, *m)
	return nil
}

// outboxRow is a row of the outbox as the database holds it.
type outboxRow struct {
	id                               int64
	recipient, subject, body, errMsg string
	sent                             bool
}

// outboxRows reads the whole outbox, in id order.
func (mt *mailTest) outboxRows(t *testing.T) []outboxRow {
	t.Helper()
	rows, err := storetest.SQL(t, mt.db).Query(`SELECT id, recipient, subject, body, last_error, sent_at IS NOT NULL FROM mail_outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		if err := rows.Scan(&r.id, &r.recipient, &r.subject, &r.body, &r.errMsg, &r.sent); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOutboxErasesDeliveredMail is the bar: after 1,000 mails delivered through the outbox, it
// holds no body and no address, only each message's trace; the mailer got them whole.
func TestOutboxErasesDeliveredMail(t *testing.T) {
	forEachDialect(t, func(t *testing.T, mt *mailTest) {
		const n = 1000
		msgs := make([]*flightgraph.Mail, n)
		for i := range msgs {
			msgs[i] = &flightgraph.Mail{
				To:      fmt.Sprintf("Dev %d <dev%d+trips@example.com>", i, i),
				Subject: fmt.Sprintf("Your search: FRA to JFK on 2026-12-%02d", i%28+1),
				Body:    fmt.Sprintf("Hello,\n\nopen %s/verify?token=fgsu_%06d within 24 hours.\n", testPortal, i),
			}
		}
		mt.MustEnqueue(t, msgs...)
		rec := &recordingMailer{}
		o := mt.outbox(t, rec)
		o.Key = testKey
		o.Batch = 100
		for {
			sent, failed, err := o.DeliverDue(context.Background())
			if err != nil || failed != 0 {
				t.Fatalf("DeliverDue = %d sent, %d failed, %v", sent, failed, err)
			}
			if sent == 0 {
				break
			}
		}
		if len(rec.sent) != n {
			t.Fatalf("the mailer got %d messages, want %d", len(rec.sent), n)
		}
		for i, m := range rec.sent {
			if m.To != msgs[i].To || m.Subject != msgs[i].Subject || m.Body != msgs[i].Body {
				t.Fatalf("message %d went out as %q %q %q, want it whole: %+v", i, m.To, m.Subject, m.Body, msgs[i])
			}
		}

		var total, bodies, plain, personal int
		err := storetest.SQL(t, mt.db).QueryRow(`SELECT COUNT(*),
			COUNT(CASE WHEN body <> '' THEN 1 END),
			COUNT(CASE WHEN recipient LIKE '%@%' OR last_error LIKE '%@%' THEN 1 END),
			COUNT(CASE WHEN subject LIKE '%FRA%' OR subject LIKE '%2026%' THEN 1 END)
			FROM mail_outbox`).Scan(&total, &bodies, &plain, &personal)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after %d delivered mails: %d rows, %d bodies, %d plaintext recipients, %d subjects with the route or date", n, total, bodies, plain, personal)
		if total != n || bodies != 0 || plain != 0 || personal != 0 {
			t.Fatalf("the outbox holds %d rows, %d bodies, %d plaintext recipients, %d subjects with the route or date; want %d, 0, 0, 0",
				total, bodies, plain, personal, n)
		}
		// Each row's recipient is the keyed hash of its mailbox: one mailbox, one hash.
		for i, r := range mt.outboxRows(t) {
			want := "hmac-sha256:" + flightgraph.MailboxHash(testKey, "mail-outbox-recipient", fmt.Sprintf("dev%d@example.com", i))
			if r.recipient != want || r.subject != "Your search" || !r.sent {
				t.Fatalf("row %d: recipient %q, subject %q, sent %v; want %q, %q, sent", r.id, r.recipient, r.subject, r.sent, want, "Your search")
			}
		}
	})
}

const testPortal = "https://portal.example.com/portal"

// TestOutboxKeepsMailToRetry: a message that failed and will be tried again keeps what sending
// needs, and so does one not tried yet; the row's error and the log's warning hold no address.
func TestOutboxKeepsMailToRetry(t *testing.T) {
	forEachDialect(t, func(t *testing.T, mt *mailTest) {
		srv := startSMTP(t, "127.0.0.1:0")
		srv.mu.Lock()
		srv.refuseRcpt = 1
		srv.mu.Unlock()
		msgs := testMails(2)
		later := testMails(3)[2]
		later.NextAttemptAt = mt.clock.Now().Add(time.Hour)
		mt.MustEnqueue(t, append(msgs, later)...)
		var logs bytes.Buffer
		o := access.NewOutbox(mt.mail, MustSMTPMailer(t, srv.url("smtp", testPassword, "")), slog.New(slog.NewTextHandler(&logs, nil)))
		o.Now = mt.clock.Now
		sent, failed, err := o.DeliverDue(context.Background())
		if err != nil || sent != 1 || failed != 1 {
			t.Fatalf("DeliverDue = %d sent, %d failed, %v; want 1, 1, nil", sent, failed, err)
		}
		rows := mt.outboxRows(t)
		if len(rows) != 3 {
			t.Fatalf("%d rows, want 3", len(rows))
		}
		for i, m := range append(msgs, later) {
			r := rows[i]
			if i == 1 {
				if r.body != "" || strings.Contains(r.recipient, "@") {
					t.Errorf("delivered message: body %q, recipient %q; want them erased", r.body, r.recipient)
				}
				continue
			}
			if r.recipient != m.To || r.subject != m.Subject || r.body != m.Body || r.sent {
				t.Errorf("message %d, still to send, holds %+v; want %+v whole", i, r, m)
			}
		}
		if !strings.Contains(rows[0].errMsg, "451") || strings.Contains(rows[0].errMsg, "dev0") {
			t.Errorf("the failed message's error is %q: want the 451 without the address", rows[0].errMsg)
		}
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "domain=example.com") || strings.Contains(logs.String(), "dev0") {
			t.Errorf("the warning must name the domain and not the address:\n%s", logs.String())
		}
		// The retry sends it whole.
		mt.clock.Add(2 * time.Hour)
		if sent, failed, err := o.DeliverDue(context.Background()); err != nil || sent != 2 || failed != 0 {
			t.Fatalf("retry: DeliverDue = %d sent, %d failed, %v; want 2, 0, nil", sent, failed, err)
		}
		got := srv.received()
		if len(got) != 3 || got[1].to != "dev0@example.com" || !strings.Contains(string(got[1].data), "Hello 0.") {
			t.Fatalf("server received %d messages, the retried one to %q", len(got), got[1].to)
		}
	})
}
