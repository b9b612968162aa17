package access_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// roomy are mail limits that no test meets unless it lowers one of them.
var roomy = access.MailLimits{Mailbox: 1000, MailboxDay: 1000, Client: 1000, ClientDay: 1000, Account: 1000, AccountDay: 1000, ReplicaPerMinute: 1000}

// withLimits returns roomy with change applied.
func withLimits(change func(*access.MailLimits)) access.MailLimits {
	l := roomy
	change(&l)
	return l
}

// eachCounts runs test with budgets counted in process and in Redis: replica returns the budget
// of one more replica, its own minute and its own client of the shared counts.
func eachCounts(t *testing.T, test func(t *testing.T, replica func(access.MailLimits) *access.MailBudget, clock *limitClock)) {
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		clock := newLimitClock(limitBase)
		shared := access.NewMemoryLockout(clock.Now)
		test(t, func(l access.MailLimits) *access.MailBudget { return access.NewMailBudget(shared, l, clock.Now, nil) }, clock)
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		c, prefix := storetest.RedisClient(t)
		clock := newLimitClock(limitBase)
		test(t, func(l access.MailLimits) *access.MailBudget {
			own := redis.NewClient(c.Options())
			t.Cleanup(func() { own.Close() })
			return access.NewMailBudget(access.NewRedisLockout(own, prefix), l, clock.Now, nil)
		}, clock)
	})
}

// from is a request's context from a client address.
func from(address string) context.Context {
	return flightgraph.WithClientAddress(context.Background(), address)
}

func asked(to ...string) flightgraph.MailCharge {
	return flightgraph.MailCharge{Kind: flightgraph.MailAsked, To: to}
}

// mustSpend fails the test unless b lets c's mails go.
func mustSpend(t *testing.T, b *access.MailBudget, ctx context.Context, c flightgraph.MailCharge) {
	t.Helper()
	if err := b.Spend(ctx, c); err != nil {
		t.Fatalf("%+v: %v, want it mailed", c, err)
	}
}

// refused fails the test unless b refuses c with code, a wait within (least, most], and the
// parameter param.
func refused(t *testing.T, b *access.MailBudget, ctx context.Context, c flightgraph.MailCharge, code string, least, most time.Duration, param string) {
	t.Helper()
	err := b.Spend(ctx, c)
	var fe *flightgraph.Error
	if !errors.As(err, &fe) || fe.Code != code || fe.RetryAfter <= least || fe.RetryAfter > most || fe.Parameter != param {
		t.Fatalf("%+v: %v, want %s waiting (%v, %v] on %q", c, err, code, least, most, param)
	}
}

// TestMailBudgetSpellingsShareAMailbox: every spelling of one mailbox (case, +tag, Gmail's dots and
// domains) spends one budget, across replicas; another mailbox has its own, and dots elsewhere
// are another mailbox. Both windows hold: 15 minutes and a day.
func TestMailBudgetSpellingsShareAMailbox(t *testing.T) {
	eachCounts(t, func(t *testing.T, replica func(access.MailLimits) *access.MailBudget, _ *limitClock) {
		l := withLimits(func(l *access.MailLimits) { l.Mailbox = 3 })
		a, b := replica(l), replica(l)
		ctx := context.Background()
		for i, spelling := range []string{"ada+1@example.com", "ADA@EXAMPLE.COM", " ada+news@Example.com "} {
			mustSpend(t, []*access.MailBudget{a, b}[i%2], ctx, asked(spelling))
		}
		refused(t, a, ctx, asked("ada+4@example.com"), flightgraph.ECodeTooManyMails, access.MailWindow-time.Minute, access.MailWindow, "email")
		refused(t, b, ctx, asked("ada@example.com"), flightgraph.ECodeTooManyMails, access.MailWindow-time.Minute, access.MailWindow, "email")
		for i, spelling := range []string{"a.b.c@gmail.com", "ABC@gmail.com", "a.b.c+x@googlemail.com"} {
			mustSpend(t, []*access.MailBudget{a, b}[i%2], ctx, asked(spelling))
		}
		refused(t, a, ctx, asked("abc+y@GMAIL.com"), flightgraph.ECodeTooManyMails, access.MailWindow-time.Minute, access.MailWindow, "email")
		for range 3 {
			mustSpend(t, a, ctx, asked("a.da@example.com")) // dots count outside Gmail
		}
		mustSpend(t, b, ctx, asked("grace@example.com"))

		day := withLimits(func(l *access.MailLimits) { l.MailboxDay = 2 })
		c := replica(day)
		mustSpend(t, c, ctx, asked("lin@example.org"))
		mustSpend(t, c, ctx, asked("Lin+2@example.org"))
		refused(t, c, ctx, asked("lin@example.org"), flightgraph.ECodeTooManyMails, 23*time.Hour, 24*time.Hour, "email")
	})
}

