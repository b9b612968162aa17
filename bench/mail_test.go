package bench_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/bench"
)

// codeRE finds an error's code in an answer.
var codeRE = regexp.MustCompile(`"code":"([A-Z_]+[0-9]+\.[0-9]+)"`)

// signUpAnswer is signUp's one answer, as the portal's GraphQL sends it.
var signUpAnswer = `{"data":{"signUp":{"message":"` + access.SignUpAnswer + `"}}}`

// floodMailbox is the mailbox the flood aims at, at Gmail so that dots are spellings too.
const floodMailbox = "victim.mailbox@gmail.com"

// floodSpelling is the i-th of 1,000 spellings of floodMailbox: dots moved, letters in capitals,
// a +tag, the googlemail.com domain.
func floodSpelling(i int) string {
	local := "victimmailbox"
	if at := i % len(local); at > 0 {
		local = local[:at] + "." + local[at:]
	}
	if i%2 == 1 {
		local = strings.ToUpper(local[:1]) + local[1:]
	}
	domain := "gmail.com"
	if i%3 == 2 {
		domain = "GoogleMail.com"
	}
	return fmt.Sprintf("%s+%d@%s", local, i, domain)
}

// BenchmarkSignUpFlood is the bar of issue 18 for mail: 60 s of sign-ups (the portal's signUp)
// to 1,000 spellings of one mailbox, from four client addresses, deliver at most the mailbox's
// budget (access.DefaultMailLimits.Mailbox in 15 minutes). It reports the budget, the mails
// delivered (the outbox's sent rows, all of which go to that mailbox), the requests sent and their
// answers, and the server's CPU.
//
//	go test ./bench -run '^$' -bench SignUpFlood -benchtime 1x
func BenchmarkSignUpFlood(b *testing.B) {
	const (
		spellings = 1000
		duration  = 60 * time.Second
		workers   = 16
	)
	for range b.N {
		for i := range spellings {
			if got := flightgraph.CanonicalMailbox(floodSpelling(i)); got != flightgraph.CanonicalMailbox(floodMailbox) {
				b.Fatalf("spelling %d, %s, is mailbox %s", i, floodSpelling(i), got)
			}
		}
		s := bench.Start(b, nil)
		clients := []*http.Client{bench.ClientFrom("127.0.0.2", 10*time.Second), bench.ClientFrom("127.0.0.3", 10*time.Second),
			bench.ClientFrom("127.0.0.4", 10*time.Second), bench.ClientFrom("127.0.0.5", 10*time.Second)}
		var (
			next, sent, failed atomic.Int64
			mu                 sync.Mutex
			answers            = map[string]int{} // status and body
			lat                bench.Latencies
		)
		cpu := s.CPU(b)
		start := time.Now()
		bench.Run(context.Background(), workers, duration, func(ctx context.Context, worker int) {
			body := fmt.Sprintf(`{"query":"mutation($in: SignUpInput!) { signUp(input: $in) { message } }","variables":{"in":{"email":%q,"password":"a password of mine","name":"Flood"}}}`,
				floodSpelling(int(next.Add(1)-1)%spellings))
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/portal/graphql", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			t0 := time.Now()
			resp, err := clients[worker%len(clients)].Do(req)
			if err != nil {
				if ctx.Err() == nil {
					failed.Add(1)
				}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			lat.Add(time.Since(t0))
			sent.Add(1)
			key := fmt.Sprintf("%d %s", resp.StatusCode, b)
			if m := codeRE.FindSubmatch(b); resp.StatusCode == http.StatusTooManyRequests && m != nil {
				key = "429 " + string(m[1]) // the wait in the message differs
			}
			mu.Lock()
			answers[key]++
			mu.Unlock()
		})
		elapsed := time.Since(start)
		used := s.CPU(b) - cpu
		hashes := s.Metric(b, "flightgraph_password_hashes_total")
		// The outbox delivers within a second of a mail's queueing; give it time, then read the
		// outbox of the stopped server.
		time.Sleep(3 * time.Second)
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
		delivered, queued, elsewhere := outboxCounts(b, s.DataDir)

		budget := access.DefaultMailLimits.Mailbox
		var ok200, busy, limited, other int
		for k, n := range answers {
			switch k {
			case "429 " + flightgraph.ECodeMailBusy:
				busy += n
			case "429 " + flightgraph.ECodePerSecondLimit: // an anonymous address's uncharged calls, 20/s
				limited += n
			case "200 " + signUpAnswer:
				ok200 += n
			default:
				other += n
				b.Logf("answer ×%d: %.300s", n, k)
			}
		}
		b.ReportMetric(float64(budget), "budget")
		b.ReportMetric(float64(delivered), "delivered")
		b.ReportMetric(float64(sent.Load()), "requests")
		b.ReportMetric(float64(ok200), "answered-200")
		b.ReportMetric(float64(busy), "answered-429-mail")
		b.ReportMetric(float64(limited), "answered-429-rate")
		b.ReportMetric(float64(other), "answered-other")
		b.ReportMetric(float64(failed.Load()), "failed")
		b.ReportMetric(hashes, "password-hashes")
		b.ReportMetric(used.Seconds(), "cpu-s")
		b.ReportMetric(used.Seconds()/elapsed.Seconds()/float64(bench.Cores()), "cpu-share")
		b.ReportMetric(float64(lat.Quantile(0.5).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat.Quantile(0.99).Microseconds())/1000, "p99-ms")
		b.Logf("%d sign-ups in %v from 4 addresses to %d spellings of %s: %d answered 200 with the one answer, %d 429 MAIL_429.000, %d 429 LIMIT_429.000, %d other, %d failed; "+
			"%d mails queued, %d delivered, %d of them elsewhere (budget %d); %.0f password hashes; server CPU %.1f s (%.0f%% of %d cores)",
			sent.Load(), elapsed.Round(time.Second), spellings, floodMailbox, ok200, busy, limited, other, failed.Load(),
			queued, delivered, elsewhere, budget, hashes, used.Seconds(), 100*used.Seconds()/elapsed.Seconds()/float64(bench.Cores()), bench.Cores())
		switch {
		case delivered > budget:
			b.Fatalf("%d mails delivered to one mailbox, over its budget of %d", delivered, budget)
		case delivered == 0 || elsewhere > 0:
			b.Fatalf("%d mails delivered, %d to other mailboxes: the flood or the count is broken", delivered, elsewhere)
		case other > 0:
			b.Fatalf("%d answers neither the sign-up's nor the mail budget's", other)
		case failed.Load() > 0:
			b.Fatalf("%d requests failed", failed.Load())
		}
	}
}

// outboxCounts reads the outbox of the stopped server's embedded store: the mails delivered, the
// mails queued, and those delivered to another mailbox than floodMailbox, by their recipient
// where the outbox still holds it.
func outboxCounts(b *testing.B, dataDir string) (delivered, queued, elsewhere int) {
	b.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dataDir, "flightgraph.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT recipient, sent_at IS NOT NULL FROM mail_outbox`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			to   string
			sent bool
		)
		if err := rows.Scan(&to, &sent); err != nil {
			b.Fatal(err)
		}
		queued++
		if sent {
			delivered++
			if strings.Contains(to, "@") && flightgraph.CanonicalMailbox(to) != flightgraph.CanonicalMailbox(floodMailbox) {
				elsewhere++
			}
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return delivered, queued, elsewhere
}
