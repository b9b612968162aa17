package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/resolvers"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// lockedBuffer is a log sink that goroutines may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// keyFor returns a new api-key of the demo developer approved for exactly these products, with
// call limits no test meets and the Default plan's operation bounds.
func keyFor(t testing.TB, s *testServer, products ...string) string {
	t.Helper()
	key := approvedKey(t, s, products...)
	s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword).grantLimits(t, s.oaOperator(t), key.APIKey, testPlan, flightgraph.QueryLimits{})
	return key.APIKey
}

// approvedKey returns a new key of the demo developer approved for exactly these products, on
// their standard plans, made through the services: no call of the server's spends a budget.
func approvedKey(t testing.TB, s *testServer, products ...string) *flightgraph.NewKey {
	t.Helper()
	ctx := context.Background()
	st := store.NewAccessStore(s.db)
	as := func(email string) context.Context {
		acc, err := st.AccountByEmail(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		return flightgraph.WithCaller(ctx, &flightgraph.Caller{Kind: flightgraph.CallerSession, Account: acc})
	}
	dev, op := as(s.demo.DeveloperEmail), as(s.demo.OperatorEmail)
	app, err := s.srv.Access.RegisterApplication(dev, flightgraph.ApplicationInput{Name: "Partial " + strings.Join(products, "+"), Description: "a key for some APIs"})
	if err != nil {
		t.Fatal(err)
	}
	key, sub, err := s.srv.Access.RequestKey(dev, access.KeyRequest{ApplicationID: app.ID, API: products[0]})
	if err != nil {
		t.Fatal(err)
	}
	subs := []string{sub.ID}
	for _, p := range products[1:] {
		sub, err := s.srv.Access.AddAPI(dev, access.KeyRequest{KeyID: key.ID, API: p})
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub.ID)
	}
	for _, id := range subs {
		if _, err := s.srv.Access.ApproveSubscription(op, id); err != nil {
			t.Fatal(err)
		}
	}
	return key
}

// pendingKey makes the demo developer a key for the schedule API that nobody approves, and
// returns its api-key: a key approved for no API.
func pendingKey(t testing.TB, s *testServer) string {
	t.Helper()
	return pendingNewKey(t, s).APIKey
}

