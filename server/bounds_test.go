package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// abusiveShape is a request that would make the server work far more than its size suggests.
type abusiveShape struct {
	name   string
	body   string
	status int
	code   string
}

// abusiveShapes are the shapes of the security review's §2 and their relatives, each with the
// refusal it must get from a caller on the Default plan.
func abusiveShapes() []abusiveShape {
	q := func(query string) string { return jsonBody(query, nil) }
	repeat := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i))
		}
		return b.String()
	}
	entities := func(n int) string {
		reps := make([]any, n)
		for i := range reps {
			reps[i] = map[string]any{"__typename": "City", "code": "PAR"}
		}
		return jsonBody(`query($r: [_Any!]!) { _entities(representations: $r) { ... on City { airports { city { code } } } } }`, map[string]any{"r": reps})
	}
	fragmentBomb := "{ ...F0 } fragment F5 on Query { __typename }"
	for i := range 5 {
		fragmentBomb += fmt.Sprintf(" fragment F%d on Query { %s}", i, repeat(10, func(int) string { return fmt.Sprintf("...F%d ", i+1) }))
	}
	return []abusiveShape{
		{"city → airports → city nine levels", q(`{ cities { airports { city { airports { city { airports { city { airports { city { code } } } } } } } } } }`),
			400, flightgraph.ECodeQueryCost},
		{"4,000 a: __typename", q("{" + repeat(4_000, func(int) string { return " a: __typename" }) + " }"), 400, flightgraph.ECodeQueryTokens},
		{"64,000 a: __typename", q("{" + repeat(64_000, func(int) string { return " a: __typename" }) + " }"), 413, flightgraph.ECodeBodyTooLarge},
		{"30,000 a: __typename", q("{" + repeat(30_000, func(int) string { return " a: __typename" }) + " }"), 413, flightgraph.ECodeBodyTooLarge},
		{"1,000 aliases of flights(first: 100)", q("{" + repeat(1_000, func(i int) string { return fmt.Sprintf(` f%d: flights(origin: "AMS", first: 100) { totalCount }`, i) }) + " }"),
			400, flightgraph.ECodeQueryTokens},
		{"31 aliases of flights(first: 100)", q("{" + repeat(31, func(i int) string { return fmt.Sprintf(` f%d: flights(origin: "AMS", first: 100) { totalCount }`, i) }) + " }"),
			400, flightgraph.ECodeQueryAliases},
		{"11 root fields", q(`{ cities { code } countries { code } fleet { configuration } carriers { code } airports { totalCount } routes { totalCount }
			flights(origin: "AMS") { totalCount } airport(code: "AMS") { code } city(code: "AMS") { code } country(code: "NL") { code } aircraft(configuration: "77W") { configuration } }`),
			400, flightgraph.ECodeQueryRootFields},
		{"200 flights down to their amenities", q(`{ flights(origin: "AMS", first: 200) { edges { node { legs { aircraft { cabins { amenities { name } } } } } } } }`),
			400, flightgraph.ECodeQueryCost},
		{"first: 1,000,000", q(`{ airports(first: 1000000) { edges { node { code } } } }`), 400, flightgraph.ECodeQueryCost},
		{"first as a string", jsonBody(`query($f: Int!) { flights(origin: "AMS", first: $f) { edges { node { legs { aircraft { cabins { amenities { name } } } } } } } }`,
			map[string]any{"f": "200"}), 400, flightgraph.ECodeQueryCost},
		{"one entity for the list, cycling", q(`{ a: _entities(representations: {__typename: "City", code: "LON"}) { ... on City { airports { city { airports { city { airports { city { airports { city { name } } } } } } } } } }
			b: _entities(representations: {__typename: "City", code: "PAR"}) { ... on City { airports { city { airports { city { airports { city { airports { city { name } } } } } } } } } }
			c: _entities(representations: {__typename: "City", code: "NYC"}) { ... on City { airports { city { airports { city { airports { city { airports { city { name } } } } } } } } } } }`),
			400, flightgraph.ECodeQueryCost},
		{"the schema 20 times over", q(`fragment T on __Type { kind name description specifiedByURL fields(includeDeprecated: true) { name description isDeprecated deprecationReason
			args { name description defaultValue type { kind name ofType { kind name ofType { kind name } } } } type { kind name ofType { kind name ofType { kind name } } } }
			inputFields { name description defaultValue type { kind name } } enumValues(includeDeprecated: true) { name description isDeprecated } possibleTypes { name } interfaces { name } }
			{ __schema {` + repeat(20, func(i int) string { return fmt.Sprintf(" t%d: types { ...T }", i) }) + ` } }`), 400, flightgraph.ECodeQueryCost},
		{"eleven levels deep", q(`{ airports { edges { node { city { airports { city { airports { city { airports { city { code } } } } } } } } } } }`),
			400, flightgraph.ECodeQueryDepth},
		{"one field 17 times", q("{" + repeat(17, func(int) string { return " __typename" }) + " }"), 400, flightgraph.ECodeQueryRepeats},
		{"fragments spread 10^5 times", q(fragmentBomb), 400, flightgraph.ECodeQueryTokens},
		{"1,500 entities with their airports", entities(1_500), 400, flightgraph.ECodeQueryCost},
		{"960 KB document", q("{ __typename " + strings.Repeat("# padding padding padding padding\n", 960<<10/35) + "}"), 413, flightgraph.ECodeBodyTooLarge},
		{"batched array", "[" + strings.TrimSuffix(repeat(100, func(int) string { return q(`{ fleet { typeName } }`) + "," }), ",") + "]", 400, flightgraph.ECodeBadBody},
	}
}

