package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// fieldArgs is a field's arguments as args makes them from the field's argument map under the
// operation's variables (graph/gen puts it where gqlgen's generated code makes them): gqlgen
// makes them again for every object the field is resolved on, a map of the raw arguments and
// one of the values each time, the same for each (a board's 25 cities each parsed their name's
// language). Here the request's loaders keep them, made once per field of the selection, for
// the operation: its variables are the same throughout, and an HTTP request or an operation
// over a WebSocket has loaders of its own (a subscription's event, whose loaders serve
// subscribers of other variables, keeps none). Arguments that fail are not kept, so that every
// object reports its own error at its own path, as gqlgen does. The kept map is shared by the
// field's objects: nothing writes a field context's Args.
func fieldArgs(ctx context.Context, field graphql.CollectedField, vars map[string]any, args func(context.Context, map[string]any) (map[string]any, error)) (map[string]any, error) {
	l := loadersOf(ctx)
	if l == nil {
		return args(ctx, field.ArgumentMap(vars))
	}
	return l.args.get(ctx, field, vars, args)
}

// keptArgs are the arguments of an operation's fields, by field (fieldArgs).
type keptArgs struct {
	mu   sync.Mutex
	args map[*ast.Field]map[string]any
}

func (k *keptArgs) get(ctx context.Context, field graphql.CollectedField, vars map[string]any, args func(context.Context, map[string]any) (map[string]any, error)) (map[string]any, error) {
	k.mu.Lock()
	a, ok := k.args[field.Field]
	k.mu.Unlock()
	if ok {
		return a, nil
	}
	a, err := args(ctx, field.ArgumentMap(vars))
	if err != nil {
		return a, err
	}
	k.mu.Lock()
	if k.args == nil {
		k.args = map[*ast.Field]map[string]any{}
	}
	k.args[field.Field] = a
	k.mu.Unlock()
	return a, nil
}
