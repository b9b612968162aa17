package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	_ "github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// portal is a signed-in portal user of a test server.
type portal struct {
	s     *testServer
	token string
}

func (s *testServer) signIn(t testing.TB, email, password string) *portal {
	t.Helper()
	resp := s.portalAs(t, nil, `mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { token account { id role } } }`,
		map[string]any{"e": email, "p": password})
	if len(resp.Errors) > 0 {
		t.Fatalf("signIn %s: %+v", email, resp.Errors)
	}
	var d struct{ SignIn struct{ Token string } }
	json.Unmarshal(resp.Data, &d)
	return &portal{s: s, token: d.SignIn.Token}
}

// do runs an operation as the user and returns its data, failing on errors.
func (p *portal) do(t testing.TB, q string, vars map[string]any, into any) {
	t.Helper()
	resp := p.try(t, q, vars)
	if len(resp.Errors) > 0 {
		t.Fatalf("%s: %+v", firstLine(q), resp.Errors)
	}
	if into != nil {
		if err := json.Unmarshal(resp.Data, into); err != nil {
			t.Fatal(err)
		}
	}
}

func (p *portal) try(t testing.TB, q string, vars map[string]any) gqlResponse {
	t.Helper()
	return p.s.portalAs(t, map[string]string{"Authorization": "Bearer " + p.token}, q, vars)
}

// fails runs an operation that must fail with code.
func (p *portal) fails(t testing.TB, code, q string, vars map[string]any) {
	t.Helper()
	resp := p.try(t, q, vars)
	if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != code {
		t.Fatalf("%s: got %s %+v, want %s", firstLine(q), resp.Data, resp.Errors, code)
	}
}

// grantLimits gives the approved subscriptions of one of the user's keys (apiKey, its public half)
// a custom plan as the product does: the user asks for higher limits and op grants limits and
// queries (zero fields: the plan's bounds stay). With products, only their subscriptions. It
// returns the key's id.
func (p *portal) grantLimits(t testing.TB, op *portal, apiKey string, limits flightgraph.Limits, queries flightgraph.QueryLimits, products ...string) string {
	t.Helper()
	var me struct {
		Me struct {
			Applications []struct {
				Keys []struct {
					ID, APIKey    string
					Subscriptions []struct{ ID, API, Status string }
				}
			}
		}
	}
	p.do(t, `{ me { applications { keys { id apiKey subscriptions { id api status } } } } }`, nil, &me)
	keyID, vars := "", map[string]any{}
	var asks, grants []string
	for _, app := range me.Me.Applications {
		for _, k := range app.Keys {
			if k.APIKey != access.Hint(apiKey) {
				continue
			}
			keyID = k.ID
			for _, sub := range k.Subscriptions {
				if sub.Status != "approved" || len(products) > 0 && !slices.Contains(products, sub.API) {
					continue
				}
				n := strconv.Itoa(len(asks))
				vars["s"+n] = sub.ID
				asks = append(asks, `a`+n+`: requestLimitIncrease(input: {subscriptionId: $s`+n+`, description: "A test's load.", estimatedPerSecond: $ps, estimatedPerDay: $pd}) { id }`)
				grants = append(grants, `g`+n+`: reviewLimitIncrease(id: $r`+n+`, approve: true, perSecond: $ps, perDay: $pd, queryLimits: $q, reply: "Granted for the test.") { status }`)
			}
		}
	}
	if keyID == "" || len(asks) == 0 {
		t.Fatalf("grantLimits: the user has no key %s with approved subscriptions to %v", access.Hint(apiKey), products)
	}
	vars["ps"], vars["pd"] = limits.PerSecond, limits.PerDay
	vars["q"] = map[string]any{"maxCost": queries.MaxCost, "maxDepth": queries.MaxDepth, "maxAliases": queries.MaxAliases,
		"maxRootFields": queries.MaxRootFields, "maxTokens": queries.MaxTokens}
	// An operation has at most DefaultQueryLimits.MaxRootFields root fields.
	for lo := 0; lo < len(asks); lo += flightgraph.DefaultQueryLimits.MaxRootFields {
		hi := min(lo+flightgraph.DefaultQueryLimits.MaxRootFields, len(asks))
		var decl, gdecl []string
		for i := lo; i < hi; i++ {
			decl = append(decl, fmt.Sprintf("$s%d: ID!", i))
			gdecl = append(gdecl, fmt.Sprintf("$r%d: ID!", i))
		}
		var asked map[string]struct{ ID string }
		p.do(t, `mutation(`+strings.Join(decl, ", ")+`, $ps: Int!, $pd: Int!) { `+strings.Join(asks[lo:hi], " ")+` }`, vars, &asked)
		for i := lo; i < hi; i++ {
			vars[fmt.Sprintf("r%d", i)] = asked[fmt.Sprintf("a%d", i)].ID
		}
		var granted map[string]struct{ Status string }
		op.do(t, `mutation(`+strings.Join(gdecl, ", ")+`, $ps: Int!, $pd: Int!, $q: QueryLimitsInput) { `+strings.Join(grants[lo:hi], " ")+` }`, vars, &granted)
		for k, g := range granted {
			if g.Status != "granted" {
				t.Fatalf("grantLimits: %s is %s", k, g.Status)
			}
		}
	}
	return keyID
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i > 0 {
		return s[:i]
	}
	return s
}

