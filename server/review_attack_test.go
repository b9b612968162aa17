package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// The attacks a hostile reviewer tried on the paired credentials, the audiences' schemas and the
// access requests: each test fails if the defence it checks is removed.

// rawGraphQL posts a GraphQL document to /graphql with exactly the header given (repeated
// headers included) and returns the status and the first error's code ("" when none) and
// whether the answer has data.
func (s *testServer) rawGraphQL(t *testing.T, h http.Header, q string, vars map[string]any) (int, string, bool) {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(jsonOf(map[string]any{"query": q, "variables": vars})))
	r.Header = h.Clone()
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a struct {
		Data   map[string]any
		Errors []struct{ Extensions map[string]any }
	}
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	code := ""
	if len(a.Errors) > 0 {
		code, _ = a.Errors[0].Extensions["code"].(string)
	}
	return resp.StatusCode, code, a.Data != nil
}

// TestPairedCredentialsAttacked: what an attacker holding some credentials can make of a pair.
// A revoked key's token with a live key of its application, a password-grant token of the demo
// application with another account's key, a session beside a key (an operator's, to borrow its
// role), a pair whose token lacks the grant an API takes, repeated and misspelled headers: each
// is refused, or read as the one credential it is. A pair's OAuth calls are charged to the
// token's subscription, so its plan's day ends them; the uncharged calls of a pair are the key's,
// not a second budget.
func TestPairedCredentialsAttacked(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) {
			c.SnapshotTTL = time.Hour
			// A small day of uncharged calls per credential, to see a pair spend the key's.
			c.Uncharged.PerCredential = flightgraph.Limits{PerSecond: 1000, PerDay: 6}
		})
		vars := map[string]any{"date": storetest.Now.Format(flightgraph.DateLayout), "s": gqlSearch("AMS", "LHR", "ADT")}
		departures := `query($date: Date!) { flights(origin: "AMS", date: $date, first: 2) { edges { node { id } } } }`
		offers := `query($s: OfferSearchInput!) { availableOffers(search: $s, first: 1) { id } }`
		token := s.bearerToken(t, "")
		pair := func(key, auth string) http.Header {
			h := http.Header{}
			if key != "" {
				h.Set("api-key", key)
			}
			if auth != "" {
				h.Set("Authorization", auth)
			}
			return h
		}
		check := func(what string, h http.Header, q string, wantStatus int, wantCode string) {
			t.Helper()
			status, code, data := s.rawGraphQL(t, h, q, vars)
			if status != wantStatus || code != wantCode || (wantCode != "" && data) {
				t.Errorf("%s: %d %q data %v, want %d %q", what, status, code, data, wantStatus, wantCode)
			}
		}
		check("the pair (control)", pair(s.demo.APIKey, "Bearer "+token), board, 200, "")

		// A revoked key's token, beside a live key of the same application.
		op := s.oaOperator(t)
		mallory := s.oaSignUp(t, "mallory@example.com")
		first := mallory.newKey(t, op, "offers")
		var app struct {
			Me struct{ Applications []struct{ ID string } }
		}
		mallory.do(t, `{ me { applications { id } } }`, nil, &app)
		var second struct {
			RequestKey struct {
				Key struct {
					ID, APIKey    string
					Subscriptions []struct{ ID string }
				}
			}
		}
		mallory.do(t, `mutation($in: RequestKeyInput!) { requestKey(input: $in) { key { id apiKey subscriptions { id } } } }`,
			map[string]any{"in": map[string]any{"applicationId": app.Me.Applications[0].ID, "api": "flightstatus"}}, &second)
		op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": second.RequestKey.Key.Subscriptions[0].ID}, nil)
		grant := s.oaGrant(t, first.oaClient, url.Values{"grant_type": {"client_credentials"}})
		firstToken, _ := grant["access_token"].(string)
		check("two keys of one application (control)", pair(second.RequestKey.Key.APIKey, "Bearer "+firstToken), board, 200, "")
		mallory.revokeKey(t, first.keyID)
		check("a revoked key's token beside a live key of its application", pair(second.RequestKey.Key.APIKey, "Bearer "+firstToken), departures,
			401, flightgraph.ECodeInvalidToken)

		// The demo application's password-grant token (its customer) with another account's key.
		password, _ := s.oaPasswordGrant(t, s.oaDemoClient())
		check("a password-grant token with another account's key", pair(second.RequestKey.Key.APIKey, "Bearer "+password), departures,
			403, flightgraph.ECodeWrongCredential)
		// With its own application's key, it still does not open Offers, which takes no password grant.
		check("a password-grant token for Offers", pair(s.demo.APIKey, "Bearer "+password), offers, 403, flightgraph.ECodeWrongCredential)

		// A session beside a key is not read: not the operator's role (Cargo stays a name that does
		// not exist), not a credential for Offers.
		opSession := pair(s.demo.APIKey, "Bearer "+op.token)
		check("an operator's session beside a developer's key, Offers", opSession, offers, 403, flightgraph.ECodeWrongCredential)
		check("an operator's session beside a developer's key, departures", opSession, departures, 200, "")
		if r := s.oaPing(t, "cargo", map[string]string{"api-key": s.demo.APIKey, "Authorization": "Bearer " + op.token}); r.status != http.StatusNotFound {
			t.Errorf("Cargo with an operator's session beside a developer's key: %s", r)
		}
		status, code, _ := s.rawGraphQL(t, opSession, `{ cargoCapacity(flightId: "x") { payloadKg } }`, nil)
		if status == 200 && code == "" {
			t.Errorf("cargoCapacity with an operator's session beside a developer's key was answered")
		}

		// Headers: the first api-key and the first Authorization are the pair, nowhere another.
		h := pair(second.RequestKey.Key.APIKey, "Bearer "+token)
		h.Add("api-key", s.demo.APIKey)
		check("another account's key first, the demo key second", h, board, 403, flightgraph.ECodeWrongCredential)
		h = pair(s.demo.APIKey, "Bearer "+password)
		h.Add("Authorization", "Bearer "+token)
		check("a password-grant token first, a client-credentials token second", h, offers, 403, flightgraph.ECodeWrongCredential)
		check("bearer in lower case", pair(s.demo.APIKey, "bearer "+token), board, 200, "")
		check("two spaces after Bearer", pair(s.demo.APIKey, "Bearer  "+token), departures, 401, flightgraph.ECodeInvalidToken)
		check("the key as the bearer too", pair(s.demo.APIKey, "Bearer "+s.demo.APIKey), departures, 401, flightgraph.ECodeInvalidToken)

		// _entities of an OAuth and an API-key API: the pair opens both, the key alone neither.
		var ids struct {
			Flights struct {
				Edges []struct{ Node struct{ ID string } }
			}
			AvailableOffers []struct{ ID string }
		}
		resp := s.queryAs(t, map[string]string{"api-key": s.demo.APIKey, "Authorization": "Bearer " + token},
			`query($date: Date!, $s: OfferSearchInput!) { flights(origin: "AMS", date: $date, first: 1) { edges { node { id } } }
			availableOffers(search: $s, first: 1) { id } }`, vars)
		if json.Unmarshal(resp.Data, &ids) != nil || len(ids.Flights.Edges) == 0 || len(ids.AvailableOffers) == 0 {
			t.Fatalf("ids: %s %+v", resp.Data, resp.Errors)
		}
		entities := `query($r: [_Any!]!) { _entities(representations: $r) { ... on Flight { id } ... on Offer { id } } }`
		reps := map[string]any{"r": []any{map[string]any{"__typename": "Flight", "id": ids.Flights.Edges[0].Node.ID},
			map[string]any{"__typename": "Offer", "id": ids.AvailableOffers[0].ID}}}
		for _, c := range []struct {
			what   string
			h      http.Header
			status int
			code   string
		}{
			{"_entities of both with the pair", pair(s.demo.APIKey, "Bearer "+token), 200, ""},
			{"_entities of both with the key", pair(s.demo.APIKey, ""), 403, flightgraph.ECodeWrongCredential},
			{"_entities of both with a token of Baggage only", pair(s.demo.APIKey, "Bearer "+s.bearerToken(t, "baggage")), 403, flightgraph.ECodeNotApproved},
		} {
			if status, code, _ := s.rawGraphQL(t, c.h, entities, reps); status != c.status || code != c.code {
				t.Errorf("%s: %d %q, want %d %q", c.what, status, code, c.status, c.code)
			}
		}

		// REST with both headers, the token of another application: refused on either kind of path.
		for _, path := range []string{"/opendata/flightstatus/v1/ping", "/opendata/offers/v1/ping"} {
			r := s.oaPing(t, strings.Split(path, "/")[2], map[string]string{"api-key": s.demo.APIKey, "Authorization": "Bearer " + password + "x"})
			if r.status != http.StatusUnauthorized {
				t.Errorf("REST %s with a bad token beside the key: %s", path, r)
			}
			r = s.oaPing(t, strings.Split(path, "/")[2], map[string]string{"api-key": second.RequestKey.Key.APIKey, "Authorization": "Bearer " + token})
			if r.status != http.StatusForbidden || oaRESTCode(t, r) != flightgraph.ECodeWrongCredential {
				t.Errorf("REST %s with another application's token: %s", path, r)
			}
		}

		// The uncharged day of a credential: a pair spends the key's, it has no other.
		intro := `{ __schema { queryType { name } } }`
		spent := 0
		for spent < 10 {
			h := pair(s.demo.APIKey, "")
			if spent%2 == 1 {
				h = pair(s.demo.APIKey, "Bearer "+token)
			}
			status, _, _ := s.rawGraphQL(t, h, intro, nil)
			if status != 200 {
				break
			}
			spent++
		}
		// The key's day was spent before this test by set-up's own calls, or not: never more than 6.
		if spent > 6 {
			t.Errorf("the key and its pair made %d uncharged calls, the credential's day is 6", spent)
		}
		if status, _, _ := s.rawGraphQL(t, pair(s.demo.APIKey, "Bearer "+token), intro, nil); status != http.StatusTooManyRequests {
			t.Errorf("a pair after the key's uncharged day: %d, want 429", status)
		}
	})
}

