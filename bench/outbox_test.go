package bench_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/bench"
	"github.com/flightgraph/flightgraph/store"
)

// mailSink is an SMTP server on loopback that accepts every message and counts its recipients.
type mailSink struct {
	mu   sync.Mutex
	rcpt map[string]int
	data int
}

func (k *mailSink) NewSession(*smtp.Conn) (smtp.Session, error) { return &sinkSession{k: k}, nil }

type sinkSession struct {
	k  *mailSink
	to string
}

func (s *sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = to
	return nil
}
func (s *sinkSession) Data(r io.Reader) error {
	io.Copy(io.Discard, r)
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	s.k.rcpt[s.to]++
	s.k.data++
	return nil
}
func (s *sinkSession) Reset()        {}
func (s *sinkSession) Logout() error { return nil }

func (k *mailSink) received() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.data
}

// BenchmarkOutboxKeepsNothing is the bar "the outbox after 1,000 delivered mails: 0 bodies, 0
// plaintext recipients". The built binary delivers, over SMTP to a loopback server, 10 sign-up
// mails asked for through the portal and 990 more queued in its database as the changes that
// mail do (a mail-my-search's subject, a token in the body); then its outbox is read.
func BenchmarkOutboxKeepsNothing(b *testing.B) {
	for range b.N {
		sink := &mailSink{rcpt: map[string]int{}}
		srv := smtp.NewServer(sink)
		srv.Domain, srv.AllowInsecureAuth = "localhost", true
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		go srv.Serve(ln)
		s := bench.Start(b, nil, "--smtp-url", "smtp://"+ln.Addr().String()+"?from=noreply@flightgraph.example")

		const viaPortal, queued = 10, 990
		c := bench.ClientFrom("127.0.0.3", 10*time.Second)
		for i := range viaPortal {
			body, _ := json.Marshal(map[string]any{
				"query":     `mutation($in: SignUpInput!) { signUp(input: $in) { message } }`,
				"variables": map[string]any{"in": map[string]string{"email": fmt.Sprintf("signup%d@example.com", i), "password": "correct horse battery", "name": "Ada"}},
			})
			resp, err := c.Post(s.URL+"/portal/graphql", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"message"`) {
				b.Fatalf("sign-up %d: %d %s", i, resp.StatusCode, answer)
			}
		}
		path := filepath.Join(s.DataDir, "flightgraph.db")
		db, err := store.Open(context.Background(), "sqlite:"+path)
		if err != nil {
			b.Fatal(err)
		}
		mails := make([]*flightgraph.Mail, queued)
		for i := range mails {
			mails[i] = &flightgraph.Mail{To: fmt.Sprintf("Traveller %d <traveller%d+trips@example.com>", i, i),
				Subject: fmt.Sprintf("Your search: FRA to JFK on 2026-12-%02d", i%28+1),
				Body:    fmt.Sprintf("Hello,\n\nopen %s/portal/verify?token=fgsu_%06d\n", s.URL, i)}
		}
		start := time.Now()
		err = store.NewAccessStore(db).InTx(context.Background(), func(tx flightgraph.AccessTx) error {
			for _, m := range mails {
				if err := tx.EnqueueMail(context.Background(), m); err != nil {
					return err
				}
			}
			return nil
		})
		db.Close()
		if err != nil {
			b.Fatal(err)
		}
		// The outbox passes every 10 s, and goes on while its passes are full.
		deadline := time.Now().Add(2 * time.Minute)
		for sink.received() < viaPortal+queued && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		delivered := sink.received()
		took := time.Since(start)
		cpu := s.CPU(b)
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
		srv.Close()

		raw, err := sql.Open("sqlite", path)
		if err != nil {
			b.Fatal(err)
		}
		var rows, sent, bodies, plain, routes int
		err = raw.QueryRow(`SELECT COUNT(*), COUNT(sent_at),
			COUNT(CASE WHEN body <> '' THEN 1 END),
			COUNT(CASE WHEN recipient LIKE '%@%' OR last_error LIKE '%@%' THEN 1 END),
			COUNT(CASE WHEN subject LIKE '%FRA%' THEN 1 END) FROM mail_outbox`).Scan(&rows, &sent, &bodies, &plain, &routes)
		raw.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(delivered), "delivered")
		b.ReportMetric(float64(bodies), "bodies")
		b.ReportMetric(float64(plain), "plaintext_recipients")
		b.ReportMetric(float64(routes), "subjects_with_route")
		b.ReportMetric(cpu.Seconds(), "server_cpu_s")
		b.Logf("%d mails delivered in %v (the outbox's next pass included); outbox: %d rows, %d sent, %d bodies, %d plaintext recipients, %d subjects with the route",
			delivered, took.Round(time.Millisecond), rows, sent, bodies, plain, routes)
		if delivered != viaPortal+queued || sent != delivered || bodies != 0 || plain != 0 || routes != 0 {
			b.Fatalf("after %d delivered mails (want %d), the outbox holds %d sent rows, %d bodies, %d plaintext recipients, %d subjects with the route; want 0 of each",
				delivered, viaPortal+queued, sent, bodies, plain, routes)
		}
	}
}
