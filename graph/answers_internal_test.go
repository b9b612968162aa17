package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"

	"github.com/flightgraph/flightgraph"
)

// schemaOperation returns ctx carrying the caller of role and the operation of query on the
// flight schema, as the Gate leaves it for a caller that may introspect.
func schemaOperation(t *testing.T, role flightgraph.Role, query string, vars map[string]any) context.Context {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(NewExecutableSchema(Config{}).Schema(), query)
	if errs != nil {
		t.Fatalf("%s: %v", query, errs)
	}
	oc := &graphql.OperationContext{RawQuery: query, Doc: doc, Operation: doc.Operations[0], Variables: vars}
	ctx := flightgraph.WithCaller(context.Background(), &flightgraph.Caller{Kind: flightgraph.CallerSession, Account: &flightgraph.Account{Role: role}})
	return graphql.WithResponseContext(graphql.WithOperationContext(ctx, oc), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
}

// TestAnswerKeys: only operations that read the schema alone are kept, and each under its
// caller's audience, its document, its variables (however spelled) and its operation: a partner's
// answer is never a developer's, whatever issue 19 makes of their schemas.
func TestAnswerKeys(t *testing.T) {
	key := func(role flightgraph.Role, query string, vars map[string]any) string {
		k, ok := answerKeyOf(schemaOperation(t, role, query, vars))
		if !ok {
			return "not kept"
		}
		return fmt.Sprintf("%s/%x", k.audience, k.request)
	}
	const typeOf = `query($n: String!) { __type(name: $n) { name } }`
	dev := key(flightgraph.RoleDeveloper, IntrospectionQuery, nil)
	for name, c := range map[string]struct {
		a, b string
		same bool
	}{
		"developer and partner":           {dev, key(flightgraph.RolePartner, IntrospectionQuery, nil), false},
		"partner and staff":               {key(flightgraph.RolePartner, IntrospectionQuery, nil), key(flightgraph.RoleStaff, IntrospectionQuery, nil), false},
		"one audience, two roles":         {key(flightgraph.RoleStaff, IntrospectionQuery, nil), key(flightgraph.RoleOperator, IntrospectionQuery, nil), true},
		"one caller, twice":               {dev, key(flightgraph.RoleDeveloper, IntrospectionQuery, nil), true},
		"two variables":                   {key("", typeOf, map[string]any{"n": "Flight"}), key("", typeOf, map[string]any{"n": "Airport"}), false},
		"two documents":                   {dev, key(flightgraph.RoleDeveloper, `{ _service { sdl } }`, nil), false},
		"variables in another order":      {key("", `query($a: String!, $b: String!) { x: __type(name: $a) { name } y: __type(name: $b) { name } }`, map[string]any{"a": "A", "b": "B"}), key("", `query($a: String!, $b: String!) { x: __type(name: $a) { name } y: __type(name: $b) { name } }`, map[string]any{"b": "B", "a": "A"}), true},
		"an API's field is not kept":      {key(flightgraph.RoleDeveloper, `{ __schema { queryType { name } } fleet { configuration } }`, nil), "not kept", true},
		"__typename alone is not kept":    {key(flightgraph.RoleDeveloper, `{ __typename }`, nil), "not kept", true},
		"a mutation is not kept":          {key(flightgraph.RoleDeveloper, `mutation { __typename }`, nil), "not kept", true},
		"introspection with a __typename": {key(flightgraph.RoleDeveloper, `{ __typename __schema { queryType { name } } }`, nil), "not kept", false},
	} {
		if (c.a == c.b) != c.same {
			t.Errorf("%s: keys %s and %s, want the same: %v", name, c.a, c.b, c.same)
		}
	}
}

// TestAnswersBounded: whatever documents callers send, the answers kept stay within MaxAnswers
// and MaxAnswerBytes, the least recently used going first, and a kept answer is served without
// running the operation again.
func TestAnswersBounded(t *testing.T) {
	a := NewAnswers(nil)
	ran := 0
	big := json.RawMessage(`"` + strings.Repeat("x", MaxAnswerBytes/20) + `"`)
	for i := range 3 * MaxAnswers {
		ctx := schemaOperation(t, flightgraph.RoleDeveloper, fmt.Sprintf(`{ a%d: __schema { queryType { name } } }`, i), nil)
		a.InterceptResponse(ctx, func(context.Context) *graphql.Response { ran++; return &graphql.Response{Data: big} })
		if a.bytes > MaxAnswerBytes || a.kept.Len() > MaxAnswers {
			t.Fatalf("after %d answers: %d kept, %d bytes", i+1, a.kept.Len(), a.bytes)
		}
	}
	total := 0
	for _, k := range a.kept.Keys() {
		v, _ := a.kept.Peek(k)
		total += cap(v.data) // what it holds
	}
	if total != a.bytes {
		t.Errorf("%d bytes counted, %d kept", a.bytes, total)
	}
	ctx := schemaOperation(t, flightgraph.RoleDeveloper, IntrospectionQuery, nil)
	ran = 0
	for range 3 {
		if resp := a.InterceptResponse(ctx, func(context.Context) *graphql.Response { ran++; return &graphql.Response{Data: json.RawMessage(`{}`)} }); string(resp.Data) != `{}` {
			t.Fatalf("answer %s", resp.Data)
		}
	}
	if ran != 1 {
		t.Errorf("the operation ran %d times for 3 requests, want once", ran)
	}
}