// TestMailBudgetPerClient: one client address has its budget to anyone, in 15 minutes and in a
// day; another address is not held by it, and a refusal names no address.
func TestMailBudgetPerClient(t *testing.T) {
	eachCounts(t, func(t *testing.T, replica func(access.MailLimits) *access.MailBudget, _ *limitClock) {
		b := replica(withLimits(func(l *access.MailLimits) { l.Client = 3 }))
		eve := from("192.0.2.7")
		for _, to := range []string{"a@example.com", "b@example.com", "c@example.com"} {
			mustSpend(t, b, eve, asked(to))
		}
		refused(t, b, eve, asked("d@example.com"), flightgraph.ECodeTooManyMails, access.MailWindow-time.Minute, access.MailWindow, "")
		mustSpend(t, b, from("192.0.2.8"), asked("d@example.com"))

		day := replica(withLimits(func(l *access.MailLimits) { l.ClientDay = 2 }))
		mal := from("2001:db8:1:2::/64")
		mustSpend(t, day, mal, asked("e@example.com"))
		mustSpend(t, day, mal, asked("f@example.com"))
		refused(t, day, mal, asked("g@example.com"), flightgraph.ECodeTooManyMails, 23*time.Hour, 24*time.Hour, "")
	})
}

// TestMailBudgetAllOrNone: a mail refused by one budget spends none of the others: a mailbox's
// refusal costs neither the client's budget nor the replica's minute.
func TestMailBudgetAllOrNone(t *testing.T) {
	eachCounts(t, func(t *testing.T, replica func(access.MailLimits) *access.MailBudget, _ *limitClock) {
		b := replica(withLimits(func(l *access.MailLimits) { l.Client, l.Mailbox, l.ReplicaPerMinute = 2, 1, 3 }))
		eve := from("192.0.2.7")
		mustSpend(t, b, eve, asked("a@example.com"))
		for range 5 {
			refused(t, b, eve, asked("a@example.com"), flightgraph.ECodeTooManyMails, 0, access.MailWindow, "email")
		}
		mustSpend(t, b, eve, asked("b@example.com")) // the client's second: the refusals spent none
		refused(t, b, eve, asked("c@example.com"), flightgraph.ECodeTooManyMails, 0, access.MailWindow, "")
		mustSpend(t, b, from("192.0.2.8"), asked("c@example.com")) // the replica's third
		refused(t, b, from("192.0.2.9"), asked("d@example.com"), flightgraph.ECodeMailBusy, 0, time.Minute, "")
	})
}

// TestMailBudgetReplicaMinute: a replica queues at most its budget a minute, for everyone, and then
// answers ECodeMailBusy with the wait, whatever the address; a notice to several operators counts
// each mail; the minute is each replica's own, and a new one has room again.
func TestMailBudgetReplicaMinute(t *testing.T) {
	eachCounts(t, func(t *testing.T, replica func(access.MailLimits) *access.MailBudget, clock *limitClock) {
		l := withLimits(func(l *access.MailLimits) { l.ReplicaPerMinute = 3 })
		a, b := replica(l), replica(l)
		for _, to := range []string{"a@example.com", "b@example.com", "c@example.com"} {
			mustSpend(t, a, from("192.0.2."+to[:1]), asked(to))
		}
		refused(t, a, from("192.0.2.99"), asked("d@example.com"), flightgraph.ECodeMailBusy, 0, time.Minute, "")
		refused(t, a, from("192.0.2.100"), asked("a@example.com"), flightgraph.ECodeMailBusy, 0, time.Minute, "")
		mustSpend(t, b, from("192.0.2.99"), asked("d@example.com"))
		notice := flightgraph.MailCharge{Kind: flightgraph.MailToOperators, To: []string{"op1@example.com", "op2@example.com", "op3@example.com"}, Account: "acc_1"}
		refused(t, b, from("192.0.2.5"), notice, flightgraph.ECodeMailBusy, 0, time.Minute, "")
		clock.Add(time.Minute)
		mustSpend(t, a, from("192.0.2.99"), asked("d@example.com"))
	})
}

// TestMailBudgetDecisions: an operator's decisions are never refused, by a full mailbox, a full
// minute or failing counts, but count toward the mailbox's budget, which then refuses what is
// asked for it.
func TestMailBudgetDecisions(t *testing.T) {
	eachCounts(t, func(t *testing.T, replica func(access.MailLimits) *access.MailBudget, _ *limitClock) {
		b := replica(withLimits(func(l *access.MailLimits) { l.Mailbox, l.ReplicaPerMinute = 2, 3 }))
		decision := flightgraph.MailCharge{Kind: flightgraph.MailDecision, To: []string{"dev@example.com"}}
		for range 4 {
			mustSpend(t, b, from("192.0.2.1"), decision)
		}
		refused(t, b, from("192.0.2.2"), asked("dev+x@example.com"), flightgraph.ECodeMailBusy, 0, time.Minute, "")
		c := replica(withLimits(func(l *access.MailLimits) { l.Mailbox = 2 }))
		refused(t, c, from("192.0.2.2"), asked("dev+x@example.com"), flightgraph.ECodeTooManyMails, 0, access.MailWindow, "email")
	})
	t.Run("failing counts", func(t *testing.T) {
		b := access.NewMailBudget(&flakyLockout{l: access.NewMemoryLockout(nil)}, roomy, nil, nil)
		b.Counts().(*flakyLockout).down.Store(true)
		mustSpend(t, b, from("192.0.2.1"), flightgraph.MailCharge{Kind: flightgraph.MailDecision, To: []string{"dev@example.com"}})
		if err := b.Spend(from("192.0.2.1"), asked("dev@example.com")); err == nil {
			t.Fatal("a sign-up's mail went uncounted while the counts failed")
		}
	})
}

