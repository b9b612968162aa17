package graph

import (
	"context"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestOperationTimeout: a query or mutation that came over a stream (its context has no
// deadline) executes within the request timeout all the same; a subscription keeps its stream's
// life; an operation whose request has its own deadline keeps it.
func TestOperationTimeout(t *testing.T) {
	mw := OperationTimeout(time.Minute)
	run := func(ctx context.Context, op ast.Operation) (time.Time, bool) {
		ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: op}})
		var deadline time.Time
		var ok bool
		mw(ctx, func(ctx context.Context) *graphql.Response {
			deadline, ok = ctx.Deadline()
			return &graphql.Response{}
		})
		return deadline, ok
	}
	for _, op := range []ast.Operation{ast.Query, ast.Mutation} {
		if d, ok := run(context.Background(), op); !ok || time.Until(d) > time.Minute {
			t.Errorf("a %s on a stream: deadline %v %v, want within a minute", op, d, ok)
		}
	}
	if _, ok := run(context.Background(), ast.Subscription); ok {
		t.Error("a subscription was given the request timeout")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if d, ok := run(ctx, ast.Query); !ok || time.Until(d) < 59*time.Minute {
		t.Errorf("a request's own deadline was replaced: %v", d)
	}
}
