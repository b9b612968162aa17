package server_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// defaultMail runs a test server on the mail budgets serve runs with (DefaultMailLimits) and the
// demo key on its Default plans, so that set-up mails nobody.
func defaultMail(c *serverConfig) {
	c.DefaultPlans = true
	c.MailLimits = access.DefaultMailLimits
}

// clientAt is an HTTP client whose connections come from the loopback address ip, which the
// server counts as a client address of its own.
func clientAt(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// postFrom posts body to the server's path with c and returns the answer.
func (s *testServer) postFrom(t testing.TB, c *http.Client, path string, headers map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// signUpFrom signs email up from c and returns the answer as one comparable string: status,
// Retry-After and body.
func (s *testServer) signUpFrom(t testing.TB, c *http.Client, email string) string {
	t.Helper()
	code, h, body := s.postFrom(t, c, "/portal/graphql", nil, signUpBody(email))
	return fmt.Sprintf("%d retry-after=%q %s", code, h.Get("Retry-After"), body)
}

// mailboxMails counts the outbox messages queued since set-up to any spelling of mailbox.
func (s *testServer) mailboxMails(t testing.TB, mailbox string) int {
	t.Helper()
	rows, err := storetest.SQL(t, s.db).Query(`SELECT recipient FROM mail_outbox WHERE id > `+placeholder(s.db, 1), s.mailMark)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var to string
		if err := rows.Scan(&to); err != nil {
			t.Fatal(err)
		}
		if flightgraph.CanonicalMailbox(to) == mailbox {
			n++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// spelling is the i-th of many spellings of the mailbox local@domain: in capitals, with a +tag,
// and at Gmail with dots.
func spelling(local, domain string, i int) string {
	if domain == "gmail.com" && i%3 == 1 {
		at := 1 + i%(len(local)-1)
		local = local[:at] + "." + local[at:]
	}
	if i%2 == 1 {
		local = strings.ToUpper(local)
	}
	if i%4 != 0 {
		local += "+" + strconv.Itoa(i)
	}
	if i%5 == 2 {
		domain = strings.ToUpper(domain)
	}
	return local + "@" + domain
}

// TestSignUpMailBudget: sign-ups to many spellings of one mailbox, from four client addresses,
// mail it its budget and no more, for a new address and for a registered one alike; every answer,
// over the budget or not, registered or not, is the same bytes; what is over the budget records
// nothing and costs no password hash.
func TestSignUpMailBudget(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), defaultMail)
		clients := []*http.Client{clientAt("127.0.0.2"), clientAt("127.0.0.3"), clientAt("127.0.0.4"), clientAt("127.0.0.5")}
		budget := access.DefaultMailLimits.Mailbox
		registered := strings.Split(s.demo.DeveloperEmail, "@")
		hashes, signups := s.srv.Hashes.Computed(), s.count(t, "signups")
		answers := map[string]int{}
		for _, mb := range [][2]string{{"victim", "example.org"}, {"victimone", "gmail.com"}, {registered[0], registered[1]}} {
			for i := range 12 {
				answers[s.signUpFrom(t, clients[i%len(clients)], spelling(mb[0], mb[1], i))]++
			}
			if n := s.mailboxMails(t, mb[0]+"@"+mb[1]); n != budget {
				t.Errorf("%s@%s: %d mails for 12 sign-ups, want its budget, %d", mb[0], mb[1], n, budget)
			}
		}
		if len(answers) != 1 {
			t.Errorf("the answers differ: %v", answers)
		}
		for a := range answers {
			if !strings.HasPrefix(a, `200 retry-after="" `) || !strings.Contains(a, access.SignUpAnswer) {
				t.Errorf("answered %s", a)
			}
		}
		var links int
		if err := storetest.SQL(t, s.db).QueryRow(`SELECT COUNT(*) FROM mail_outbox WHERE subject LIKE 'Confirm your address%' AND id > `+placeholder(s.db, 1), s.mailMark).Scan(&links); err != nil {
			t.Fatal(err)
		}
		if n := s.count(t, "signups") - signups; n != links || links < 2*budget {
			t.Errorf("%d sign-ups recorded, %d links mailed: the ones over the budget record nothing", n, links)
		}
		if n := s.srv.Hashes.Computed() - hashes; n != int64(3*budget) {
			t.Errorf("%d password hashes for 36 sign-ups, want %d: a sign-up over the budget costs none", n, 3*budget)
		}
	})
}