// TestPairedCallsChargeTheTokensPlan: a pair's Offers calls are held to the plan of the token's
// subscription; once its day is spent, the pair is refused as the token alone is: a pair buys
// no free calls.
func TestPairedCallsChargeTheTokensPlan(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) { c.SnapshotTTL = time.Hour })
		s.setPlanLimits(t, "offers", flightgraph.Limits{PerSecond: 3, PerDay: 3})
		both := map[string]string{"api-key": s.demo.APIKey, "Authorization": "Bearer " + s.bearerToken(t, "")}
		offers := `query($s: OfferSearchInput!) { availableOffers(search: $s, first: 1) { id } }`
		served := 0
		for range 5 {
			if a := s.pairedCall(t, both, offers); a.status == 200 && len(a.Errors) == 0 {
				served++
			} else if a.status != http.StatusTooManyRequests {
				t.Fatalf("a pair's Offers call: %d %+v", a.status, a.Errors)
			}
		}
		if served != 3 {
			t.Errorf("a pair made %d Offers calls on a plan of 3 a day", served)
		}
	})
}

// TestAudienceAttacked: a developer learns nothing of the partner and staff APIs through a
// persisted query a staff caller registered, a suggestion of a mistyped name, or an answer kept
// while its account was staff: made a developer again, its key's schema has no Cargo at once.
func TestAudienceAttacked(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	callers := s.audienceCallers(t)
	cargo := `{ cargoCapacity(flightId: "20261122+KL+1001") { payloadKg } }`
	sum := sha256.Sum256([]byte(cargo))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	_, _, staff := s.call(t, http.MethodPost, "/graphql", callers["staff"], jsonOf(map[string]any{"query": cargo, "extensions": ext}))
	if !strings.Contains(staff, "Cargo") {
		t.Fatalf("staff's cargoCapacity: %s", staff)
	}
	// The developer sends the hash alone: not found, as a hash nobody registered.
	_, _, replayed := s.call(t, http.MethodPost, "/graphql", callers["developer"], jsonOf(map[string]any{"extensions": ext}))
	other := sha256.Sum256([]byte("{ nothing }"))
	_, _, unknown := s.call(t, http.MethodPost, "/graphql", callers["developer"], jsonOf(map[string]any{"extensions": map[string]any{
		"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(other[:])}}}))
	if replayed != unknown || strings.Contains(replayed, "cargo") {
		t.Errorf("a developer replaying staff's persisted query:\n%s\nan unknown hash:\n%s", replayed, unknown)
	}

	// Suggestions of mistyped names.
	for _, doc := range []string{`{ cargoCapacit(flightId: "x") { payloadKg } }`, `{ bestOffersFee { destination } }`,
		`{ __typename ... on CargoCapacit { payloadKg } }`} {
		_, _, body := s.call(t, http.MethodPost, "/graphql", callers["developer"], jsonBody(doc, nil))
		for _, hidden := range []string{"cargoCapacity", "bestOffersFeed", "CargoCapacity", "CargoLeg"} {
			if strings.Contains(body, hidden) {
				t.Errorf("a developer's %s is answered with %s: %s", doc, hidden, body)
			}
		}
	}

	// A developer made staff, then a developer again, with the same key.
	op := s.oaOperator(t)
	intro := `{ __schema { queryType { fields { name } } } }`
	names := func() string {
		resp := s.queryAs(t, callers["developer"], intro, nil)
		if len(resp.Errors) > 0 {
			t.Fatalf("introspection: %+v", resp.Errors)
		}
		return string(resp.Data)
	}
	if strings.Contains(names(), "cargoCapacity") {
		t.Fatal("the developer's schema names cargoCapacity")
	}
	op.setRole(t, s.demo.DeveloperEmail, "STAFF")
	if !strings.Contains(names(), "cargoCapacity") {
		t.Error("made staff, the key's schema lacks cargoCapacity")
	}
	op.setRole(t, s.demo.DeveloperEmail, "DEVELOPER")
	if got := names(); strings.Contains(got, "cargoCapacity") || strings.Contains(got, "bestOffersFeed") {
		t.Errorf("made a developer again, the key's schema still names what staff sees: %s", got)
	}
	if _, _, body := s.call(t, http.MethodPost, "/graphql", callers["developer"], jsonBody(cargo, nil)); strings.Contains(body, "payloadKg\":") {
		t.Errorf("made a developer again, the key reads cargoCapacity: %s", body)
	}
}

// accessRequestOf asks, as p, for api with token (none when "").
func accessRequestOf(t *testing.T, p *portal, api, token string) gqlResponse {
	t.Helper()
	in := map[string]any{"api": api, "description": "We build a fare search.", "expectedUse": "Ten calls a minute."}
	if token != "" {
		in["requestToken"] = token
	}
	return p.try(t, `mutation($in: ApiAccessInput!) { requestApiAccess(input: $in) { id status } }`, map[string]any{"in": in})
}

// TestAccessRequestsAttacked: a developer cannot answer an access request (its own or another's)
// nor read another's; an operator cannot grant the operator role, a role that does not open the
// API, nor, by granting a request that waited while the account was given more, take an API away;
// a request token is its account's own, spent once there and not elsewhere.
func TestAccessRequestsAttacked(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		alice := s.oaSignUp(t, "alice@example.com")
		bob := s.oaSignUp(t, "bob@example.com")
		const token = "review-request-token-0001"
		var mine struct{ RequestApiAccess struct{ ID, Status string } }
		resp := accessRequestOf(t, alice, "metasearch", token)
		if len(resp.Errors) > 0 || json.Unmarshal(resp.Data, &mine) != nil {
			t.Fatalf("alice's request: %+v", resp.Errors)
		}
		// The same token, again by Alice: made once; by Bob: his own, made.
		if r := accessRequestOf(t, alice, "cargo", token); len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != flightgraph.ECodeRepeated {
			t.Errorf("alice's token again: %s %+v", r.Data, r.Errors)
		}
		if r := accessRequestOf(t, bob, "metasearch", token); len(r.Errors) > 0 {
			t.Errorf("bob with alice's token: %+v", r.Errors)
		}

		answer := `mutation($id: ID!, $grant: Boolean!, $role: Role) { answerAccessRequest(id: $id, grant: $grant, role: $role, reply: "ok") { status role } }`
		for _, p := range []*portal{alice, bob} {
			p.fails(t, flightgraph.ECodeOperatorsOnly, answer, map[string]any{"id": mine.RequestApiAccess.ID, "grant": true, "role": "STAFF"})
			p.fails(t, flightgraph.ECodeOperatorsOnly, `{ accessRequests { id description } }`, nil)
		}
		var bobs struct {
			Me struct{ AccessRequests []struct{ ID string } }
		}
		bob.do(t, `{ me { accessRequests { id } } }`, nil, &bobs)
		for _, r := range bobs.Me.AccessRequests {
			if r.ID == mine.RequestApiAccess.ID {
				t.Error("bob's account lists alice's request")
			}
		}
		for _, role := range []string{"OPERATOR", "DEVELOPER"} {
			r := op.try(t, answer, map[string]any{"id": mine.RequestApiAccess.ID, "grant": true, "role": role})
			if len(r.Errors) == 0 {
				t.Errorf("an operator granted Metasearch with the %s role: %s", role, r.Data)
			}
		}

		// Made staff while the request waited: granting it keeps the account staff.
		op.setRole(t, "alice@example.com", "STAFF")
		var granted struct{ AnswerAccessRequest struct{ Status, Role string } }
		op.do(t, answer, map[string]any{"id": mine.RequestApiAccess.ID, "grant": true, "role": nil}, &granted)
		var role struct {
			Me struct{ Account struct{ Role string } }
		}
		alice.do(t, `{ me { account { role } } }`, nil, &role)
		if role.Me.Account.Role != "staff" || granted.AnswerAccessRequest.Status != "granted" {
			t.Errorf("granting a request of a staff account for Metasearch: %+v, the account is %s now", granted.AnswerAccessRequest, role.Me.Account.Role)
		}
		// Answered once.
		op.fails(t, flightgraph.ECodeInvalidState, answer, map[string]any{"id": mine.RequestApiAccess.ID, "grant": false, "role": nil})
	})
}

// TestAccessPagesAttacked: another site cannot send the access forms of a signed-in developer or
// operator, and the flash that carries a new key's secret opens for its own session only, not for
// another session of the same account, and not once tampered with.
func TestAccessPagesAttacked(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	dev := newVisitor(t, s.URL, nil)
	dev.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	cross := map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
	form := url.Values{"api": {"cargo"}, "description": {"CSRF"}, "expectedUse": {"CSRF"}}
	if status, _, body := dev.raw(http.MethodPost, "/portal/access", form, cross); status != http.StatusForbidden || !strings.Contains(body, flightgraph.ECodeCrossSite) {
		t.Errorf("a cross-site access request: %d %.200s", status, body)
	}
	api := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	var mine struct {
		Me struct{ AccessRequests []struct{ ID string } }
	}
	api.do(t, `{ me { accessRequests { id } } }`, nil, &mine)
	if len(mine.Me.AccessRequests) != 0 {
		t.Fatalf("a cross-site form made %d access requests", len(mine.Me.AccessRequests))
	}
	resp := accessRequestOf(t, api, "cargo", "")
	var req struct{ RequestApiAccess struct{ ID string } }
	if len(resp.Errors) > 0 || json.Unmarshal(resp.Data, &req) != nil {
		t.Fatalf("request: %+v", resp.Errors)
	}
	opv := newVisitor(t, s.URL, nil)
	opv.signIn(s.demo.OperatorEmail, s.demo.OperatorPassword)
	if status, _, _ := opv.raw(http.MethodPost, "/portal/operators/access/"+req.RequestApiAccess.ID, url.Values{"decision": {"grant"}, "role": {"staff"}}, cross); status != http.StatusForbidden {
		t.Errorf("a cross-site answer: %d", status)
	}
	var role struct {
		Me struct{ Account struct{ Role string } }
	}
	api.do(t, `{ me { account { role } } }`, nil, &role)
	if role.Me.Account.Role != "developer" {
		t.Errorf("after a cross-site answer the developer is %s", role.Me.Account.Role)
	}

	// A new key's secret, in its session's flash.
	var apps struct {
		Me struct{ Applications []struct{ ID string } }
	}
	api.do(t, `{ me { applications { id } } }`, nil, &apps)
	status, h, body := dev.post("/portal/keys", url.Values{"applicationId": {apps.Me.Applications[0].ID}, "api": {"opendata"}})
	if status != http.StatusSeeOther {
		t.Fatalf("request key: %d %.300s", status, body)
	}
	var flash *http.Cookie
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if strings.Contains(c.Name, "flash") && c.Value != "" {
			flash = c
		}
	}
	if flash == nil {
		t.Fatalf("no flash cookie: %v", h["Set-Cookie"])
	}
	page := func(v *visitor, value string) string {
		t.Helper()
		u, _ := url.Parse(s.URL)
		v.c.Jar.SetCookies(u, []*http.Cookie{{Name: flash.Name, Value: value, Path: "/"}})
		_, body := v.get("/portal")
		return body
	}
	other := newVisitor(t, s.URL, nil)
	other.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	if body := page(other, flash.Value); strings.Contains(body, access.KindSecret) {
		t.Error("another session of the account opened the flash")
	}
	b := []byte(flash.Value)
	b[len(b)/2] ^= 1
	if b[len(b)/2] == '-' || b[len(b)/2] == '_' {
		b[len(b)/2] = 'A'
	}
	if body := page(dev, string(b)); strings.Contains(body, access.KindSecret) {
		t.Error("a tampered flash was opened")
	}
	if body := page(dev, flash.Value); !strings.Contains(body, access.KindSecret) {
		t.Error("the session's own flash shows no secret (control)")
	}
}
