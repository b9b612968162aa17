package graph

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
)

// marshalList marshals a list of objects for the executor (graph/gen puts it where gqlgen's
// generated code calls graphql.MarshalSliceConcurrently, with the same arguments).
//
// gqlgen starts a goroutine for every element of a list of objects, whatever its fields, so
// that an element waiting on a loader does not hold up its siblings: their keys must reach the
// loader within its batch window. Under the prefetch plan (PlanPrefetch) the elements rarely
// wait: whoever holds a level has fetched the next one already, and the fields read what it
// fetched. A Departures board then starts 13 goroutines a flight for nothing but scheduling.
//
// So, where the operation was planned, marshalList marshals the elements in line, one after
// another, as long as none has waited on a loader: the first element whose marshalling ran a
// loader batch (Loaders.batches moved, for this request) ends it, and the rest are marshalled
// as gqlgen does, each in a goroutine, so that their keys share one batch again. An operation
// whose hops are not all prefetched therefore costs at most one batch window more per list, in
// line, than before; one that is costs no goroutine per element. Without a plan (no loaders,
// or an operation the planner did not see), it is gqlgen's own.
//
// Each element runs under a field context of its own index, as gqlgen's do; a panic in one is
// added to the answer as an error and nulls the list, as gqlgen's panic handler does.
func marshalList(ctx context.Context, n int, workerLimit int64, omitPanicHandler bool, elem func(context.Context, int) graphql.Marshaler) graphql.Array {
	l := loadersOf(ctx)
	if l == nil || l.fields == nil || n < 2 || workerLimit > 0 {
		return graphql.MarshalSliceConcurrently(ctx, n, workerLimit, omitPanicHandler, elem)
	}
	ret := make(graphql.Array, n)
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	one := func(i int) {
		childCtx := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
		if !omitPanicHandler {
			defer func() {
				if r := recover(); r != nil {
					graphql.AddError(childCtx, graphql.Recover(childCtx, r))
					failed.Store(true)
				}
			}()
		}
		ret[i] = elem(childCtx, i)
	}
	inline := true
	for i := range n {
		if inline {
			before := l.batches.Load()
			one(i)
			inline = l.batches.Load() == before
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			one(i)
		}()
	}
	wg.Wait()
	if failed.Load() {
		return nil
	}
	return ret
}