// TestSignUpMailBudgetPerClient: one client address has its budget of mail to anyone, so that it
// cannot mail a thousand mailboxes either; another address is not held by it.
func TestSignUpMailBudgetPerClient(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), defaultMail)
	eve, other := clientAt("127.0.0.2"), clientAt("127.0.0.3")
	budget := access.DefaultMailLimits.Client
	answers := map[string]int{}
	for i := range budget + 5 {
		answers[s.signUpFrom(t, eve, fmt.Sprintf("person%d@example.com", i))]++
	}
	if n := s.lastMail(t) - s.mailMark; n != int64(budget) {
		t.Errorf("%d mails from one address, want its budget, %d", n, budget)
	}
	if len(answers) != 1 {
		t.Errorf("the answers differ: %v", answers)
	}
	s.signUpFrom(t, other, "person0@example.com")
	if n := len(s.mailsTo(t, "person0@example.com")); n != 2 {
		t.Errorf("another address's sign-up: %d mails to person0, want 2", n)
	}
}

// TestMailBusy: past the replica's mails for the minute, whatever would mail answers 429
// MAIL_429.000 with Retry-After, the same for a registered address as for a new one, and queues
// nothing: sign-up, mail-my-search on REST and on GraphQL.
func TestMailBusy(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) {
			defaultMail(c)
			c.MailLimits.ReplicaPerMinute = 3
		})
		c := clientAt("127.0.0.2")
		for _, to := range []string{"a@example.com", "b@example.com", "c@example.com"} {
			s.signUpFrom(t, c, to)
		}
		queued, hashes := s.lastMail(t), s.srv.Hashes.Computed()
		known, unknown := s.signUpFrom(t, c, s.demo.DeveloperEmail), s.signUpFrom(t, clientAt("127.0.0.3"), "d@example.com")
		if known != unknown || !strings.HasPrefix(known, "429 retry-after=") || strings.HasPrefix(known, `429 retry-after=""`) ||
			!strings.Contains(known, flightgraph.ECodeMailBusy) {
			t.Errorf("sign-ups past the minute's mails:\n  registered: %s\n  new:        %s", known, unknown)
		}
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		code, h, body := s.postFrom(t, c, "/opendata/offers/v1/mail-my-search", bearer, jsonOf(map[string]any{"email": "e@example.com", "search": offerSearch("AMS", "NYC", "ADT")}))
		if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || restCode(t, body) != flightgraph.ECodeMailBusy {
			t.Errorf("mail-my-search: %d Retry-After %q %s", code, h.Get("Retry-After"), body)
		}
		r := s.queryAs(t, bearer, `mutation($e: String!, $s: OfferSearchInput!) { mailMySearch(email: $e, search: $s) { id } }`,
			map[string]any{"e": "e@example.com", "s": gqlSearch("AMS", "NYC", "ADT")})
		if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != flightgraph.ECodeMailBusy {
			t.Errorf("mailMySearch: %+v", r.Errors)
		}
		if s.lastMail(t) != queued || s.srv.Hashes.Computed() != hashes {
			t.Error("a refused mail was queued, or its sign-up hashed a password")
		}
	})
}