// TestAbusiveShapesAreRefused: every abusive shape is refused before anything runs, with the
// catalogue's code, a 4xx status, no data, and an answer of a few hundred bytes (no echo of the
// body, no flood of validation errors).
func TestAbusiveShapesAreRefused(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := keyFor(t, s, "opendata", "flightstatus", "inspire", "schedule")
	for _, c := range abusiveShapes() {
		t.Run(c.name, func(t *testing.T) {
			s.queries.Store(0)
			status, _, body := s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": key, "Content-Type": "application/json"}, c.body)
			if status != c.status || gqlCode(t, body) != c.code {
				t.Fatalf("%d %.300s, want %d %s", status, body, c.status, c.code)
			}
			var r gqlResponse
			json.Unmarshal([]byte(body), &r)
			if len(r.Data) > 0 && string(r.Data) != "null" {
				t.Errorf("refused with data %s", r.Data)
			}
			if len(body) > 1_000 {
				t.Errorf("a refusal of %d bytes: %.300s", len(body), body)
			}
			if n := s.queries.Load(); n > 2 {
				t.Errorf("%d SQL round trips for a refusal (the key's lookup and its subscriptions at most)", n)
			}
		})
	}
}

// BenchmarkAbusiveShapes measures how long each abusive shape takes to be refused, through the
// whole handler (request id, access guard, transport, bounds), for a key on the Default plan.
// The bar is 5 ms each.
func BenchmarkAbusiveShapes(b *testing.B) {
	s := newServer(b, storetest.Seeded(b, store.SQLite, os.Getenv))
	key := keyFor(b, s, "opendata", "flightstatus", "inspire", "schedule")
	for _, c := range abusiveShapes() {
		b.Run(strings.NewReplacer(" ", "_", ",", "").Replace(c.name), func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("api-key", key)
				w := httptest.NewRecorder()
				s.srv.ServeHTTP(w, req)
				if w.Code != c.status {
					b.Fatalf("%d %.200s", w.Code, w.Body)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/op")
		})
	}
}

// TestDefaultPlanServesTheDeparturesBoard: the front-end team's board of 50 flights, down to the
// cabins' amenities, runs on the Default plan; 200 of them cost more than it allows.
func TestDefaultPlanServesTheDeparturesBoard(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := keyFor(t, s, "flightstatus")
	resp := s.queryAs(t, map[string]string{"api-key": key}, departures, departuresVars(50))
	if len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), `"amenities"`) {
		t.Fatalf("the board of 50 on the Default plan: %+v %.200s", resp.Errors, resp.Data)
	}
	resp = s.queryAs(t, map[string]string{"api-key": key}, departures, departuresVars(200))
	if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeQueryCost {
		t.Fatalf("the board of 200 on the Default plan: %+v", resp.Errors)
	}
}

// TestErrorsAreBounded: an answer carries at most graph.MaxErrors errors and says how many it
// left out.
func TestErrorsAreBounded(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	var fields strings.Builder
	for i := range 60 {
		fmt.Fprintf(&fields, " x%d", i)
	}
	resp := s.query(t, "{ airports { edges { node {"+fields.String()+" } } } }", nil)
	if len(resp.Errors) != 21 || resp.Errors[20].Extensions["code"] != "ERRORS_TRUNCATED" || resp.Errors[20].Extensions["omitted"] != float64(40) {
		t.Fatalf("%d errors, last %+v", len(resp.Errors), resp.Errors[len(resp.Errors)-1])
	}
}