// TestMailBudgetOperatorNotices: the operators' notices of one account's requests are bounded by
// the account, not by the operators' mailboxes, which others can fill.
func TestMailBudgetOperatorNotices(t *testing.T) {
	eachCounts(t, func(t *testing.T, replica func(access.MailLimits) *access.MailBudget, _ *limitClock) {
		b := replica(withLimits(func(l *access.MailLimits) { l.Account, l.Mailbox = 2, 1 }))
		ops := []string{"op1@example.com", "op2@example.com"}
		mustSpend(t, b, from("192.0.2.66"), asked("op1@example.com"))
		refused(t, b, from("192.0.2.66"), asked("op1+again@example.com"), flightgraph.ECodeTooManyMails, 0, access.MailWindow, "email")
		notice := func(acc string) flightgraph.MailCharge {
			return flightgraph.MailCharge{Kind: flightgraph.MailToOperators, To: ops, Account: acc}
		}
		mustSpend(t, b, from("192.0.2.1"), notice("acc_dev"))
		mustSpend(t, b, from("192.0.2.2"), notice("acc_dev"))
		refused(t, b, from("192.0.2.3"), notice("acc_dev"), flightgraph.ECodeTooManyMails, 0, access.MailWindow, "")
		mustSpend(t, b, from("192.0.2.1"), notice("acc_other"))
	})
}

// TestMailBudgetConcurrent: of 40 mails to one mailbox at once, from two replicas, exactly the
// budget goes.
func TestMailBudgetConcurrent(t *testing.T) {
	eachCounts(t, func(t *testing.T, replica func(access.MailLimits) *access.MailBudget, _ *limitClock) {
		l := withLimits(func(l *access.MailLimits) { l.Mailbox = 5 })
		rs := []*access.MailBudget{replica(l), replica(l)}
		var (
			wg   sync.WaitGroup
			sent atomic.Int32
		)
		for i := range 40 {
			wg.Go(func() {
				if rs[i%2].Spend(from("192.0.2.1"), asked("burst+"+string(rune('a'+i%26))+"@example.com")) == nil {
					sent.Add(1)
				}
			})
		}
		wg.Wait()
		if n := sent.Load(); n != 5 {
			t.Fatalf("%d of 40 mails at once went, want 5", n)
		}
	})
}

// TestMailBudgetKeysHideAddresses: Redis holds hashes, never an address, a client address or an
// account id.
func TestMailBudgetKeysHideAddresses(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	b := access.NewMailBudget(access.NewRedisLockout(c, prefix), roomy, nil, nil)
	mustSpend(t, b, from("192.0.2.77"), asked("ada.lovelace+x@example.com"))
	mustSpend(t, b, from("192.0.2.77"), flightgraph.MailCharge{Kind: flightgraph.MailToOperators, To: []string{"op@example.com"}, Account: "acc_secretid"})
	keys, err := c.Keys(t.Context(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 8 { // mailbox ×2, client ×2 for each; account ×2
		t.Errorf("%d keys: %q", len(keys), keys)
	}
	for _, k := range keys {
		if rest := strings.TrimPrefix(k, prefix); len(rest) != 64 || strings.ContainsAny(rest, "@.:") {
			t.Errorf("key %q is not a hash", k)
		}
	}
}

// TestGuardPutsTheClientAddressInTheContext: what the guard passes on names the client as the
// refusals do: the connection's host, an IPv6 client by its /64, never X-Forwarded-For.
func TestGuardPutsTheClientAddressInTheContext(t *testing.T) {
	g := &access.Guard{}
	for remote, want := range map[string]string{
		"192.0.2.7:51000":                        "192.0.2.7",
		"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2::9]:443":                  "2001:db8:1:2::/64",
		"[::ffff:192.0.2.7]:80":                  "::ffff:192.0.2.7",
	} {
		var got string
		h := g.Authenticated(func(w http.ResponseWriter, r *http.Request, err error) { t.Errorf("%s: refused: %v", remote, err) })(
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = flightgraph.ClientAddressFromContext(r.Context()) }))
		r := httptest.NewRequest(http.MethodPost, "/portal/graphql", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", "198.51.100.1")
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != want {
			t.Errorf("%s: the context names %q, want %q", remote, got, want)
		}
	}
}