// TestMailMySearchSpendsTheMailBudget: mail-my-search spends the mailbox's budget with the
// sign-ups, however the address is spelt, and the client address's, within its own daily counts:
// past either, OFFER_429.000 with the wait, and nothing recorded.
func TestMailMySearchSpendsTheMailBudget(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.MailLimits = access.DefaultMailLimits })
	c := clientAt("127.0.0.2")
	budget := access.DefaultMailLimits.Mailbox
	for i := range budget - 2 {
		s.signUpFrom(t, c, spelling("traveller", "example.com", i))
	}
	bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
	mail := func(c *http.Client, email string) (int, http.Header, string) {
		return s.postFrom(t, c, "/opendata/offers/v1/mail-my-search", bearer, jsonOf(map[string]any{"email": email, "search": offerSearch("AMS", "NYC", "ADT")}))
	}
	for _, to := range []string{"Traveller+trip@example.com", "traveller@EXAMPLE.com"} {
		if code, _, body := mail(c, to); code != http.StatusAccepted {
			t.Fatalf("mail-my-search within the mailbox's budget: %d %s", code, body)
		}
	}
	code, h, body := mail(clientAt("127.0.0.3"), "traveller+late@example.com")
	if wait, _ := strconv.Atoi(h.Get("Retry-After")); code != http.StatusTooManyRequests || restCode(t, body) != flightgraph.ECodeTooManyMails ||
		wait < 1 || wait > int(access.MailWindow/time.Second) {
		t.Errorf("mail-my-search past the mailbox's budget: %d Retry-After %q %s", code, h.Get("Retry-After"), body)
	}
	if n := s.mailboxMails(t, "traveller@example.com"); n != budget {
		t.Errorf("%d mails to the mailbox, want %d", n, budget)
	}

	// The client's budget: its sign-ups so far, then searches to other mailboxes.
	mark := s.lastMail(t)
	sent := int64(budget)
	for i := 0; sent < int64(access.DefaultMailLimits.Client); i++ {
		if code, _, body := mail(c, fmt.Sprintf("friend%d@example.com", i)); code != http.StatusAccepted {
			t.Fatalf("mail-my-search %d within the client's budget: %d %s", sent+1, code, body)
		}
		sent++
	}
	if code, _, body := mail(c, "one-more@example.com"); code != http.StatusTooManyRequests || restCode(t, body) != flightgraph.ECodeTooManyMails {
		t.Errorf("mail-my-search past the client's budget: %d %s", code, body)
	}
	if n := s.lastMail(t) - mark; n != int64(access.DefaultMailLimits.Client-budget) {
		t.Errorf("%d mails queued, want %d", n, access.DefaultMailLimits.Client-budget)
	}
}

