package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// pageDeveloper signs up a developer with an application and one key, approved for each of apis
// (the first requested with the key, the others added to it). It returns the developer, the
// key's api-key and the subscriptions' ids in the order of apis.
func pageDeveloper(t *testing.T, s *testServer, op *portal, email string, apis ...string) (*portal, string, []string) {
	t.Helper()
	dev := s.signUp(t, email, developerPassword, "Dev")
	var reg struct{ RegisterApplication struct{ ID string } }
	dev.do(t, `mutation { registerApplication(input: {name: "App", description: "d"}) { id } }`, nil, &reg)
	var rk struct {
		RequestKey struct {
			Key struct {
				ID, APIKey    string
				Subscriptions []struct{ ID string }
			}
		}
	}
	dev.do(t, `mutation($a: ID!, $api: String!) { requestKey(input: {applicationId: $a, api: $api}) { key { id apiKey subscriptions { id } } } }`,
		map[string]any{"a": reg.RegisterApplication.ID, "api": apis[0]}, &rk)
	subs := []string{rk.RequestKey.Key.Subscriptions[0].ID}
	for _, api := range apis[1:] {
		var add struct{ AddAPIToApplication struct{ ID string } }
		dev.do(t, `mutation($k: ID!, $api: String!) { addApiToApplication(input: {keyId: $k, api: $api}) { id } }`,
			map[string]any{"k": rk.RequestKey.Key.ID, "api": api}, &add)
		subs = append(subs, add.AddAPIToApplication.ID)
	}
	for _, id := range subs {
		op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { id } }`, map[string]any{"id": id}, nil)
	}
	return dev, rk.RequestKey.Key.APIKey, subs
}

// pageSubscription is a subscription as the pages' queries read it.
type pageSubscription struct {
	ID            string
	UsageToday    int
	Usage         []struct{ Day, Calls any }
	LimitRequests []struct{ ID, Description, Status, Reply string }
}

// days shows a usage history as day=calls.
func (p pageSubscription) days() []string {
	var out []string
	for _, d := range p.Usage {
		out = append(out, fmt.Sprintf("%v=%v", d.Day, d.Calls))
	}
	return out
}

// mySubscriptions runs a query of me's subscriptions (fields: what to select of each, with the
// Int variables vars) and returns them by id.
func (p *portal) mySubscriptions(t *testing.T, fields string, vars map[string]any) map[string]pageSubscription {
	t.Helper()
	var me struct {
		Me struct {
			Applications []struct {
				Keys []struct{ Subscriptions []pageSubscription }
			}
		}
	}
	var params []string
	for name := range vars {
		params = append(params, "$"+name+": Int")
	}
	decl := ""
	if len(params) > 0 {
		decl = "(" + strings.Join(params, ", ") + ")"
	}
	p.do(t, `query`+decl+` { me { applications { keys { subscriptions { id `+fields+` } } } } }`, vars, &me)
	out := map[string]pageSubscription{}
	for _, app := range me.Me.Applications {
		for _, k := range app.Keys {
			for _, sub := range k.Subscriptions {
				out[sub.ID] = sub
			}
		}
	}
	return out
}

// failsWith runs an operation that must fail with code naming parameter, with a message that
// says what is wrong.
func (p *portal) failsWith(t *testing.T, code, parameter, message, q string, vars map[string]any) {
	t.Helper()
	resp := p.try(t, q, vars)
	if len(resp.Errors) == 0 {
		t.Fatalf("%s %v: no error, data %s", firstLine(q), vars, resp.Data)
	}
	e := resp.Errors[0]
	if e.Extensions["code"] != code || e.Extensions["parameter"] != parameter || !strings.Contains(e.Message, message) {
		t.Errorf("%s %v: %q %v, want %s naming %s and saying %q", firstLine(q), vars, e.Message, e.Extensions, code, parameter, message)
	}
}

// TestUsageHistory: a subscription's usage history on the portal has one entry per UTC day,
// oldest first and today last, zero days included; it counts a call made a moment ago, before
// any flush, and a stored day, and a flush changes none of it. The owner and the operators read
// it; another developer reaches neither it nor the operators' lists. days out of 1..90 is
// refused with INSP_400.001 naming days.
func TestUsageHistory(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		uma, apiKey, subs := pageDeveloper(t, s, op, "uma@example.com", "flightstatus")
		sub := subs[0]
		today := storetest.Now.UTC()
		day := func(back int) string { return today.AddDate(0, 0, -back).Format(flightgraph.DateLayout) }

		// Three days ago: 7 calls, stored. Now: one call, not stored yet.
		for range 7 {
			s.srv.Usage.Add(sub, day(3), 1)
		}
		if err := s.srv.Usage.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if code, _, body := s.call(t, http.MethodGet, "/opendata/flightstatus/v1/ping", map[string]string{"api-key": apiKey}, ""); code != http.StatusOK {
			t.Fatalf("a call with the key: %d %s", code, body)
		}
		want := []string{day(4) + "=0", day(3) + "=7", day(2) + "=0", day(1) + "=0", day(0) + "=1"}
		check := func(when string) {
			t.Helper()
			got := uma.mySubscriptions(t, `usageToday usage(days: $days) { day calls }`, map[string]any{"days": 5})[sub]
			if !slices.Equal(got.days(), want) || got.UsageToday != 1 {
				t.Errorf("%s: usage %v, usageToday %d; want %v and 1", when, got.days(), got.UsageToday, want)
			}
		}
		check("before a flush")
		if err := s.srv.Usage.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		check("after a flush")

		// An operator reads it through the operators' lists, where the default of 30 days and the
		// most, 90, fit an operation's cost (through me, every list on a subscription is counted
		// for the most subscriptions an account can have); fields asking for different days agree.
		uma.do(t, `mutation($s: ID!) { requestLimitIncrease(input: {subscriptionId: $s, description: "More.", estimatedPerSecond: 10, estimatedPerDay: 10000}) { id } }`,
			map[string]any{"s": sub}, nil)
		type daily struct {
			Day   string
			Calls int
		}
		var lists struct {
			LimitIncreaseRequests []struct {
				Subscription struct {
					ID                         string
					Usage, Week, Five, Quarter []daily
				}
			}
		}
		op.do(t, `{ limitIncreaseRequests(status: PENDING) { subscription { id usage { day calls } week: usage(days: 7) { day calls }
			five: usage(days: 5) { day calls } quarter: usage(days: 90) { day calls } } } }`, nil, &lists)
		found := false
		for _, r := range lists.LimitIncreaseRequests {
			got := r.Subscription
			if got.ID != sub {
				continue
			}
			found = true
			var five []string
			for _, d := range got.Five {
				five = append(five, fmt.Sprintf("%s=%d", d.Day, d.Calls))
			}
			if !slices.Equal(five, want) {
				t.Errorf("the operator reads %v, want %v", five, want)
			}
			if len(got.Usage) != 30 || got.Usage[0].Day != day(29) || got.Usage[29].Day != day(0) || len(got.Week) != 7 || len(got.Quarter) != 90 {
				t.Fatalf("usage: %d days from %v, week %d, quarter %d", len(got.Usage), got.Usage[0], len(got.Week), len(got.Quarter))
			}
			if !slices.Equal(got.Week, got.Quarter[83:]) || !slices.Equal(got.Usage, got.Quarter[60:]) || got.Quarter[86].Calls != 7 {
				t.Errorf("histories of different days disagree: %v / %v", got.Week, got.Quarter[83:])
			}
		}
		if !found {
			t.Fatal("the operator does not see the request")
		}
		byOperator := `query($days: Int) { limitIncreaseRequests { subscription { usage(days: $days) { calls } } } }`
		for _, days := range []int{0, -1, 91} {
			op.failsWith(t, flightgraph.ECodeInvalidParameter, "days", "between 1 and 90", byOperator, map[string]any{"days": days})
		}
		// A size past any page is refused by the operation's cost, before anything runs.
		op.fails(t, flightgraph.ECodeQueryCost, byOperator, map[string]any{"days": 1_000_000})

		// Another developer sees only their own subscription, and none of the operators' lists.
		vic, _, vicSubs := pageDeveloper(t, s, op, "vic@example.com", "flightstatus")
		mine := vic.mySubscriptions(t, `usage(days: 5) { day calls }`, nil)
		if len(mine) != 1 || mine[vicSubs[0]].days()[3] != day(1)+"=0" {
			t.Errorf("vic's subscriptions: %+v", mine)
		}
		resp := vic.try(t, `{ limitIncreaseRequests { subscription { usage { calls } limitRequests { reply } } } }`, nil)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeOperatorsOnly || strings.Contains(string(resp.Data), "calls") {
			t.Errorf("another developer through the operators' list: %s %+v", resp.Data, resp.Errors)
		}
	})
}

// TestPageReadsAreBatched: a page of a key's subscriptions with their usage and limit requests
// reads them in a constant number of queries (for a developer: the owners and the rows, for each
// of the two), not a few per subscription.
func TestPageReadsAreBatched(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		// The loaders wait 20 ms for their keys here, not a fraction of a millisecond: under -race
		// on a loaded CI machine the subscriptions' goroutines outlasted the short wait and split
		// the batches (6 queries, not 4, in the best of three). What is tested is that the reads
		// are batched, not how soon.
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) { c.Server.LoaderWait = 20 * time.Millisecond })
		op := s.oaOperator(t)
		apis := []string{"flightstatus", "inspire", "schedule", "opendata", "baggage"}
		dev, _, _ := pageDeveloper(t, s, op, "bea@example.com", apis...)
		queries := func(fields string) int64 {
			if subs := dev.mySubscriptions(t, fields, nil); len(subs) != len(apis) {
				t.Fatalf("%d subscriptions", len(subs))
			}
			return s.queries.Load()
		}
		// The best of three is counted, all the same.
		extra := int64(1 << 30)
		for range 3 {
			extra = min(extra, queries(`usage(days: 7) { calls } limitRequests(first: 1) { status }`)-queries(`status`))
		}
		t.Logf("usage and limit requests of %d subscriptions: %d more queries", len(apis), extra)
		if extra > 4 {
			t.Errorf("usage and limit requests of %d subscriptions cost %d more queries, want 4", len(apis), extra)
		}
	})
}

// TestLimitRequestsOnThePortal: a subscription lists its limit requests with their status and the
// operator's reply, for its owner and the operators; first is 1 to 20.
func TestLimitRequestsOnThePortal(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		lee, _, subs := pageDeveloper(t, s, op, "lee@example.com", "flightstatus")
		sub := subs[0]
		ask := func(description string) string {
			var lr struct{ RequestLimitIncrease struct{ ID string } }
			lee.do(t, `mutation($s: ID!, $d: String!) { requestLimitIncrease(input: {subscriptionId: $s, description: $d, estimatedPerSecond: 10, estimatedPerDay: 10000}) { id } }`,
				map[string]any{"s": sub, "d": description}, &lr)
			return lr.RequestLimitIncrease.ID
		}
		declined, pending := ask("Lounge screens."), ask("Lounge screens, again.")
		op.do(t, `mutation($id: ID!) { reviewLimitIncrease(id: $id, approve: false, reply: "Tell us more about the screens.") { id } }`,
			map[string]any{"id": declined}, nil)

		show := func(p pageSubscription) []string {
			var out []string
			for _, r := range p.LimitRequests {
				out = append(out, r.ID+" "+r.Description+" "+r.Status+" "+r.Reply)
			}
			slices.Sort(out) // the test clock is frozen: both requests have one time
			return out
		}
		want := []string{declined + " Lounge screens. declined Tell us more about the screens.", pending + " Lounge screens, again. pending "}
		slices.Sort(want)
		fields := `limitRequests { id description status reply }`
		if got := show(lee.mySubscriptions(t, fields, nil)[sub]); !slices.Equal(got, want) {
			t.Errorf("the owner reads %q, want %q", got, want)
		}
		if got := lee.mySubscriptions(t, `limitRequests(first: $first) { id }`, map[string]any{"first": 1})[sub]; len(got.LimitRequests) != 1 {
			t.Errorf("first: 1 lists %d", len(got.LimitRequests))
		}
		for _, first := range []int{0, -1, 21} {
			op.failsWith(t, flightgraph.ECodeInvalidParameter, "first", "between 1 and 20",
				`query($first: Int) { limitIncreaseRequests { subscription { limitRequests(first: $first) { id } } } }`, map[string]any{"first": first})
		}

		var lists struct {
			LimitIncreaseRequests []struct {
				ID           string
				Subscription pageSubscription
			}
		}
		op.do(t, `{ limitIncreaseRequests { id subscription { id `+fields+` } } }`, nil, &lists)
		seen := 0
		for _, r := range lists.LimitIncreaseRequests {
			if r.Subscription.ID == sub {
				seen++
				if got := show(r.Subscription); !slices.Equal(got, want) {
					t.Errorf("the operator reads %q, want %q", got, want)
				}
			}
		}
		if seen != 2 {
			t.Errorf("the operator sees %d of lee's requests", seen)
		}

		// Another developer sees none of them.
		mo, _, moSubs := pageDeveloper(t, s, op, "mo@example.com", "flightstatus")
		if mine := mo.mySubscriptions(t, fields, nil); len(mine) != 1 || len(mine[moSubs[0]].LimitRequests) != 0 {
			t.Errorf("mo's subscriptions: %+v", mine)
		}
	})
}

// auditEntry is an audit log entry as the operators' page reads it.
type auditEntry struct{ Actor, Action, TargetType, TargetID string }

func (op *portal) auditWith(t *testing.T, filters map[string]any) []auditEntry {
	t.Helper()
	var out struct{ AuditLog []auditEntry }
	op.do(t, `query($action: String, $actor: String, $targetType: String, $targetId: String) {
		auditLog(first: 200, action: $action, actor: $actor, targetType: $targetType, targetId: $targetId) { actor action targetType targetId } }`, filters, &out)
	return out.AuditLog
}

// TestAuditLogFiltersOnThePortal: each filter of the audit log matches exactly, an action ending in
// '.' every action it begins; they combine; input that is SQL or a wildcard matches nothing; a
// filter too long or with control characters is INSP_400.001 naming it. The operators get the
// distinct actions to filter by.
func TestAuditLogFiltersOnThePortal(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		const email = "ada@example.com"
		_, _, subs := pageDeveloper(t, s, op, email, "flightstatus")
		sub, devID, opID := subs[0], op.accountID(t, email), op.accountID(t, s.demo.OperatorEmail)

		all := op.auditWith(t, nil)
		each := func(name string, got []auditEntry, ok func(auditEntry) bool, wantSome ...auditEntry) {
			t.Helper()
			for _, e := range got {
				if !ok(e) {
					t.Errorf("%s: %+v", name, e)
				}
			}
			for _, w := range wantSome {
				if !slices.Contains(got, w) {
					t.Errorf("%s: no %+v in %+v", name, w, got)
				}
			}
			var want []auditEntry
			for _, e := range all {
				if ok(e) {
					want = append(want, e)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %d entries, the unfiltered log has %d such", name, len(got), len(want))
			}
		}
		requested := auditEntry{devID, "subscription.request", "subscription", sub}
		approved := auditEntry{opID, "subscription.approved", "subscription", sub}
		each("action", op.auditWith(t, map[string]any{"action": "subscription.approved"}),
			func(e auditEntry) bool { return e.Action == "subscription.approved" }, approved)
		each("action prefix", op.auditWith(t, map[string]any{"action": "subscription."}),
			func(e auditEntry) bool { return strings.HasPrefix(e.Action, "subscription.") }, approved, requested)
		each("actor", op.auditWith(t, map[string]any{"actor": devID}),
			func(e auditEntry) bool { return e.Actor == devID }, requested)
		each("target", op.auditWith(t, map[string]any{"targetType": "subscription", "targetId": sub}),
			func(e auditEntry) bool { return e.TargetType == "subscription" && e.TargetID == sub }, approved, requested)
		if got := op.auditWith(t, map[string]any{"targetId": sub}); !slices.Equal(got, []auditEntry{approved, requested}) {
			t.Errorf("targetId alone: %+v", got)
		}
		if got := op.auditWith(t, map[string]any{"action": "subscription.", "actor": devID, "targetType": "subscription", "targetId": sub}); !slices.Equal(got, []auditEntry{requested}) {
			t.Errorf("all four: %+v", got)
		}
		for _, v := range []string{"' OR '1'='1", "%", "subscription.%", "subscription", "SUBSCRIPTION.", "_"} {
			if got := op.auditWith(t, map[string]any{"action": v, "actor": v}); len(got) != 0 {
				t.Errorf("%q matches %+v", v, got)
			}
		}
		if got := op.auditWith(t, map[string]any{"targetType": strings.Repeat("x", flightgraph.MaxAuditFilter)}); len(got) != 0 {
			t.Errorf("a filter of the longest length: %+v", got)
		}
		q := `query($v: String) { auditLog(%s: $v) { id } }`
		for _, name := range []string{"action", "actor", "targetType", "targetId"} {
			op.failsWith(t, flightgraph.ECodeInvalidParameter, name, "at most 100 characters", fmt.Sprintf(q, name), map[string]any{"v": strings.Repeat("é", flightgraph.MaxAuditFilter+1)})
			op.failsWith(t, flightgraph.ECodeInvalidParameter, name, "control characters", fmt.Sprintf(q, name), map[string]any{"v": "sub_\x00"})
		}

		var actions struct{ AuditActions []string }
		op.do(t, `{ auditActions }`, nil, &actions)
		distinct := map[string]bool{}
		for _, e := range all {
			distinct[e.Action] = true
		}
		if !slices.IsSorted(actions.AuditActions) || len(actions.AuditActions) != len(distinct) {
			t.Errorf("actions %q, the log has %d distinct", actions.AuditActions, len(distinct))
		}
		for _, a := range actions.AuditActions {
			if !distinct[a] {
				t.Errorf("action %q is in no entry", a)
			}
		}
	})
}

// TestAccountsForOperators: the operators list accounts, of a role, with a part of an e-mail in
// any case, taken literally, a page at a time; bad pages and filters are INSP_400.001 naming them.
func TestAccountsForOperators(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		s.signUp(t, "ann@alpha.example", developerPassword, "Ann")
		s.signUp(t, "bo_b@beta.example", developerPassword, "Bob")
		op.setRole(t, "bo_b@beta.example", "PARTNER")
		type account struct{ ID, Email, Role string }
		list := func(vars map[string]any) []account {
			t.Helper()
			var out struct{ Accounts []account }
			op.do(t, `query($first: Int, $offset: Int, $role: Role, $email: String) { accounts(first: $first, offset: $offset, role: $role, email: $email) { id email role } }`, vars, &out)
			return out.Accounts
		}
		emails := func(as []account) []string {
			var out []string
			for _, a := range as {
				out = append(out, a.Email)
			}
			slices.Sort(out) // the test clock is frozen: every account has one time
			return out
		}
		everyone := list(map[string]any{"first": 200})
		if got := emails(everyone); !slices.Equal(got, []string{"ann@alpha.example", "bo_b@beta.example", s.demo.DeveloperEmail, s.demo.OperatorEmail}) {
			t.Fatalf("accounts: %q", got)
		}
		for _, c := range []struct {
			name string
			vars map[string]any
			want []string
		}{
			{"partners", map[string]any{"role": "PARTNER"}, []string{"bo_b@beta.example"}},
			{"operators", map[string]any{"role": "OPERATOR"}, []string{s.demo.OperatorEmail}},
			{"staff", map[string]any{"role": "STAFF"}, nil},
			{"e-mail part in capitals", map[string]any{"email": " ALPHA.Example"}, []string{"ann@alpha.example"}},
			{"role and e-mail", map[string]any{"role": "DEVELOPER", "email": ".example"}, []string{"ann@alpha.example"}},
			{"underscore", map[string]any{"email": "_"}, []string{"bo_b@beta.example"}},
			{"percent", map[string]any{"email": "%"}, nil},
			{"quote", map[string]any{"email": "' OR '1'='1"}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				if got := emails(list(c.vars)); !slices.Equal(got, c.want) {
					t.Errorf("%v: %q, want %q", c.vars, got, c.want)
				}
			})
		}
		// Pages follow one order.
		var paged []account
		for off := range len(everyone) {
			paged = append(paged, list(map[string]any{"first": 1, "offset": off})...)
		}
		if !slices.Equal(paged, everyone) {
			t.Errorf("page by page: %+v, at once: %+v", paged, everyone)
		}
		q := `query($first: Int, $offset: Int, $email: String) { accounts(first: $first, offset: $offset, email: $email) { id } }`
		for _, c := range []struct {
			param, msg string
			vars       map[string]any
		}{
			{"first", "between 1 and 200", map[string]any{"first": 0}},
			{"first", "between 1 and 200", map[string]any{"first": 201}},
			{"offset", "not be negative", map[string]any{"offset": -1}},
			{"email", "at most 254 characters", map[string]any{"email": strings.Repeat("a", 255)}},
			{"email", "control characters", map[string]any{"email": "a\x00"}},
		} {
			op.failsWith(t, flightgraph.ECodeInvalidParameter, c.param, c.msg, q, c.vars)
		}
	})
}
