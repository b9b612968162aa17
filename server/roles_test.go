package server_test

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// accountID is the id of the account of an e-mail address, as an operator finds it.
func (op *portal) accountID(t testing.TB, email string) string {
	t.Helper()
	var out struct{ Account struct{ ID string } }
	op.do(t, `query($e: String!) { account(email: $e) { id } }`, map[string]any{"e": email}, &out)
	return out.Account.ID
}

// setRole has the operator give the account of an e-mail address a role (the GraphQL enum's
// value: DEVELOPER, PARTNER, STAFF).
func (op *portal) setRole(t testing.TB, email, role string) {
	t.Helper()
	var out struct{ SetAccountRole struct{ Role string } }
	op.do(t, `mutation($a: ID!, $r: Role!) { setAccountRole(accountId: $a, role: $r) { role } }`,
		map[string]any{"a": op.accountID(t, email), "r": role}, &out)
	if out.SetAccountRole.Role != strings.ToLower(role) {
		t.Fatalf("setAccountRole %s %s: the account is %s", email, role, out.SetAccountRole.Role)
	}
}

// apis lists the slugs of the APIs the user sees.
func (p *portal) apis(t testing.TB) []string {
	t.Helper()
	var out struct{ Apis []struct{ Slug string } }
	p.do(t, `{ apis { slug } }`, nil, &out)
	var slugs []string
	for _, a := range out.Apis {
		slugs = append(slugs, a.Slug)
	}
	return slugs
}

// TestPartnerRole: an operator makes a developer a partner; the partner then sees Metasearch,
// requests a key for it, and the key calls it once approved. Made a developer again, the account
// loses the API at once: the key that was just served from the guard's cache is refused on its
// next call, as a path that does not exist (the guard decides by its owner's role at the time of
// the call; the test clock is frozen, so a cache that kept the old role would serve it for ever),
// the portal no longer lists the API or takes a request for it. Made a partner again, the same
// key works again. Each change is audited and mailed to the account.
func TestPartnerRole(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		const email = "pat@partner.example"
		pat := s.signUp(t, email, developerPassword, "Pat Partner")
		if slices.Contains(pat.apis(t), "metasearch") {
			t.Fatal("a developer sees metasearch")
		}

		op.setRole(t, email, "PARTNER")
		if apis := pat.apis(t); !slices.Contains(apis, "metasearch") || slices.Contains(apis, "cargo") {
			t.Fatalf("a partner sees %v", apis)
		}
		var reg struct{ RegisterApplication struct{ ID string } }
		pat.do(t, `mutation { registerApplication(input: {name: "Fares feed", description: "metasearch"}) { id } }`, nil, &reg)
		var rk struct {
			RequestKey struct {
				Key struct {
					ID, APIKey    string
					Subscriptions []struct{ ID string }
				}
			}
		}
		pat.do(t, `mutation($a: ID!) { requestKey(input: {applicationId: $a, api: "metasearch", plan: "Partner"}) { key { id apiKey subscriptions { id } } } }`,
			map[string]any{"a": reg.RegisterApplication.ID}, &rk)
		op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": rk.RequestKey.Key.Subscriptions[0].ID}, nil)
		key := map[string]string{"api-key": rk.RequestKey.Key.APIKey}
		ping := func() (int, string) {
			t.Helper()
			code, _, body := s.call(t, http.MethodGet, "/opendata/metasearch/v1/ping", key, "")
			if code == http.StatusOK {
				return code, ""
			}
			return code, restCode(t, body)
		}
		for range 2 { // the second from the guard's cache
			if code, ecode := ping(); code != http.StatusOK {
				t.Fatalf("the partner's key: %d %s", code, ecode)
			}
		}

		op.setRole(t, email, "DEVELOPER")
		if code, ecode := ping(); code != http.StatusNotFound || ecode != flightgraph.ECodeUnknownPath {
			t.Fatalf("the key of a partner made a developer: %d %s, want 404 %s", code, ecode, flightgraph.ECodeUnknownPath)
		}
		if slices.Contains(pat.apis(t), "metasearch") {
			t.Error("a partner made a developer still sees metasearch")
		}
		pat.fails(t, flightgraph.ECodeInvalidParameter, `mutation($k: ID!) { addApiToApplication(input: {keyId: $k, api: "metasearch", plan: "Partner"}) { id } }`,
			map[string]any{"k": rk.RequestKey.Key.ID})

		op.setRole(t, email, "PARTNER")
		if code, ecode := ping(); code != http.StatusOK {
			t.Fatalf("the key of a developer made a partner again: %d %s", code, ecode)
		}

		// Each change is audited, with the operator as its actor and the role before and after,
		// and mailed to the account.
		var audit struct {
			AuditLog []struct{ Actor, Action, TargetID, Before, After string }
		}
		op.do(t, `{ auditLog(first: 50) { actor action targetId before after } }`, nil, &audit)
		var changes []string
		opID := op.accountID(t, s.demo.OperatorEmail)
		for _, e := range audit.AuditLog {
			if e.Action == "account.set_role" {
				if e.Actor != opID || e.TargetID != op.accountID(t, email) {
					t.Errorf("audit entry %+v", e)
				}
				changes = append(changes, roleIn(e.Before)+"→"+roleIn(e.After))
			}
		}
		if want := []string{"developer→partner", "partner→developer", "developer→partner"}; !slices.Equal(changes, want) {
			t.Errorf("audited role changes, newest first: %v, want %v", changes, want)
		}
		var subjects []string
		for _, m := range s.mailsTo(t, email) {
			if strings.HasPrefix(m.Subject, "Your flightgraph account is now") {
				subjects = append(subjects, m.Subject)
			}
		}
		if len(subjects) != 3 || !strings.HasSuffix(subjects[1], "a developer account") {
			t.Errorf("mails of the changes: %q", subjects)
		}
	})
}

