package graph

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// leafOperation is an operation's context as the executor's of es, with a response context for
// errors and a parent field "departure" for the leaf's path.
func leafOperation(t *testing.T, es graphql.ExecutableSchema, around ...graphql.FieldMiddleware) (context.Context, *executionContext) {
	t.Helper()
	ex := executor.New(es)
	for _, f := range around {
		ex.AroundFields(f)
	}
	oc, errs := ex.CreateOperationContext(graphql.StartOperationTrace(context.Background()), &graphql.RawParams{Query: "{ __typename }"})
	if errs != nil {
		t.Fatal(errs)
	}
	ctx := graphql.WithResponseContext(graphql.WithOperationContext(context.Background(), oc), graphql.DefaultErrorPresenter,
		func(context.Context, any) error { return errors.New("internal system error") })
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "departure", Name: "departure"}}})
	return ctx, newExecutionContext(oc, es.(*executableSchema), nil)
}

// TestPlainField: an executor with no extension is plain, one with a field middleware is not.
func TestPlainField(t *testing.T) {
	if passThrough() == 0 {
		t.Fatal("gqlgen's pass-through field middleware was not found: every leaf takes gqlgen's path")
	}
	es := NewExecutableSchema(Config{})
	_, ec := leafOperation(t, es)
	if !plainField(ec.OperationContext) {
		t.Error("an executor with no extension is not plain")
	}
	_, ec = leafOperation(t, es, func(ctx context.Context, next graphql.Resolver) (any, error) { return next(ctx) })
	if plainField(ec.OperationContext) {
		t.Error("an executor with a field middleware is plain")
	}
}

// TestPlainFieldUnderTheHandler: the operations of the subgraph's endpoint as the server builds it
// (NewHandler, with every extension it installs) take the leaves' path; a gqlgen that wraps the
// field middleware once an extension is used would turn it off everywhere, silently but for this.
func TestPlainFieldUnderTheHandler(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	stores := Stores{Flights: store.NewFlightStore(db), Places: store.NewPlaceStore(db), Aircraft: store.NewAircraftStore(db), Network: store.NewNetworkStore(db)}
	var admitted, plain bool
	h := NewHandler(nil, HandlerConfig{Stores: stores, Log: slog.New(slog.DiscardHandler), Admit: func(ctx context.Context, _ access.Charge) error {
		admitted, plain = true, plainField(graphql.GetOperationContext(ctx))
		return nil
	}})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !admitted {
		t.Fatalf("%d %s; admitted: %v", rec.Code, rec.Body.String(), admitted)
	}
	if !plain {
		t.Error("the handler's operations do not take the leaves' path")
	}
}

// TestLeafNullAtItsPath: a non-null leaf whose value marshals as null (a zero DateTime) is null
// with the schema's error at the leaf's own path, once, on the plain path as on gqlgen's.
func TestLeafNullAtItsPath(t *testing.T) {
	es := NewExecutableSchema(Config{})
	field := graphql.CollectedField{Field: &ast.Field{Alias: "scheduled", Name: "scheduled"}}
	for _, plain := range []bool{true, false} {
		var around []graphql.FieldMiddleware
		if !plain {
			around = append(around, func(ctx context.Context, next graphql.Resolver) (any, error) { return next(ctx) })
		}
		ctx, ec := leafOperation(t, es, around...)
		if got := ec._Movement_scheduled(ctx, field, &flightgraph.Movement{}); got != graphql.Null {
			t.Errorf("plain=%v: a zero DateTime marshals as %v, want null", plain, got)
		}
		errs := graphql.GetErrors(ctx)
		if len(errs) != 1 || errs[0].Path.String() != "departure.scheduled" || errs[0].Message != "the requested element is null which the schema does not allow" {
			t.Errorf("plain=%v: errors %v, want the schema's one at departure.scheduled", plain, gqlerror.List(errs))
		}
	}
}

// written is what m writes into a buffer, as the executor writes an answer; it fails the test
// when m writes anything else into another writer.
func written(t *testing.T, m graphql.Marshaler) string {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	var other strings.Builder
	m.MarshalGQL(&other)
	if other.String() != b.String() {
		t.Errorf("writes %s into a buffer, %s into a strings.Builder", b.String(), other.String())
	}
	return b.String()
}

// FuzzLeafString: a string leaf marshalled where it lies writes what gqlgen's MarshalString
// writes, whatever the string (quotes, controls, invalid UTF-8); so do ints, booleans and
// times that are not zero, in any zone.
func FuzzLeafString(f *testing.F) {
	for _, s := range []string{"", "AMS", `say "hi"\`, "tab\there\nline\r", "\x00\x1f\x7f", "caf\xc3\xa9", "bad \xff\xfe utf-8", "\u2028"} {
		f.Add(s, int64(len(s)), len(s)%2 == 0)
	}
	f.Fuzz(func(t *testing.T, s string, n int64, b bool) {
		ls, li, lb := leafString(s), leafInt(n), leafBool(b)
		if got, want := written(t, &ls), written(t, graphql.MarshalString(s)); got != want {
			t.Errorf("string %q: leaf writes %s, gqlgen %s", s, got, want)
		}
		if got, want := written(t, &li), written(t, graphql.MarshalInt(int(n))); got != want {
			t.Errorf("int %d: leaf writes %s, gqlgen %s", n, got, want)
		}
		if got, want := written(t, &lb), written(t, graphql.MarshalBoolean(b)); got != want {
			t.Errorf("bool %v: leaf writes %s, gqlgen %s", b, got, want)
		}
		// A time of n nanoseconds from 1970 (and n seconds, to reach far years) in a zone of
		// len(s) quarters of an hour east or west.
		zone := time.FixedZone("", (len(s)%56-28)*15*60)
		for _, at := range []time.Time{time.Unix(0, n).In(zone), time.Unix(n%(1<<40), 0).In(zone), time.Unix(0, n).UTC()} {
			if at.IsZero() {
				continue // gqlgen writes null, and graph/gen keeps a zero time off the path
			}
			lt := leafTime(at)
			if got, want := written(t, &lt), written(t, graphql.MarshalTime(at)); got != want {
				t.Errorf("time %v: leaf writes %s, gqlgen %s", at, got, want)
			}
		}
	})
}