// TestOperatorMailBudget: a developer's many key requests are all made, but tell the operators
// only the account's budget of times; the operator's decisions on them all reach the developer,
// past the mailbox's budget, and spend it, so that sign-ups then mail the mailbox nothing.
func TestOperatorMailBudget(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), defaultMail)
	dev, op := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword), s.oaOperator(t)
	var subs []string
	for a := range 2 {
		var app struct{ RegisterApplication struct{ ID string } }
		dev.do(t, `mutation($in: ApplicationInput!) { registerApplication(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": fmt.Sprintf("Many keys %d", a), "description": "mail budget"}}, &app)
		for range 4 {
			var key struct {
				RequestKey struct {
					Key struct{ Subscriptions []struct{ ID string } }
				}
			}
			dev.do(t, `mutation($in: RequestKeyInput!) { requestKey(input: $in) { key { subscriptions { id } } } }`,
				map[string]any{"in": map[string]any{"applicationId": app.RegisterApplication.ID, "api": "flightstatus"}}, &key)
			subs = append(subs, key.RequestKey.Key.Subscriptions[0].ID)
		}
	}
	if n, want := len(s.mailsTo(t, s.demo.OperatorEmail)), access.DefaultMailLimits.Account; n != want {
		t.Errorf("the operator got %d mails of 8 key requests, want the account's budget, %d", n, want)
	}
	var pending struct{ PendingSubscriptions []struct{ ID string } }
	op.do(t, `{ pendingSubscriptions { id } }`, nil, &pending)
	if len(pending.PendingSubscriptions) < len(subs) {
		t.Errorf("%d requests wait on the desk, want all %d", len(pending.PendingSubscriptions), len(subs))
	}
	for _, id := range subs {
		op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": id}, nil)
	}
	if n := len(s.mailsTo(t, s.demo.DeveloperEmail)); n != len(subs) {
		t.Errorf("the developer was told of %d of %d decisions", n, len(subs))
	}
	s.signUpFrom(t, clientAt("127.0.0.2"), s.demo.DeveloperEmail)
	if n := len(s.mailsTo(t, s.demo.DeveloperEmail)); n != len(subs) {
		t.Errorf("a sign-up mailed a mailbox whose budget the decisions spent: %d mails", n)
	}
}

// TestMailBudgetReplicas: two replicas sharing Redis share the mailbox's budget, and Redis holds
// no address; while Redis is unreachable each replica counts on its own and still bounds it.
func TestMailBudgetReplicas(t *testing.T) {
	rc, prefix := storetest.RedisClient(t)
	proxy := newTCPProxy(t, rc.Options().Addr)
	opts := *rc.Options()
	opts.Addr, opts.MaxRetries, opts.DialTimeout = proxy.Addr(), -1, 200*time.Millisecond
	db := storetest.Open(t, store.SQLite, os.Getenv)
	a := mailReplica(t, db, &opts, prefix, nil)
	b := mailReplica(t, db, &opts, prefix, a)
	clients := []*http.Client{clientAt("127.0.0.2"), clientAt("127.0.0.3")}
	budget := access.DefaultMailLimits.Mailbox
	for i := range 12 {
		[]*testServer{a, b}[i%2].signUpFrom(t, clients[i%2], spelling("shared", "example.net", i))
	}
	if n := a.mailboxMails(t, "shared@example.net"); n != budget {
		t.Errorf("two replicas mailed the mailbox %d times, want its budget, %d", n, budget)
	}
	keys, err := rc.Keys(t.Context(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) == 0 {
		t.Error("nothing counted in Redis")
	}
	for _, k := range keys {
		if strings.Contains(k, "shared") || strings.Contains(k, "example") || strings.Contains(k, "127.0.0") {
			t.Errorf("Redis key %q names an address", k)
		}
	}

	proxy.Cut()
	for i := range 2 * (budget + 2) {
		[]*testServer{a, b}[i%2].signUpFrom(t, clients[i%2], spelling("outage", "example.net", i))
	}
	if n := a.mailboxMails(t, "outage@example.net"); n != 2*budget {
		t.Errorf("with Redis down, two replicas mailed the mailbox %d times, want each its budget, %d", n, 2*budget)
	}
}

// mailReplica is a server on db, like one replica of several: its mail budget counts in the
// Redis at opts (through a client of its own) under prefix, and in process while that Redis
// fails. first is the replica that seeded the demo accounts, nil for the first.
func mailReplica(t *testing.T, db *store.DB, opts *redis.Options, prefix string, first *testServer) *testServer {
	t.Helper()
	logs := &lockedBuffer{}
	cfg := testConfig(db, logs)
	defaultMail(&cfg)
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	cfg.MailCounts = access.NewMailCountsFallback(access.NewRedisLockout(rdb, prefix), access.NewMemoryLockout(cfg.Now), cfg.Log)
	s := &testServer{db: db, log: logs}
	if first == nil {
		s.srv, s.demo = startServer(t, cfg)
		s.mailMark = s.lastMail(t)
	} else {
		s.srv, s.demo, s.mailMark = cfg.build(), first.demo, first.mailMark
	}
	s.Server = httptest.NewServer(s.srv)
	t.Cleanup(s.Close)
	return s
}