// roleIn reads the role from an audit entry's account JSON.
func roleIn(account string) string {
	_, rest, _ := strings.Cut(account, `"Role":"`)
	role, _, _ := strings.Cut(rest, `"`)
	return role
}

// TestSetAccountRoleRefusals: who may not change a role and which changes are refused, by code,
// on the portal's endpoint; none of them changes the account.
func TestSetAccountRoleRefusals(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		const email = "dev@example.com"
		dev := s.signUp(t, email, developerPassword, "Dev")
		devID, opID := op.accountID(t, email), op.accountID(t, s.demo.OperatorEmail)
		set := `mutation($a: ID!, $r: Role!) { setAccountRole(accountId: $a, role: $r) { role } }`
		dev.fails(t, flightgraph.ECodeOperatorsOnly, set, map[string]any{"a": devID, "r": "STAFF"})
		anon := &portal{s: s}
		anon.fails(t, flightgraph.ECodeNotSignedIn, set, map[string]any{"a": devID, "r": "STAFF"})
		op.fails(t, flightgraph.ECodeNotFound, set, map[string]any{"a": "acc_nobody", "r": "STAFF"})
		op.fails(t, flightgraph.ECodeInvalidParameter, set, map[string]any{"a": devID, "r": "OPERATOR"})
		op.fails(t, flightgraph.ECodeInvalidState, set, map[string]any{"a": opID, "r": "DEVELOPER"})
		dev.fails(t, flightgraph.ECodeOperatorsOnly, `{ account(email: "dev@example.com") { id } }`, nil)
		op.fails(t, flightgraph.ECodeNotFound, `{ account(email: "nobody@example.com") { id } }`, nil)
		// A role that is none: refused by GraphQL's validation, with a 400 as
		// application/graphql-response+json (200 as application/json: the spec's choice).
		status, _, body := s.call(t, http.MethodPost, "/portal/graphql", map[string]string{"Authorization": "Bearer " + op.token,
			"Accept": "application/graphql-response+json"}, jsonBody(set, map[string]any{"a": devID, "r": "ADMIN"}))
		if status != http.StatusBadRequest || !strings.Contains(body, "GRAPHQL_VALIDATION_FAILED") || strings.Contains(body, `"data"`) {
			t.Errorf("role ADMIN: %d %s", status, body)
		}
		var me struct {
			Me struct{ Account struct{ Role string } }
		}
		dev.do(t, `{ me { account { role } } }`, nil, &me)
		if me.Me.Account.Role != "developer" {
			t.Errorf("after the refusals the developer is %s", me.Me.Account.Role)
		}
		op.do(t, `{ me { account { role } } }`, nil, &me)
		if me.Me.Account.Role != "operator" {
			t.Errorf("after the refusals the operator is %s", me.Me.Account.Role)
		}
	})
}
