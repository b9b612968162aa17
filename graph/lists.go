package graph

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// marshalList marshals a list of objects for the executor (graph/gen puts it where gqlgen's
// generated code calls graphql.MarshalSliceConcurrently, with the same arguments).
//
// gqlgen starts a goroutine for every element of a list of objects, whatever its fields, so
// that an element waiting on a loader does not hold up its siblings: their keys must reach the
// loader within its batch window. Under the prefetch plan (PlanPrefetch) the elements wait on
// nothing: whoever holds a level (a root resolver, or a loader's hook once its batch is back)
// has fetched or primed the next one already, and the fields read what it fetched. A Departures
// board then started 13 goroutines a flight for nothing but scheduling.
//
// So, where the operation was planned, marshalList marshals the elements in line, one after
// another, as long as no read of the request ran meanwhile: the first element during whose
// marshalling Loaders.batches moved (a batch, a prefetch, a read-back; the element's own, or
// another root field's running beside it, which ends it too, at worst needlessly) ends it, and the
// rest are marshalled as gqlgen does, each in a goroutine, so that their keys share one batch
// again; lists under those elements are then gqlgen's too (concurrentElements). The rule that
// keeps this sound: a nested resolver waits only through the loaders (Load, LoadAll,
// ServedCabins, the read-backs), never on a store or a service of its own, and a root resolver
// that hands out a list primes or prefetches what its elements' fields load
// (TestListHopsArePrefetched). A list whose elements' hops were not prefetched costs its first
// element's reads once more, in line. Without a plan (no loaders, or an operation the planner
// did not see), or under an element already marshalled in a goroutine, it is gqlgen's own.
//
// Each element runs under a field context of its own index, as gqlgen's do; a panic in one is
// added to the answer as an error and nulls the list, as gqlgen's panic handler does.
func marshalList(ctx context.Context, n int, workerLimit int64, omitPanicHandler bool, elem func(context.Context, int) graphql.Marshaler) graphql.Array {
	l := loadersOf(ctx)
	if l == nil || l.fields == nil || n < 2 || workerLimit > 0 || ctx.Value(concurrentElements{}) != nil {
		return graphql.MarshalSliceConcurrently(ctx, n, workerLimit, omitPanicHandler, elem)
	}
	ret := make(graphql.Array, n)
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
		// The elements' field contexts and indices, two allocations rather than two an element.
		fcs   = make([]graphql.FieldContext, n)
		index = make([]int, n)
	)
	one := func(ctx context.Context, i int) {
		index[i], fcs[i].Index = i, &index[i]
		childCtx := graphql.WithFieldContext(ctx, &fcs[i])
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
			one(ctx, i)
			if inline = l.batches.Load() == before; !inline {
				ctx = context.WithValue(ctx, concurrentElements{}, true)
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			one(ctx, i)
		}()
	}
	wg.Wait()
	if failed.Load() {
		return nil
	}
	return ret
}

// concurrentElements marks the context of a list's elements marshalled in goroutines: their
// siblings waited on a read, and lists under them are marshalled as gqlgen does, at once, so
// that their keys join one batch rather than each level's first element waiting alone.
type concurrentElements struct{}

// deferredPath is the path of an object's @defer groups, for ProcessDeferredGroup (graph/gen
// puts it where gqlgen's generated code calls graphql.GetPath for them): nil when there are
// none, which ProcessDeferredGroup then ignores, so that an object does not build its path for
// nothing. With @defer executed in line (InlineDeferred), there are never any.
func deferredPath(ctx context.Context, defers map[string]*graphql.FieldSetView) ast.Path {
	if len(defers) == 0 {
		return nil
	}
	return graphql.GetPath(ctx)
}

// deferredFields is an object's set of deferred fields, made when the first is added (graph/gen
// puts it before gqlgen's generated code adds one): gqlgen's makes one for every object, which
// hardly ever has any.
func deferredFields(fs *graphql.FieldSet) *graphql.FieldSet {
	if fs == nil {
		return graphql.NewFieldSet(nil)
	}
	return fs
}

// deferredViews is an object's views of its deferred fields by label, made when the first is
// added, as deferredFields.
func deferredViews(views map[string]*graphql.FieldSetView) map[string]*graphql.FieldSetView {
	if views == nil {
		return map[string]*graphql.FieldSetView{}
	}
	return views
}