// call is the tests' one HTTP client (in-process for a benchmark's server, which has no
// listener): it makes a call with headers and a body (JSON unless the headers say otherwise),
// checks a REST answer against the OpenAPI document, and returns status, headers and body.
func (s *testServer) call(t testing.TB, method, path string, headers map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	target := path
	if s.Server != nil {
		target = s.URL + path
	}
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	var resp *http.Response
	if s.Server == nil { // a benchmark's server, called in-process
		w := httptest.NewRecorder()
		s.srv.ServeHTTP(w, req)
		resp = w.Result()
	} else {
		req.RequestURI = ""
		var err error
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	validateREST(t, req, resp.StatusCode, resp.Header, b)
	return resp.StatusCode, resp.Header, string(b)
}

// flightsWith calls a small flight query with an api-key and returns status, headers and body.
func (s *testServer) flightsWith(t *testing.T, key string) (int, http.Header, string) {
	t.Helper()
	q, _ := json.Marshal(map[string]any{"query": `{ flights(origin: "AMS", date: "` + storetest.Now.Format(flightgraph.DateLayout) + `", first: 1) { totalCount } }`})
	return s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": key}, string(q))
}

func restCode(t testing.TB, body string) string {
	t.Helper()
	var b struct {
		Errors []struct{ Code, Name, Description, Severity string }
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil || len(b.Errors) != 1 || b.Errors[0].Severity != "ERROR" || b.Errors[0].Description == "" {
		t.Fatalf("not the REST error shape: %s", body)
	}
	return b.Errors[0].Code
}

func gqlCode(t *testing.T, body string) string {
	t.Helper()
	var b gqlResponse
	if err := json.Unmarshal([]byte(body), &b); err != nil || len(b.Errors) == 0 {
		t.Fatalf("not a GraphQL error: %s", body)
	}
	return b.Errors[0].Extensions["code"].(string)
}

// mailTo returns the subjects of the outbox messages to an address.
func (s *testServer) mailTo(t testing.TB, addr string) []string {
	t.Helper()
	var subjects []string
	for _, m := range s.mailsTo(t, addr) {
		subjects = append(subjects, m.Subject)
	}
	return subjects
}

// lastMail is the id of the newest outbox message, 0 with none.
func (s *testServer) lastMail(t testing.TB) int64 {
	t.Helper()
	var id int64
	if err := storetest.SQL(t, s.db).QueryRow(`SELECT COALESCE(MAX(id), 0) FROM mail_outbox`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// mailsTo returns the outbox messages to an address since the server was set up, oldest first.
func (s *testServer) mailsTo(t testing.TB, addr string) []flightgraph.Mail {
	t.Helper()
	var mails []flightgraph.Mail
	rows, err := storetest.SQL(t, s.db).Query(`SELECT subject, body FROM mail_outbox WHERE recipient = `+placeholder(s.db, 1)+` AND id > `+placeholder(s.db, 2)+` ORDER BY id`, addr, s.mailMark)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		m := flightgraph.Mail{To: addr}
		if err := rows.Scan(&m.Subject, &m.Body); err != nil {
			t.Fatal(err)
		}
		mails = append(mails, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return mails
}

// signUpToken is the verifyEmail token of the newest mail to an address; "" if none has one.
func (s *testServer) signUpToken(t testing.TB, addr string) string {
	t.Helper()
	mails := s.mailsTo(t, addr)
	for i := len(mails) - 1; i >= 0; i-- {
		if tok := signUpTokenRE.FindString(mails[i].Body); tok != "" {
			return tok
		}
	}
	return ""
}

var signUpTokenRE = regexp.MustCompile(access.KindSignUp + `[0-9A-Za-z]+`)

// signUp signs a developer up as a person would: signUp, the token from the mail, verifyEmail;
// it returns the new account's portal session.
func (s *testServer) signUp(t testing.TB, email, password, name string) *portal {
	t.Helper()
	resp := s.portalAs(t, nil, `mutation($in: SignUpInput!) { signUp(input: $in) { message } }`,
		map[string]any{"in": map[string]any{"email": email, "password": password, "name": name}})
	if len(resp.Errors) > 0 {
		t.Fatalf("signUp %s: %+v", email, resp.Errors)
	}
	token := s.signUpToken(t, strings.ToLower(email))
	if token == "" {
		t.Fatalf("signUp %s: no mail with a token", email)
	}
	resp = s.portalAs(t, nil, `mutation($t: String!, $p: String!) { verifyEmail(token: $t, password: $p) { token account { email role } } }`,
		map[string]any{"t": token, "p": password})
	if len(resp.Errors) > 0 {
		t.Fatalf("verifyEmail %s: %+v", email, resp.Errors)
	}
	var d struct{ VerifyEmail struct{ Token string } }
	json.Unmarshal(resp.Data, &d)
	return &portal{s: s, token: d.VerifyEmail.Token}
}

// placeholder is the nth query parameter in the store's dialect.
func placeholder(db *store.DB, n int) string {
	if db.Dialect() == store.Postgres {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

const developerPassword = "correct horse battery"

func TestAccessStory(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		anon := &portal{s: s}

		// Sign up, with clear errors for bad input; the account exists once the address is
		// verified, and signing up again changes nothing.
		anon.fails(t, flightgraph.ECodeInvalidParameter, `mutation { signUp(input: {email: "not-an-email", password: "long enough pw", name: "Ada"}) { message } }`, nil)
		anon.fails(t, flightgraph.ECodeInvalidParameter, `mutation { signUp(input: {email: "ada@example.com", password: "short", name: "Ada"}) { message } }`, nil)
		anon.fails(t, flightgraph.ECodeMissingParameter, `mutation { signUp(input: {email: "ada@example.com", password: "long enough pw", name: " "}) { message } }`, nil)
		verified := s.signUp(t, "Ada@Example.com", developerPassword, "Ada Lovelace")
		var who struct {
			Me struct{ Account struct{ Email, Role string } }
		}
		verified.do(t, `{ me { account { email role } } }`, nil, &who)
		if who.Me.Account.Email != "ada@example.com" || who.Me.Account.Role != "developer" {
			t.Fatalf("the verified sign-up is %+v, want developer ada@example.com", who.Me.Account)
		}
		anon.do(t, `mutation($p: String!) { signUp(input: {email: "ada@example.com", password: $p, name: "Ada"}) { message } }`, map[string]any{"p": "another password!"}, nil)
		anon.fails(t, flightgraph.ECodeBadLogin, `mutation { signIn(email: "ada@example.com", password: "another password!") { token } }`, nil)
		anon.fails(t, flightgraph.ECodeBadLogin, `mutation { signIn(email: "ada@example.com", password: "wrong password!") { token } }`, nil)
		anon.fails(t, flightgraph.ECodeNotSignedIn, `{ me { account { id } } }`, nil)
		dev := s.signIn(t, "ada@example.com", developerPassword)
		signUpMails := len(s.mailTo(t, "ada@example.com")) // the link, then the notice

		// Register an application: validated, clear errors.
		dev.fails(t, flightgraph.ECodeInvalidParameter, `mutation { registerApplication(input: {name: "Radar", description: "x", callbackUrl: "http://example.com/cb"}) { id } }`, nil)
		dev.fails(t, flightgraph.ECodeBadFormat, `mutation { registerApplication(input: {name: "Radar", description: "x", website: "ftp://example.com"}) { id } }`, nil)
		dev.fails(t, flightgraph.ECodeMissingParameter, `mutation { registerApplication(input: {name: "", description: "x"}) { id } }`, nil)
		var reg struct{ RegisterApplication struct{ ID string } }
		dev.do(t, `mutation { registerApplication(input: {name: "Radar", website: "https://radar.example", description: "Departure boards for our lounge screens.", callbackUrl: "https://radar.example/oauth"}) { id name } }`, nil, &reg)
		appID := reg.RegisterApplication.ID

		// Request a key for the Default plan of Flight Status: it is pending.
		var rk struct {
			RequestKey struct {
				Key struct {
					ID, APIKey, Secret, Status string
					Subscriptions              []struct{ ID, API, Plan, Status string }
				}
			}
		}
		dev.do(t, `mutation($a: ID!) { requestKey(input: {applicationId: $a, api: "flightstatus"}) { key { id apiKey secret status subscriptions { id api plan status } } } }`,
			map[string]any{"a": appID}, &rk)
		key := rk.RequestKey.Key
		if !strings.HasPrefix(key.APIKey, "fgk_") || !strings.HasPrefix(key.Secret, "fgs_") || len(key.Subscriptions) != 1 ||
			key.Subscriptions[0].Status != "pending" || key.Subscriptions[0].Plan != "Default" {
			t.Fatalf("requested key %+v", key)
		}
		subID := key.Subscriptions[0].ID
		var me struct {
			Me struct {
				Applications []struct {
					Keys []struct {
						APIKey        string
						Secret        *string
						Subscriptions []struct {
							Status     string
							UsageToday int
							Limits     struct{ PerSecond, PerDay int }
						}
					}
				}
			}
		}
		meQuery := `{ me { applications { keys { apiKey secret subscriptions { status usageToday limits { perSecond perDay } } } } } }`
		dev.do(t, meQuery, nil, &me)
		listed := me.Me.Applications[0].Keys[0]
		if listed.Secret != nil || listed.APIKey == key.APIKey || !strings.HasPrefix(key.APIKey, strings.TrimSuffix(listed.APIKey[:strings.Index(listed.APIKey, "…")], "…")) {
			t.Fatalf("me shows the key as %q (secret %v); it must show a hint and no secret", listed.APIKey, listed.Secret)
		}
		if listed.Subscriptions[0].Status != "pending" {
			t.Fatalf("me shows %s, want pending", listed.Subscriptions[0].Status)
		}

		// Before approval every call with the key is refused, on GraphQL and REST alike.
		if code, _, body := s.flightsWith(t, key.APIKey); code != 403 || gqlCode(t, body) != flightgraph.ECodeNotApproved {
			t.Fatalf("GraphQL before approval: %d %s", code, body)
		}
		if code, _, body := s.call(t, "GET", "/opendata/flightstatus/v1/ping", map[string]string{"api-key": key.APIKey}, ""); code != 403 || restCode(t, body) != flightgraph.ECodeNotApproved {
			t.Fatalf("REST before approval: %d %s", code, body)
		}

		// Operators hear of the request with the requester's details.
		op := s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword)
		if subj := s.mailTo(t, s.demo.OperatorEmail); len(subj) == 0 || !strings.Contains(subj[len(subj)-1], "Flight Status for Radar") {
			t.Fatalf("operator mail: %v", subj)
		}
		dev.fails(t, flightgraph.ECodeOperatorsOnly, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": subID})
		var pending struct {
			PendingSubscriptions []struct {
				ID          string
				Application struct {
					Name  string
					Owner struct{ Email string }
				}
			}
		}
		op.do(t, `{ pendingSubscriptions { id application { name owner { email } } } }`, nil, &pending)
		found := false
		for _, p := range pending.PendingSubscriptions {
			found = found || (p.ID == subID && p.Application.Name == "Radar" && p.Application.Owner.Email == "ada@example.com")
		}
		if !found {
			t.Fatalf("operator does not see the request: %+v", pending)
		}
		op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": subID}, nil)
		op.fails(t, flightgraph.ECodeInvalidState, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": subID})
		if subj := s.mailTo(t, "ada@example.com")[signUpMails:]; len(subj) != 1 || !strings.Contains(subj[0], "approved") {
			t.Fatalf("developer mail after approval: %v", subj)
		}

		// After approval the key works, within the plan's limits, on REST and GraphQL alike; the
		// server's clock is frozen, so all calls fall in one second.
		code, h, body := s.flightsWith(t, key.APIKey)
		if code != 200 || strings.Contains(body, `"errors"`) {
			t.Fatalf("GraphQL after approval: %d %s", code, body)
		}
		for _, name := range []string{"RateLimit-Policy", "RateLimit", "X-Packagekey-Qps-Allotted", "X-Packagekey-Qps-Current", "X-Packagekey-Quota-Allotted", "X-Packagekey-Quota-Current", "X-Plan-Quota-Reset"} {
			if h.Get(name) == "" {
				t.Errorf("no %s header", name)
			}
		}
		if h.Get("X-Packagekey-Qps-Allotted") != "5" || h.Get("X-Packagekey-Quota-Allotted") != "5000" || h.Get("X-Packagekey-Quota-Current") != "1" {
			t.Errorf("legacy headers: %v", h)
		}
		for i := 2; i <= 5; i++ {
			if code, _, body := s.call(t, "GET", "/opendata/flightstatus/v1/ping", map[string]string{"api-key": key.APIKey}, ""); code != 200 {
				t.Fatalf("call %d: %d %s", i, code, body)
			}
		}
		code, h, body = s.call(t, "GET", "/opendata/flightstatus/v1/ping", map[string]string{"api-key": key.APIKey}, "")
		if code != 429 || restCode(t, body) != flightgraph.ECodePerSecondLimit || h.Get("Retry-After") == "" || h.Get("X-Packagekey-Qps-Current") != "5" {
			t.Fatalf("sixth call in one second: %d %v %s", code, h, body)
		}
		if code, _, body := s.flightsWith(t, key.APIKey); code != 429 || gqlCode(t, body) != flightgraph.ECodePerSecondLimit {
			t.Fatalf("GraphQL over the limit: %d %s", code, body)
		}
		dev.do(t, meQuery, nil, &me)
		sub := me.Me.Applications[0].Keys[0].Subscriptions[0]
		if sub.Status != "approved" || sub.UsageToday != 5 || sub.Limits.PerSecond != 5 || sub.Limits.PerDay != 5000 {
			t.Fatalf("me after approval: %+v (only admitted calls count)", sub)
		}

		// A limit increase: requested, granted as a custom plan, e-mailed.
		var lr struct{ RequestLimitIncrease struct{ ID string } }
		dev.do(t, `mutation($s: ID!) { requestLimitIncrease(input: {subscriptionId: $s, description: "Lounge screens at 40 airports.", estimatedPerSecond: 20, estimatedPerDay: 100000}) { id status } }`,
			map[string]any{"s": subID}, &lr)
		op.do(t, `mutation($id: ID!) { reviewLimitIncrease(id: $id, approve: true, perSecond: 20, perDay: 100000, reply: "Granted for the lounge screens.") { status } }`,
			map[string]any{"id": lr.RequestLimitIncrease.ID}, nil)
		dev.do(t, meQuery, nil, &me)
		if l := me.Me.Applications[0].Keys[0].Subscriptions[0].Limits; l.PerSecond != 20 || l.PerDay != 100000 {
			t.Fatalf("limits after the increase: %+v", l)
		}
		if code, _, body := s.call(t, "GET", "/opendata/flightstatus/v1/ping", map[string]string{"api-key": key.APIKey}, ""); code != 200 {
			t.Fatalf("call under the custom plan: %d %s", code, body)
		}
		if subj := s.mailTo(t, "ada@example.com")[signUpMails:]; len(subj) != 2 || !strings.Contains(subj[1], "granted") {
			t.Fatalf("developer mail after the increase: %v", subj)
		}

		// An OAuth API on the same key: approved, then a token, then a bearer call.
		var add struct{ AddAPIToApplication struct{ ID, Status string } }
		dev.do(t, `mutation($k: ID!) { addApiToApplication(input: {keyId: $k, api: "baggage"}) { id status } }`, map[string]any{"k": key.ID}, &add)
		op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": add.AddAPIToApplication.ID}, nil)
		code, _, body = s.call(t, "POST", "/oauthcust/oauth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded",
			"Authorization": oaBasic(key.APIKey, key.Secret)}, "grant_type=client_credentials")
		var tok struct {
			AccessToken string `json:"access_token"`
			ReturnType  string `json:"return_type"`
		}
		json.Unmarshal([]byte(body), &tok)
		if code != 200 || tok.ReturnType != "json" || tok.AccessToken == "" {
			t.Fatalf("client credentials: %d %s", code, body)
		}
		if code, _, body := s.call(t, "GET", "/opendata/baggage/v1/ping", map[string]string{"Authorization": "Bearer " + tok.AccessToken}, ""); code != 200 {
			t.Fatalf("bearer call: %d %s", code, body)
		}
		if code, h, _ := s.call(t, "GET", "/opendata/baggage/v1/ping", map[string]string{"api-key": key.APIKey}, ""); code != 403 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("api-key on an OAuth API: %d %v", code, h)
		}

		// Partner and internal APIs are invisible to everyone else.
		var apis struct {
			Apis []struct {
				Slug, Auth string
				Operations []string
			}
		}
		dev.do(t, `{ apis { slug auth grants operations plans { name perSecond perDay } } }`, nil, &apis)
		seen := map[string]string{}
		for _, a := range apis.Apis {
			seen[a.Slug] = a.Auth
			// The operations the edges declare: a route, its ping, the schema's fields.
			if a.Slug == "flightstatus" && !slices.Equal(a.Operations, []string{"GET /opendata/flightstatus", "GET /opendata/flightstatus/events", "GET /opendata/flightstatus/{id}",
				"GET /opendata/flightstatus/v1/ping", "query flight, flights, flightStatus", "subscription flightStatusChanged", "subscription departures",
				"subscription arrivals", "entity Flight, FlightLeg"}) {
				t.Errorf("flightstatus's operations: %q", a.Operations)
			}
		}
		if seen["metasearch"] != "" || seen["cargo"] != "" || seen["flightstatus"] != "API_KEY" || seen["baggage"] != "OAUTH" {
			t.Fatalf("developer's catalogue: %v", seen)
		}
		if n := s.queries.Load(); n != 1 {
			t.Errorf("the catalogue with its plans cost %d round trips, want 1: the session's (the catalogue is built in)", n)
		}
		op.do(t, `{ apis { slug } }`, nil, &apis)
		if len(apis.Apis) != len(access.Products) {
			t.Fatalf("operator sees %d APIs, want all %d", len(apis.Apis), len(access.Products))
		}
		dev.fails(t, flightgraph.ECodeInvalidParameter, `mutation($k: ID!) { addApiToApplication(input: {keyId: $k, api: "metasearch"}) { id } }`, map[string]any{"k": key.ID})
		for _, path := range []string{"/opendata/metasearch/v1/ping", "/opendata/cargo/v1/ping"} {
			if code, _, body := s.call(t, "GET", path, map[string]string{"api-key": s.demo.APIKey}, ""); code != 404 || restCode(t, body) != flightgraph.ECodeUnknownPath {
				t.Fatalf("public key on %s: %d %s", path, code, body)
			}
		}

		// Rejection with a reason, e-mailed; revocation of the key ends its access.
		var rej struct{ AddAPIToApplication struct{ ID string } }
		dev.do(t, `mutation($k: ID!) { addApiToApplication(input: {keyId: $k, api: "inspire"}) { id } }`, map[string]any{"k": key.ID}, &rej)
		op.fails(t, flightgraph.ECodeMissingParameter, `mutation($id: ID!) { rejectSubscription(id: $id, reason: " ") { status } }`, map[string]any{"id": rej.AddAPIToApplication.ID})
		op.do(t, `mutation($id: ID!) { rejectSubscription(id: $id, reason: "Tell us more about the use.") { status } }`, map[string]any{"id": rej.AddAPIToApplication.ID}, nil)
		if subj := s.mailTo(t, "ada@example.com"); !strings.Contains(subj[len(subj)-1], "declined") {
			t.Fatalf("developer mail after rejection: %v", subj)
		}
		dev.do(t, `mutation($k: ID!) { revokeKey(keyId: $k) { status } }`, map[string]any{"k": key.ID}, nil)
		if code, _, body := s.call(t, "GET", "/opendata/flightstatus/v1/ping", map[string]string{"api-key": key.APIKey}, ""); code != 401 || restCode(t, body) != flightgraph.ECodeInvalidKey {
			t.Fatalf("revoked key: %d %s", code, body)
		}
		if code, _, _ := s.call(t, "GET", "/opendata/baggage/v1/ping", map[string]string{"Authorization": "Bearer " + tok.AccessToken}, ""); code != 401 {
			t.Fatalf("token of a revoked key: %d", code)
		}

		// The audit log holds every change.
		var audit struct {
			AuditLog []struct{ Action, TargetType string }
		}
		op.do(t, `{ auditLog(first: 200) { action targetType targetId actor before after } }`, nil, &audit)
		actions := map[string]bool{}
		for _, a := range audit.AuditLog {
			actions[a.Action] = true
		}
		for _, want := range []string{"account.create", "application.create", "key.create", "subscription.request", "subscription.approved",
			"subscription.rejected", "subscription.revoked", "limit_request.create", "limit_request.granted", "plan.create", "subscription.change_plan", "key.revoke"} {
			if !actions[want] {
				t.Errorf("audit log lacks %s", want)
			}
		}

		// Nothing secret is stored or logged in plaintext.
		dev.do(t, `mutation { signOut }`, nil, nil)
		dev.fails(t, flightgraph.ECodeNotSignedIn, `{ me { account { id } } }`, nil)
		if err := s.srv.Usage.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		secrets := []string{developerPassword, "another password!", key.APIKey, key.Secret, tok.AccessToken, dev.token, verified.token, op.token, s.demo.APIKey, s.demo.ClientSecret,
			s.demo.OperatorPassword, s.demo.DeveloperPassword, s.demo.CustomerPassword}
		dump := s.dumpDB(t)
		for _, sec := range secrets {
			if strings.Contains(dump, sec) {
				t.Errorf("a secret (%.8s…) is stored in plaintext", sec)
			}
			if strings.Contains(s.log.String(), sec) {
				t.Errorf("a secret (%.8s…) is in the log", sec)
			}
		}
	})
}

// rawDB opens a second connection to the test's database, to look at it as an outsider would.
func (s *testServer) rawDB(t *testing.T) *sql.DB {
	t.Helper()
	return storetest.SQL(t, s.db)
}

// dumpDB returns every text value of every table of the access core.
func (s *testServer) dumpDB(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, table := range []string{"accounts", "sessions", "signups", "customers", "applications", "api_keys", "subscriptions", "limit_requests",
		"oauth_tokens", "trial_keys", "usage_daily", "audit_log", "mail_outbox", "plans", "products"} {
		rows, err := s.rawDB(t).Query(`SELECT * FROM ` + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		n := 0
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			for _, v := range vals {
				switch x := v.(type) {
				case string:
					b.WriteString(x + "\n")
				case []byte:
					b.Write(x)
					b.WriteString("\n")
				}
			}
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		rows.Close()
		if table == "api_keys" && n == 0 {
			t.Fatal("dumped no keys: the dump does not see the data")
		}
	}
	return b.String()
}