// pendingNewKey is pendingKey with the key's id and secret.
func pendingNewKey(t testing.TB, s *testServer) *flightgraph.NewKey {
	t.Helper()
	ctx := context.Background()
	acc, err := store.NewAccessStore(s.db).AccountByEmail(ctx, s.demo.DeveloperEmail)
	if err != nil {
		t.Fatal(err)
	}
	dev := flightgraph.WithCaller(ctx, &flightgraph.Caller{Kind: flightgraph.CallerSession, Account: acc})
	app, err := s.srv.Access.RegisterApplication(dev, flightgraph.ApplicationInput{Name: "Pending", Description: "a key nobody approved"})
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := s.srv.Access.RequestKey(dev, access.KeyRequest{ApplicationID: app.ID, API: "schedule"})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// hostileShape is a request that reaches product fields in a way a classifier reading the request
// itself could miss.
type hostileShape struct {
	name string
	body string // a POST body; see get
	// get sends body's query as a GET request instead.
	get bool
	// status is the answer every caller gets, for a request that is malformed whoever sends it;
	// 0 means the shape is a well-formed call of product fields.
	status int
	code   string
	// authenticatedOnly marks introspection: refused to anonymous callers only.
	authenticatedOnly bool
}

func jsonBody(query string, vars map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return string(b)
}

// hostileShapes are the shapes of the security review, and more: every way to spell a call of a
// product field that the schema and GraphQL allow.
func hostileShapes(flightID string) []hostileShape {
	day := storetest.Now.Format(flightgraph.DateLayout)
	flights := `flights(origin: "AMS", date: "` + day + `", first: 2) { edges { node { id designator } } }`
	airportRep := `[{__typename: "Airport", code: "AMS"}]`
	q := func(query string) string { return jsonBody(query, nil) }
	return []hostileShape{
		{name: "direct", body: q(`{ ` + flights + ` }`)},
		{name: "named fragment", body: q(`{ ...F } fragment F on Query { ` + flights + ` }`)},
		{name: "fragments chained six deep", body: q(`{ ...F1 }
			fragment F1 on Query { ...F2 } fragment F2 on Query { ...F3 } fragment F3 on Query { ...F4 }
			fragment F4 on Query { ...F5 } fragment F5 on Query { ...F6 }
			fragment F6 on Query { airports(first: 2) { edges { node { code name } } } }`)},
		{name: "inline fragments nested", body: q(`{ ... on Query { ... { ... on Query { airport(code: "AMS") { name city { name } } } } } }`)},
		{name: "fragment in inline in fragment", body: q(`{ ...A } fragment A on Query { ... on Query { ...B } } fragment B on Query { fleet { configuration typeName } }`)},
		{name: "fragment included by a variable", body: jsonBody(`query($y: Boolean!) { ...F @include(if: $y) } fragment F on Query { fleet { typeName } }`, map[string]any{"y": true})},
		{name: "skip false", body: q(`{ fleet @skip(if: false) { typeName } }`)},
		{name: "inline fragment with skip from a default", body: q(`query($n: Boolean = false) { ... @skip(if: $n) { flight(id: "` + flightID + `") { id designator } } }`)},
		{name: "aliases", body: q(`{ x: airport(code: "AMS") { name } y: airport(code: "CDG") { name } }`)},
		{name: "typename beside", body: q(`{ __typename a: city(code: "AMS") { name } }`)},
		{name: "typename beside a fragment", body: q(`query { __typename ...F } fragment F on Query { countries { code name } }`)},
		{name: "entities, inline fragment", body: q(`{ _entities(representations: ` + airportRep + `) { ... on Airport { name } } }`)},
		{name: "entities, fragment spread", body: q(`{ _entities(representations: ` + airportRep + `) { ...A } } fragment A on Airport { name }`)},
		{name: "entities, fragment on the union", body: q(`{ _entities(representations: ` + airportRep + `) { ...E } } fragment E on _Entity { ... on Airport { name } }`)},
		{name: "entities, nested inline fragments", body: q(`{ _entities(representations: ` + airportRep + `) { ... on _Entity { ... { ... on Airport { name } } } } }`)},
		{name: "entities, typename only", body: q(`{ _entities(representations: ` + airportRep + `) { __typename } }`)},
		{name: "entities in variables", body: jsonBody(`query($r: [_Any!]!) { _entities(representations: $r) { ... on Flight { id designator } } }`,
			map[string]any{"r": []any{map[string]any{"__typename": "Flight", "id": flightID}}})},
		{name: "entities aliased twice, two types", body: q(`{ a: _entities(representations: [{__typename: "AircraftConfiguration", configuration: "77W"}]) { ... on AircraftConfiguration { typeName } }
			b: _entities(representations: [{__typename: "City", code: "PAR"}]) { ... on City { name } } }`)},
		{name: "entities, one object for the list", body: q(`{ _entities(representations: {__typename: "Airport", code: "AMS"}) { ... on Airport { name } } }`)},
		{name: "entities, one object in variables", body: jsonBody(`query($r: [_Any!]!) { _entities(representations: $r) { ... on Flight { id designator } } }`,
			map[string]any{"r": map[string]any{"__typename": "Flight", "id": flightID}})},
		{name: "entities, unknown type", body: q(`{ _entities(representations: [{__typename: "Nope"}]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities, type in other case", body: q(`{ _entities(representations: [{__typename: "airport", code: "AMS"}]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities, not an entity type", body: q(`{ _entities(representations: [{__typename: "Cabin", code: "XX"}]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities, no typename", body: q(`{ _entities(representations: [{code: "FR"}]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities, typename not a string", body: q(`{ _entities(representations: [{__typename: 1, code: "FR"}]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities, key null", body: q(`{ _entities(representations: [{__typename: "Country", code: null}]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities, key missing", body: q(`{ _entities(representations: [{__typename: "Country"}]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities, key an object", body: q(`{ _entities(representations: [{__typename: "Country", code: {a: 1}}]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities, a string", body: q(`{ _entities(representations: ["x"]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities, a list in the list", body: q(`{ _entities(representations: [[{__typename: "Country", code: "NL"}]]) { __typename } }`), status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "entities in a fragment", body: q(`{ ...Q } fragment Q on Query { _entities(representations: [{__typename: "Country", code: "NL"}]) { ... on Country { name } } }`)},
		{name: "operationName picks the second", body: func() string {
			b, _ := json.Marshal(map[string]any{"query": `query A { __typename } query B { flight(id: "` + flightID + `") { id designator } }`, "operationName": "B"})
			return string(b)
		}()},
		{name: "GET", get: true, body: `{ ` + flights + ` }`},
		{name: "query key twice", body: `{"query":"{ __typename }","query":"{ fleet { typeName } }"}`},
		{name: "query key in capitals", body: `{"QUERY":"{ fleet { typeName } }"}`},
		{name: "escaped query text", body: `{"query":"{ \u0066leet { typeName } }"}`},
		{name: "trailing second body", body: `{"query":"{ __typename }"} {"query":"{ fleet { typeName } }"}`, status: 400, code: flightgraph.ECodeBadBody},
		{name: "batched array", body: `[{"query":"{ fleet { typeName } }"}]`, status: 400, code: flightgraph.ECodeBadBody},
		{name: "not JSON", body: `query={ fleet { typeName } }`, status: 400, code: flightgraph.ECodeBadBody},
		{name: "include condition null", body: `{"query":"query($i: Boolean = true) { fleet @include(if: $i) { typeName } }","variables":{"i":null}}`,
			status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "skip condition null below the root", body: `{"query":"query($s: Boolean = true) { fleet { typeName @skip(if: $s) configuration } ...F } fragment F on Query { carriers { code @include(if: $s) } }","variables":{"s":null}}`,
			status: 400, code: flightgraph.ECodeInvalidParameter},
		{name: "introspection", body: q(`{ __schema { queryType { name } } }`), authenticatedOnly: true},
		{name: "federation SDL", body: q(`{ _service { sdl } }`), authenticatedOnly: true},
	}
}

// send sends a hostile shape with headers.
func (s *testServer) send(t *testing.T, c hostileShape, headers map[string]string) (int, string) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range headers {
		h[k] = v
	}
	if c.get {
		status, _, body := s.call(t, http.MethodGet, "/graphql?query="+url.QueryEscape(c.body), h, "")
		return status, body
	}
	status, _, body := s.call(t, http.MethodPost, "/graphql", h, c.body)
	return status, body
}

// leaves collects the string and number leaves of a JSON value that could only come from the
// data set: everything but type names and ids of the request.
func leaves(v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k != "__typename" {
				leaves(x, into)
			}
		}
	case []any:
		for _, x := range v {
			leaves(x, into)
		}
	case string:
		if len(v) >= 4 {
			into[v] = true
		}
	}
}

// TestHostileShapes: every shape of the table is charged for the products it calls, whatever its
// spelling. The demo key, approved for every public API, gets the data (so the shape does reach
// product fields); an anonymous caller and a key approved for another API get 401 and 403 with
// not one byte of it. Malformed bodies are refused whole, before anything reads them.
func TestHostileShapes(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	var first struct {
		Flights struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	if err := json.Unmarshal(s.query(t, `{ flights(origin: "AMS", date: "`+storetest.Now.Format(flightgraph.DateLayout)+`", first: 1) { edges { node { id } } } }`, nil).Data, &first); err != nil || len(first.Flights.Edges) == 0 {
		t.Fatalf("no flight to aim at: %v", err)
	}
	schedule := keyFor(t, s, "schedule")
	callers := []struct {
		name    string
		headers map[string]string
		status  int
		code    string
	}{
		{"anonymous", nil, http.StatusUnauthorized, flightgraph.ECodeMissingCredentials},
		{"key for another API", map[string]string{"api-key": schedule}, http.StatusForbidden, flightgraph.ECodeNotApproved},
		{"garbage key", map[string]string{"api-key": "fgk_nope"}, http.StatusUnauthorized, flightgraph.ECodeInvalidKey},
		{"portal session", map[string]string{"Authorization": "Bearer " + s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword).token},
			http.StatusUnauthorized, flightgraph.ECodeMissingCredentials},
	}
	leaked := 0
	for _, c := range hostileShapes(first.Flights.Edges[0].Node.ID) {
		t.Run(c.name, func(t *testing.T) {
			status, body := s.send(t, c, map[string]string{"api-key": s.demo.APIKey})
			if c.status != 0 {
				if status != c.status || gqlCode(t, body) != c.code {
					t.Fatalf("approved key: %d %s, want %d %s", status, body, c.status, c.code)
				}
			} else if status != http.StatusOK {
				t.Fatalf("approved key: %d %s", status, body)
			}
			var admitted gqlResponse
			json.Unmarshal([]byte(body), &admitted)
			var data any
			json.Unmarshal(admitted.Data, &data)
			secrets := map[string]bool{}
			leaves(data, secrets)
			if c.status == 0 && !c.authenticatedOnly && len(admitted.Errors) > 0 {
				t.Fatalf("approved key: errors %+v", admitted.Errors)
			}
			for _, who := range callers {
				status, body := s.send(t, c, who.headers)
				want, code := who.status, who.code
				switch {
				case c.status != 0:
					want, code = c.status, c.code
				case c.authenticatedOnly && who.headers != nil && who.code != flightgraph.ECodeInvalidKey:
					want, code = http.StatusOK, ""
				}
				if c.authenticatedOnly && code == "" {
					continue // the schema, not product data, to an authenticated caller
				}
				if status != want || code != "" && gqlCode(t, body) != code {
					t.Errorf("%s: %d %s, want %d %s", who.name, status, body, want, code)
				}
				if code != "" {
					var r gqlResponse
					json.Unmarshal([]byte(body), &r)
					if len(r.Data) > 0 && string(r.Data) != "null" {
						t.Errorf("%s: refused with data %s", who.name, r.Data)
					}
				}
				for v := range secrets {
					if strings.Contains(body, v) {
						leaked += len(v)
						t.Errorf("%s: the answer holds %q, product data", who.name, v)
					}
				}
			}
		})
	}
	t.Logf("bytes of product data in refused answers: %d", leaked)
}

// TestPersistedQueriesAreChargedAsTheyRun: a query registered by hash with an approved key runs
// by its hash alone only for callers approved for its API.
func TestPersistedQueriesAreChargedAsTheyRun(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	query := `{ fleet { configuration typeName } }`
	sum := sha256.Sum256([]byte(query))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	hashOnly, _ := json.Marshal(map[string]any{"extensions": ext})
	withText, _ := json.Marshal(map[string]any{"query": query, "extensions": ext})
	headers := func(h ...string) map[string]string {
		m := map[string]string{"Content-Type": "application/json"}
		for i := 0; i+1 < len(h); i += 2 {
			m[h[i]] = h[i+1]
		}
		return m
	}
	if status, _, body := s.call(t, http.MethodPost, "/graphql", headers("api-key", s.demo.APIKey), string(hashOnly)); status != http.StatusOK || !strings.Contains(body, "PERSISTED_QUERY_NOT_FOUND") {
		t.Fatalf("unknown hash: %d %s", status, body)
	}
	if status, _, body := s.call(t, http.MethodPost, "/graphql", headers("api-key", s.demo.APIKey), string(withText)); status != http.StatusOK || !strings.Contains(body, "typeName") {
		t.Fatalf("register: %d %s", status, body)
	}
	if status, _, body := s.call(t, http.MethodPost, "/graphql", headers("api-key", s.demo.APIKey), string(hashOnly)); status != http.StatusOK || !strings.Contains(body, "typeName") {
		t.Fatalf("by hash, approved: %d %s", status, body)
	}
	for _, h := range []map[string]string{headers(), headers("api-key", keyFor(t, s, "schedule"))} {
		status, _, body := s.call(t, http.MethodPost, "/graphql", h, string(hashOnly))
		if status < 400 || strings.Contains(body, "typeName") {
			t.Errorf("by hash, %v: %d %s", h, status, body)
		}
	}
}

// TestSecondLineRefusesWhatTheFirstMissed: when the first line admits an operation without
// deciding anything (here an Admit that says yes to all and records nothing, as a first line that
// computed the wrong products would), every root field that calls a product is refused at
// execution, with no data, for anonymous callers and approved keys alike, and each miss is logged
// as a defect.
func TestSecondLineRefusesWhatTheFirstMissed(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	svc := s.srv.Services
	h := graph.NewHandler(&resolvers.Resolver{Travel: svc.Travel, Now: svc.Now},
		graph.HandlerConfig{Admit: func(context.Context, access.Charge) error { return nil }, Stores: svc.Graph, Log: log})
	broken := httptest.NewServer(s.srv.Guard.Authenticated(graph.ErrorWriter(log))(h))
	defer broken.Close()
	shapes := hostileShapes("20261122+XX+0001")
	for _, who := range []struct {
		name    string
		headers map[string]string
		code    string
	}{
		{"anonymous", nil, flightgraph.ECodeMissingCredentials},
		{"approved key", map[string]string{"api-key": s.demo.APIKey}, flightgraph.ECodeNotApproved},
	} {
		for _, c := range shapes {
			if c.status != 0 || c.authenticatedOnly || c.get {
				continue
			}
			req, _ := http.NewRequest(http.MethodPost, broken.URL+"/graphql", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range who.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var r gqlResponse
			json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
			var data map[string]any
			json.Unmarshal(r.Data, &data)
			for field, v := range data {
				if v != nil && field != "__typename" {
					t.Errorf("%s, %s: %s answered %v", who.name, c.name, field, v)
				}
			}
			if len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != who.code {
				t.Errorf("%s, %s: errors %+v, want %s", who.name, c.name, r.Errors, who.code)
			}
		}
	}
	if n := strings.Count(logs.String(), "defect: a GraphQL root field reached execution without admission"); n == 0 {
		t.Errorf("no defect logged:\n%s", logs)
	}
}

// TestGraphQLMethods: GraphQL takes GET and POST, answers OPTIONS with what it allows (204, from
// the CORS middleware, which answers every OPTIONS of the APIs), and refuses
// every other method with 405 REQ_405.000 and its Allow header, HEAD included.
func TestGraphQLMethods(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	for _, m := range []string{http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		req, _ := http.NewRequest(m, s.URL+"/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(resp.Header.Get("Allow"), "POST") {
			t.Errorf("%s: %d, Allow %q", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	req, _ := http.NewRequest(http.MethodOptions, s.URL+"/graphql", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || !strings.Contains(resp.Header.Get("Allow"), "POST") {
		t.Errorf("OPTIONS: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

// TestUnchargedCallsAreLimited: the calls that charge no API (portal operations, introspection,
// token grants) are held to budgets too, with the limit headers and 429s of any API: an account's
// sessions, keys, trial keys and tokens share one, of which each credential spends at most its
// share; the signed-in callers of one client address share another, and anonymous callers one of
// their own per address. A key approved for no API gets no uncharged call at all.
func TestUnchargedCallsAreLimited(t *testing.T) {
	fresh := func(t *testing.T, u access.UnchargedLimits) *testServer {
		// The Default plans: raising them would spend the budgets under test.
		return newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Uncharged, c.DefaultPlans = u, true })
	}
	// count sends each call, one after the other (the clock is frozen: one second), and returns
	// how many were admitted.
	count := func(t *testing.T, s *testServer, calls []map[string]string, query string) int {
		admitted := 0
		for _, h := range calls {
			code, hdr, body := s.call(t, http.MethodPost, "/graphql", h, jsonBody(query, nil))
			switch {
			case code == http.StatusOK:
				admitted++
				if hdr.Get("RateLimit") == "" {
					t.Errorf("admitted without limit headers")
				}
			case code != http.StatusTooManyRequests || gqlCode(t, body) != flightgraph.ECodePerSecondLimit || hdr.Get("Retry-After") == "":
				t.Fatalf("%d %s", code, body)
			}
		}
		return admitted
	}
	times := func(n int, h map[string]string) []map[string]string { return slices.Repeat([]map[string]string{h}, n) }
	const introspect = `{ __schema { queryType { name } } }`
	per, account := access.DefaultUncharged.PerCredential.PerSecond, access.DefaultUncharged.PerAccount.PerSecond

	t.Run("an account's credentials share one budget", func(t *testing.T) {
		s := fresh(t, access.UnchargedLimits{})
		dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		session := map[string]string{"Authorization": "Bearer " + dev.token}
		key1, key2, key3 := approvedKey(t, s, "schedule"), approvedKey(t, s, "opendata"), approvedKey(t, s, "flightstatus")
		trial := map[string]string{"api-key": trialOf(t, s, dev, key3.ID).APIKey}
		// One key spends its share and no more: the account's other credentials keep the rest.
		if n := count(t, s, times(per+2, map[string]string{"api-key": key1.APIKey}), introspect); n != per {
			t.Errorf("%d of %d calls of one key admitted in one second, want its share, %d", n, per+2, per)
		}
		if n := count(t, s, times(2, session), introspect); n != 2 {
			t.Errorf("the session after a key spent its share: %d of 2 admitted, want 2", n)
		}
		// Another key gets what is left of the account's budget, not a budget of its own.
		if n, want := count(t, s, times(per+2, map[string]string{"api-key": key2.APIKey}), introspect), account-per-2; n != want {
			t.Errorf("a second key: %d of %d admitted, want the %d left of the account's %d", n, per+2, want, account)
		}
		// Then nothing is left for any of the account's credentials, a trial key's or a session's.
		for name, h := range map[string]map[string]string{"trial key": trial, "session": session} {
			if n := count(t, s, times(2, h), introspect); n != 0 {
				t.Errorf("the %s once the account's budget is spent: %d of 2 admitted, want 0", name, n)
			}
		}
	})
	t.Run("a key approved for no API gets none", func(t *testing.T) {
		s := fresh(t, access.UnchargedLimits{})
		key := pendingNewKey(t, s)
		pending := map[string]string{"api-key": key.APIKey}
		for _, q := range []string{introspect, graph.IntrospectionQuery, `{ _service { sdl } }`, `{ __typename }`} {
			code, _, body := s.call(t, http.MethodPost, "/graphql", pending, jsonBody(q, nil))
			if code != http.StatusForbidden || gqlCode(t, body) != flightgraph.ECodeNotApproved || !strings.Contains(body, "approved for no API") {
				t.Errorf("%.40s: %d %.300s, want 403 %s", q, code, body, flightgraph.ECodeNotApproved)
			}
		}
		if code, _, body := s.call(t, http.MethodGet, "/openapi.json", pending, ""); code != http.StatusForbidden || restCode(t, body) != flightgraph.ECodeNotApproved {
			t.Errorf("/openapi.json: %d %.300s, want 403 %s", code, body, flightgraph.ECodeNotApproved)
		}
		// Grants too, of two such keys, as many as would spend the account's budget.
		for _, k := range []*flightgraph.NewKey{key, pendingNewKey(t, s)} {
			for range per {
				r := s.oaToken(t, oaCall{auth: oaBasic(k.APIKey, k.Secret), form: url.Values{"grant_type": {"client_credentials"}}})
				oaCheckError(t, r, http.StatusBadRequest, "unauthorized_client")
			}
		}
		// None of it spent the account's budget: its session has its whole share.
		session := map[string]string{"Authorization": "Bearer " + s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword).token}
		if n := count(t, s, times(per+2, session), introspect); n != per {
			t.Errorf("the account's session after its pending key's calls: %d of %d admitted, want %d", n, per+2, per)
		}
	})
	t.Run("signed-in callers of one address", func(t *testing.T) {
		const perAddress = 15
		s := fresh(t, access.UnchargedLimits{PerSignedInAddress: flightgraph.Limits{PerSecond: perAddress, PerDay: 1_000_000}})
		developer := map[string]string{"Authorization": "Bearer " + s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword).token}
		operator := map[string]string{"Authorization": "Bearer " + s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword).token}
		if n := count(t, s, times(per, developer), introspect); n != per {
			t.Fatalf("one account: %d of %d admitted", n, per)
		}
		// Another account from the address gets what is left of the address's budget.
		if n := count(t, s, times(per, operator), introspect); n != perAddress-per {
			t.Errorf("another account from the address: %d of %d admitted, want the %d left of the address's %d", n, per, perAddress-per, perAddress)
		}
		// Anonymous callers of the address have a budget of their own.
		if n := count(t, s, times(3, nil), `{ __typename }`); n != 3 {
			t.Errorf("anonymous calls after the signed-in ones spent theirs: %d of 3 admitted", n)
		}
	})
	t.Run("anonymous address", func(t *testing.T) {
		s := fresh(t, access.UnchargedLimits{})
		if n, want := count(t, s, times(30, nil), `{ __typename }`), access.DefaultUncharged.PerAddress.PerSecond; n != want {
			t.Errorf("%d of 30 admitted in one second, want %d", n, want)
		}
	})
	t.Run("token grants", func(t *testing.T) {
		s := fresh(t, access.UnchargedLimits{})
		admitted := 0
		for range per + 5 {
			r := s.oaToken(t, oaCall{auth: s.oaDemoClient().basic(), form: url.Values{"grant_type": {"client_credentials"}}})
			switch {
			case r.status == http.StatusOK:
				admitted++
			case r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "":
				t.Fatalf("grant: %s", r)
			}
		}
		if admitted != per {
			t.Errorf("%d of %d grants admitted in one second, want the key's share, %d", admitted, per+5, per)
		}
	})
}

// trialOf mints a trial key of keyID for the signed-in p through the services: no call of the
// server's spends a budget.
func trialOf(t testing.TB, s *testServer, p *portal, keyID string) *flightgraph.NewTrialKey {
	t.Helper()
	ctx := context.Background()
	acc, err := store.NewAccessStore(s.db).AccountByEmail(ctx, s.demo.DeveloperEmail)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := s.srv.Access.TrialKey(flightgraph.WithCaller(ctx, &flightgraph.Caller{Kind: flightgraph.CallerSession, Account: acc,
		SessionHash: access.HashCredential(p.token)}), keyID)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestPortalCaps: an account has at most access.MaxApplications applications, an application at
// most access.MaxKeys active keys; a revoked key makes room.
func TestPortalCaps(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	var app struct{ RegisterApplication struct{ ID string } }
	for i := 1; i < access.MaxApplications; i++ { // the demo application is the first
		dev.do(t, `mutation { registerApplication(input: {name: "App", description: "d"}) { id } }`, nil, &app)
	}
	dev.fails(t, flightgraph.ECodeInvalidState, `mutation { registerApplication(input: {name: "One too many", description: "d"}) { id } }`, nil)
	requestKey := `mutation($a: ID!) { requestKey(input: {applicationId: $a, api: "schedule"}) { key { id } } }`
	var key struct {
		RequestKey struct{ Key struct{ ID string } }
	}
	for range access.MaxKeys {
		dev.do(t, requestKey, map[string]any{"a": app.RegisterApplication.ID}, &key)
	}
	dev.fails(t, flightgraph.ECodeInvalidState, requestKey, map[string]any{"a": app.RegisterApplication.ID})
	dev.do(t, `mutation($k: ID!) { revokeKey(keyId: $k) { id } }`, map[string]any{"k": key.RequestKey.Key.ID}, nil)
	dev.do(t, requestKey, map[string]any{"a": app.RegisterApplication.ID}, nil)
}

// TestPortalCapsHoldUnderConcurrency: applications registered all at once stop at the cap too,
// on both dialects (on PostgreSQL, counting then inserting in read committed transactions let
// every one of them through until the account row was locked first).
func TestPortalCapsHoldUnderConcurrency(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		var wg sync.WaitGroup
		for range 2 * access.MaxApplications {
			wg.Go(func() {
				dev.try(t, `mutation { registerApplication(input: {name: "Racing", description: "d"}) { id } }`, nil)
			})
		}
		wg.Wait()
		var me struct {
			Me struct{ Applications []struct{ ID string } }
		}
		dev.do(t, `{ me { applications { id } } }`, nil, &me)
		if n := len(me.Me.Applications); n != access.MaxApplications {
			t.Errorf("%d applications, want %d", n, access.MaxApplications)
		}
	})
}

// TestRefusalsAreBounded: a client address sending refused requests makes a replica look up at
// most access.DefaultRefusalsPerSecond unknown credentials and parse that many refused documents
// a second; beyond it, it is refused with 429 before its credential is looked up (no SQL) or its
// body read, and a burst sent at once does not slip past. A key that authenticated lately keeps
// working from that address, even once its cache entry is gone; an authenticated caller's
// refusals count against its credential, not its address or its account; a persisted query the
// cache does not hold counts as a refusal, although it answers 200; answers that are not refusals
// (a preflight, a plan's own 429) count nowhere.
func TestRefusalsAreBounded(t *testing.T) {
	fresh := func(t *testing.T) *testServer {
		return newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Refusals = access.RefusalLimits{} })
	}
	unknownKey := func() map[string]string { return map[string]string{"api-key": access.NewCredential(access.KindAPIKey)} }
	const amenities = "/opendata/inspire/v2/amenities?aircraftConfiguration=E90"
	refusedDoc := jsonBody(`{ nope }`, nil)
	// flood sends n requests one after the other and returns how many were answered before the
	// first 429, failing the test if a 429 took SQL or a later answer was not a 429.
	flood := func(t *testing.T, s *testServer, n int, send func() (int, http.Header, string)) int {
		t.Helper()
		before := -1
		for i := range n {
			code, h, body := send()
			switch {
			case code != http.StatusTooManyRequests && before >= 0:
				t.Fatalf("request %d after a 429: %d %.200s", i, code, body)
			case code == http.StatusTooManyRequests:
				if before < 0 {
					before = i
				}
				if h.Get("Retry-After") == "" || !strings.Contains(body, flightgraph.ECodePerSecondLimit) && !strings.Contains(body, "invalid_request") {
					t.Errorf("429 without Retry-After or its code: %v %.200s", h, body)
				}
				if q := s.queries.Load(); q != 0 {
					t.Errorf("a 429 took %d SQL round trips; want none", q)
				}
			}
		}
		if before < 0 {
			return n
		}
		return before
	}
	limit := access.DefaultRefusalsPerSecond

	t.Run("hidden routes and unknown paths alike", func(t *testing.T) {
		// A hidden API's route is answered as a path that does not exist; its refusals fill the
		// window as an unknown path's do, or the 429 would tell one from the other.
		for _, path := range []string{"/opendata/cargo/v1/flights/20261122+XX+1234/capacity", "/opendata/cargoo/v1/flights/20261122+XX+1234/capacity"} {
			s := fresh(t)
			if n := flood(t, s, limit+5, func() (int, http.Header, string) { return s.call(t, http.MethodGet, path, nil, "") }); n != limit {
				t.Errorf("%s: %d answered before the first 429, want %d", path, n, limit)
			}
		}
	})

	t.Run("unknown keys", func(t *testing.T) {
		s := fresh(t)
		if n := flood(t, s, 3*limit, func() (int, http.Header, string) { return s.call(t, http.MethodGet, amenities, unknownKey(), "") }); n != limit {
			t.Errorf("%d unknown keys looked up in one second, want %d", n, limit)
		}
	})
	t.Run("unknown keys at once", func(t *testing.T) {
		s := fresh(t)
		var lookups atomic.Int64
		s.db.OnQuery = func() { lookups.Add(1) }
		codes := make([]int, 5*limit)
		var wg sync.WaitGroup
		for i := range codes {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodGet, s.URL+amenities, nil)
				req.Header.Set("api-key", access.NewCredential(access.KindAPIKey))
				if resp, err := http.DefaultClient.Do(req); err == nil {
					codes[i] = resp.StatusCode
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		if n := lookups.Load(); n > int64(limit) {
			t.Errorf("%d unknown keys sent at once made %d SQL round trips, want at most %d (answers %v)", len(codes), n, limit, codes)
		}
	})
	t.Run("refused documents", func(t *testing.T) {
		s := fresh(t)
		if n := flood(t, s, 3*limit, func() (int, http.Header, string) { return s.call(t, http.MethodPost, "/graphql", nil, refusedDoc) }); n != limit {
			t.Errorf("%d refused documents parsed in one second, want %d", n, limit)
		}
	})
	t.Run("unknown OAuth clients", func(t *testing.T) {
		s := fresh(t)
		n := flood(t, s, 3*limit, func() (int, http.Header, string) {
			r := s.oaToken(t, oaCall{auth: oaBasic(access.NewCredential(access.KindAPIKey), access.NewCredential(access.KindSecret)),
				form: url.Values{"grant_type": {"client_credentials"}}})
			return r.status, r.header, r.String()
		})
		if n != limit {
			t.Errorf("%d unknown clients looked up in one second, want %d", n, limit)
		}
	})
	t.Run("a recent key from a refused address", func(t *testing.T) {
		s := fresh(t)
		good := map[string]string{"api-key": s.demo.APIKey}
		if code, _, body := s.call(t, http.MethodGet, amenities, good, ""); code != http.StatusOK {
			t.Fatalf("%d %.200s", code, body)
		}
		// Its cache entry gone (they last seconds), the key is still one that authenticated lately.
		s.srv.Guard.Forget(s.raiseLimitsKeyID)
		flood(t, s, 2*limit, func() (int, http.Header, string) { return s.call(t, http.MethodGet, amenities, unknownKey(), "") })
		if code, _, body := s.call(t, http.MethodGet, amenities, good, ""); code != http.StatusOK {
			t.Errorf("the demo key after its address's refusals: %d %.200s; want 200", code, body)
		}
	})
	t.Run("an anonymous burst at once", func(t *testing.T) {
		s := fresh(t)
		var refusedDocs atomic.Int64
		var wg sync.WaitGroup
		for range 5 * limit {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(refusedDoc))
				req.Header.Set("Content-Type", "application/json")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					if resp.StatusCode != http.StatusTooManyRequests {
						refusedDocs.Add(1)
					}
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		if n := refusedDocs.Load(); n > int64(limit) {
			t.Errorf("%d refused documents parsed of %d sent at once, want at most %d", n, 5*limit, limit)
		}
	})
	t.Run("a recent key's burst at once", func(t *testing.T) {
		s := fresh(t)
		key := map[string]string{"api-key": s.demo.APIKey}
		if code, _, body := s.call(t, http.MethodGet, amenities, key, ""); code != http.StatusOK {
			t.Fatalf("%d %.200s", code, body)
		}
		var parsed atomic.Int64
		var wg sync.WaitGroup
		for range 5 * limit {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(refusedDoc))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("api-key", s.demo.APIKey)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					if resp.StatusCode != http.StatusTooManyRequests {
						parsed.Add(1)
					}
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		if n, per := parsed.Load(), int64(access.DefaultCredentialRefusalsPerSecond); n > per {
			t.Errorf("%d refused documents of one key parsed of %d sent at once, want at most %d", n, 5*limit, per)
		}
	})
	t.Run("a recent key's calls in parallel", func(t *testing.T) {
		s := fresh(t)
		key := map[string]string{"api-key": s.demo.APIKey}
		if code, _, body := s.call(t, http.MethodGet, amenities, key, ""); code != http.StatusOK {
			t.Fatalf("%d %.200s", code, body)
		}
		// Served calls give their place back once admitted: many at once are no refusals.
		var refusedCalls atomic.Int64
		var wg sync.WaitGroup
		for range 5 * limit {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(jsonBody(`{ fleet { configuration } }`, nil)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("api-key", s.demo.APIKey)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					if resp.StatusCode != http.StatusOK {
						refusedCalls.Add(1)
						body, _ := io.ReadAll(resp.Body)
						t.Logf("refused: %d %.300s", resp.StatusCode, body)
					}
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		if n := refusedCalls.Load(); n > 0 {
			t.Errorf("%d of %d calls of one key sent at once were refused, want none", n, 5*limit)
		}
	})
	t.Run("a credential's refusals are its own", func(t *testing.T) {
		s := fresh(t)
		unapproved := map[string]string{"api-key": keyFor(t, s, "schedule")}
		perCredential := access.DefaultCredentialRefusalsPerSecond
		if n := flood(t, s, 3*perCredential, func() (int, http.Header, string) { return s.call(t, http.MethodGet, amenities, unapproved, "") }); n != perCredential {
			t.Errorf("%d refusals of one key in one second, want %d", n, perCredential)
		}
		// Nobody else's refusals fill a credential's window: the same account's other key, a
		// fresh session of it, and anonymous callers from the address are served.
		if code, _, body := s.call(t, http.MethodGet, amenities, map[string]string{"api-key": s.demo.APIKey}, ""); code != http.StatusOK {
			t.Errorf("the account's other key: %d %.200s; want 200", code, body)
		}
		dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		if r := dev.try(t, `{ me { account { email } } }`, nil); len(r.Errors) > 0 {
			t.Errorf("a fresh session of the account: %+v", r.Errors)
		}
		if code, _, body := s.call(t, http.MethodPost, "/graphql", nil, jsonBody(`{ __typename }`, nil)); code != http.StatusOK {
			t.Errorf("an anonymous call from the address: %d %.200s; want 200", code, body)
		}
	})
	t.Run("persisted query misses", func(t *testing.T) {
		// A hash the cache lacks answers 200, so that Apollo clients send the document, yet did
		// nothing for the caller: a refusal, in its credential's window or its address's.
		s := fresh(t)
		miss := func() string { // a hash of a document nobody sent
			sum := sha256.Sum256([]byte(access.NewCredential(access.KindAPIKey)))
			ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
			b, _ := json.Marshal(map[string]any{"extensions": ext})
			return string(b)
		}
		key := map[string]string{"api-key": s.demo.APIKey}
		if code, _, body := s.call(t, http.MethodGet, amenities, key, ""); code != http.StatusOK {
			t.Fatalf("%d %.200s", code, body)
		}
		perCredential := access.DefaultCredentialRefusalsPerSecond
		missed := func(h map[string]string) func() (int, http.Header, string) {
			return func() (int, http.Header, string) {
				code, hdr, body := s.call(t, http.MethodPost, "/graphql", h, miss())
				if code == http.StatusOK && gqlCode(t, body) != "PERSISTED_QUERY_NOT_FOUND" {
					t.Fatalf("a miss answered %.200s", body)
				}
				return code, hdr, body
			}
		}
		if n := flood(t, s, 3*perCredential, missed(key)); n != perCredential {
			t.Errorf("%d misses of one key answered in one second, want %d", n, perCredential)
		}
		if n := flood(t, s, 3*limit, missed(nil)); n != limit {
			t.Errorf("%d anonymous misses from one address answered in one second, want %d", n, limit)
		}
	})
	t.Run("what does not count", func(t *testing.T) {
		s := fresh(t)
		for i := range 2 * limit {
			if code, _, body := s.call(t, http.MethodOptions, "/graphql", unknownKey(), ""); code >= 400 || s.queries.Load() != 0 {
				t.Fatalf("preflight %d: %d %.200s, %d SQL round trips", i, code, body, s.queries.Load())
			}
		}
		// A plan's own 429s are its limit's business: they do not fill the key's refusals.
		good := map[string]string{"api-key": s.demo.APIKey}
		s.setPlanLimits(t, "inspire", flightgraph.Limits{PerSecond: 1, PerDay: 1000})
		for range 3 * access.DefaultCredentialRefusalsPerSecond {
			s.call(t, http.MethodGet, amenities, good, "")
		}
		if code, _, body := s.call(t, http.MethodGet, "/opendata/schedule/v1/routes?origin=AMS", good, ""); code != http.StatusOK {
			t.Errorf("another API of the account after its plan's 429s: %d %.200s; want 200", code, body)
		}
		if code, _, body := s.call(t, http.MethodPost, "/graphql", nil, jsonBody(`{ __typename }`, nil)); code != http.StatusOK {
			t.Errorf("an anonymous call from the address: %d %.200s; want 200", code, body)
		}
	})
}