// TestIntrospectionIsCounted: introspection costs the objects its answer holds, counted over the
// schema: GraphiQL's query fits the Default plan, while aliases that repeat the whole schema do
// not, however they are spelled.
func TestIntrospectionIsCounted(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := map[string]string{"api-key": keyFor(t, s, "schedule")}
	resp := s.queryAs(t, key, graph.IntrospectionQuery, nil)
	if len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), `"FlightConnection"`) {
		t.Fatalf("GraphiQL's introspection on the Default plan: %+v", resp.Errors)
	}
	var repeated strings.Builder
	for i := range 20 {
		fmt.Fprintf(&repeated, " t%d: types { ...T }", i)
	}
	for name, q := range map[string]string{
		"aliased types": `{ __schema {` + repeated.String() + ` } } fragment T on __Type { kind name fields { name args { name type { kind name ofType { kind name } } } type { kind name ofType { kind name } } } }`,
		"aliased roots": strings.Replace(graph.IntrospectionQuery, "__schema {", "a: __schema { types { ...FullType } } b: __schema { types { ...FullType } } c: __schema {", 1),
	} {
		resp := s.queryAs(t, key, q, nil)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeQueryCost {
			t.Errorf("%s: %.200s %+v", name, resp.Data, resp.Errors)
		}
	}
}

// TestOperatorsGrantQueryBounds: a front-end team whose board needs deeper operations asks for it,
// and an operator grants bounds on one API, within MaxQueryLimits; the key's other bounds stay
// the Default plan's, and the developer sees the bounds granted.
func TestOperatorsGrantQueryBounds(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := keyFor(t, s, "opendata")
	dev, op := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword), s.oaOperator(t)
	deep := jsonBody(`{ airports(first: 2) { edges { node { city { airports { city { airports { city { airports { city { code } } } } } } } } } } }`, nil)
	if code, _, body := s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": key}, deep); code != 400 || gqlCode(t, body) != flightgraph.ECodeQueryDepth {
		t.Fatalf("eleven levels on the Default plan: %d %s", code, body)
	}
	ask := func() string {
		var me struct {
			Me struct {
				Applications []struct {
					Keys []struct {
						APIKey        string
						Subscriptions []struct{ ID string }
					}
				}
			}
		}
		dev.do(t, `{ me { applications { keys { apiKey subscriptions { id } } } } }`, nil, &me)
		for _, a := range me.Me.Applications {
			for _, k := range a.Keys {
				if k.APIKey == access.Hint(key) {
					var lr struct{ RequestLimitIncrease struct{ ID string } }
					dev.do(t, `mutation($s: ID!) { requestLimitIncrease(input: {subscriptionId: $s, description: "Our board nests deeper.", estimatedPerSecond: 10, estimatedPerDay: 10000}) { id } }`,
						map[string]any{"s": k.Subscriptions[0].ID}, &lr)
					return lr.RequestLimitIncrease.ID
				}
			}
		}
		t.Fatal("no such key")
		return ""
	}
	review := `mutation($id: ID!, $q: QueryLimitsInput) { reviewLimitIncrease(id: $id, approve: true, perSecond: 10, perDay: 10000, queryLimits: $q, reply: "ok") {
		subscription { limits { perSecond } queryLimits { maxCost maxDepth maxAliases maxRootFields maxTokens } } } }`
	id := ask()
	for _, bad := range []map[string]any{{"maxDepth": 16}, {"maxDepth": 9}, {"maxCost": 2_000_000}, {"maxTokens": -1}} {
		op.fails(t, flightgraph.ECodeInvalidParameter, review, map[string]any{"id": id, "q": bad})
	}
	var granted struct {
		ReviewLimitIncrease struct {
			Subscription struct {
				Limits      struct{ PerSecond int }
				QueryLimits flightgraph.QueryLimits
			}
		}
	}
	op.do(t, review, map[string]any{"id": id, "q": map[string]any{"maxDepth": 12, "maxTokens": 10_000}}, &granted)
	want := flightgraph.DefaultQueryLimits
	want.MaxDepth, want.MaxTokens = 12, 10_000
	if got := granted.ReviewLimitIncrease.Subscription; got.QueryLimits != want || got.Limits.PerSecond != 10 {
		t.Fatalf("granted %+v, want %+v", got, want)
	}
	if mails := s.mailsTo(t, s.demo.DeveloperEmail); len(mails) == 0 || !strings.Contains(mails[len(mails)-1].Body, "nest 12 deep") {
		t.Errorf("the grant's mail does not tell the bounds: %+v", mails)
	}
	if code, _, body := s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": key}, deep); code != 200 || strings.Contains(body, `"errors"`) {
		t.Fatalf("eleven levels after the grant: %d %s", code, body)
	}
	// A document of about 6,000 tokens, past every standard plan's 5,000: the parser's own cap is
	// the most any plan may be granted.
	long := jsonBody(`{ _entities(representations: [`+strings.Repeat(`{__typename: "Airport", code: "AMS"} `, 650)+`]) { ... on Airport { code } } }`, nil)
	if code, _, body := s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": key}, long); code != 200 || strings.Contains(body, `"errors"`) {
		t.Fatalf("6,000 tokens after the grant: %d %.300s", code, body)
	}
	// A grant raises bounds, never lowers them.
	op.fails(t, flightgraph.ECodeInvalidParameter, review, map[string]any{"id": ask(), "q": map[string]any{"maxDepth": 11}})
}
