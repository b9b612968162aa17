package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"

	"github.com/flightgraph/flightgraph"
)

// Deadline is the gqlgen extension that stops an operation's work when its request's context is
// done: the deadline passed or the client went away. gqlgen itself resolves every field it has
// started whatever the context says, and much of the work (reference data from memory, prefetched
// values, lists of objects) never asks it; so every field asks here before it resolves, and the
// unresolved rest of the answer costs nothing. The store's calls stop on their own context.
type Deadline struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.FieldInterceptor
} = Deadline{}

// ExtensionName implements graphql.HandlerExtension.
func (Deadline) ExtensionName() string { return "Deadline" }

// Validate implements graphql.HandlerExtension.
func (Deadline) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptField implements graphql.FieldInterceptor. Only resolvers are asked: a plain field of
// an object already in hand costs nothing, and most fields of a large answer are plain. The
// non-blocking receive on Done takes no lock while the context is live.
func (Deadline) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	if fc := graphql.GetFieldContext(ctx); fc != nil && !fc.IsResolver {
		return next(ctx)
	}
	select {
	case <-ctx.Done():
		return nil, stopped(ctx)
	default:
		return next(ctx)
	}
}

// stopped is the error of work stopped because its context is done.
func stopped(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return flightgraph.Errorf(flightgraph.ECodeTimeout, "the request ran out of time")
	}
	return flightgraph.Errorf(flightgraph.ECodeTimeout, "the request was cancelled")
}
