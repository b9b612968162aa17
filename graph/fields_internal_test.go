package graph

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph/model"
)

// originRoot resolves Flight.origin as its mode says; nothing else (a call would panic).
type originRoot struct {
	ResolverRoot
	mode string
}

func (r originRoot) Flight() FlightResolver { return originFlight(r) }

type originFlight struct {
	ResolverRoot
	mode string
}

func (originFlight) Carrier(context.Context, *model.Flight) (*flightgraph.Carrier, error) {
	return nil, nil
}
func (originFlight) Destination(context.Context, *model.Flight) (*flightgraph.Airport, error) {
	return nil, nil
}

func (f originFlight) Origin(context.Context, *model.Flight) (*flightgraph.Airport, error) {
	switch f.mode {
	case "error":
		return nil, errors.New("the airports cannot be read")
	case "panic":
		panic("boom")
	case "nil":
		return nil, nil
	}
	return &flightgraph.Airport{Code: "AMS"}, nil
}

// TestFieldsAnswerAsGqlgen: a field resolved on the fields' path (inlineFields) answers what
// gqlgen's graphql.ResolveField answers, the same value or null and the same errors at the same
// paths, for a resolver that answers, fails, panics or answers nil where the schema wants a
// value; and the plain run takes the path while the one with a field middleware does not.
func TestFieldsAnswerAsGqlgen(t *testing.T) {
	code := ast.SelectionSet{&ast.Field{Alias: "code", Name: "code"}}
	field := graphql.CollectedField{Field: &ast.Field{Alias: "from", Name: "origin", SelectionSet: code}, Selections: code}
	for _, mode := range []string{"ok", "error", "panic", "nil"} {
		answers := map[bool]string{}
		for _, plain := range []bool{true, false} {
			var around []graphql.FieldMiddleware
			var seen int
			if !plain {
				around = append(around, func(ctx context.Context, next graphql.Resolver) (any, error) { seen++; return next(ctx) })
			}
			ctx, ec := leafOperation(t, NewExecutableSchema(Config{Resolvers: originRoot{mode: mode}}), around...)
			if PlainField(ec.OperationContext) != plain {
				t.Fatalf("plain=%v: the operation's middleware is not what the run wants", plain)
			}
			got := "null"
			if m := ec._Flight_origin(ctx, field, &model.Flight{}); m != graphql.Null {
				got = written(t, m)
			}
			var errs []string
			for _, e := range graphql.GetErrors(ctx) {
				errs = append(errs, fmt.Sprintf("%s at %s", e.Message, e.Path))
			}
			answers[plain] = fmt.Sprintf("%s %v", got, errs)
			if !plain && seen == 0 {
				t.Errorf("%s: the middleware saw no field", mode)
			}
		}
		if answers[true] != answers[false] {
			t.Errorf("%s: the fields' path answers %s, gqlgen's %s", mode, answers[true], answers[false])
		}
		t.Logf("%s: %s", mode, answers[true])
		if mode == "ok" && answers[true] != `{"code":"AMS"} []` {
			t.Errorf("the airport answers %s", answers[true])
		}
	}
}
