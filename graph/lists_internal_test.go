package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// listContext is a request's context as the executor's: a response context for errors, the
// loaders l, planned (fields set) or not.
func listContext(l *Loaders) context.Context {
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, func(context.Context, any) error {
		return errors.New("internal system error") // gqlgen's DefaultRecover's, without its stack on stderr
	})
	return WithLoaders(ctx, l)
}

// inFlight counts the elements running at once, and the most there were.
type inFlight struct {
	mu       sync.Mutex
	now, max int
}

func (f *inFlight) enter() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now++
	f.max = max(f.max, f.now)
}

func (f *inFlight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now--
}

// TestMarshalListInLine: under a plan, a list's elements are marshalled one after another, in
// order, on the caller's goroutine, each under its own index; without a plan, gqlgen's way (a
// goroutine each, all at once).
func TestMarshalListInLine(t *testing.T) {
	for _, planned := range []bool{true, false} {
		l := &Loaders{}
		if planned {
			l.fields = map[string]bool{}
		}
		ctx := listContext(l)
		var (
			f     inFlight
			order []int
			mu    sync.Mutex
		)
		const n = 16
		start := make(chan struct{})
		var started atomic.Int32
		out := marshalList(ctx, n, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
			f.enter()
			defer f.leave()
			if idx := graphql.GetFieldContext(ctx).Index; idx == nil || *idx != i {
				t.Errorf("element %d runs at index %v", i, idx)
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if !planned {
				// gqlgen's: every element is running before any returns.
				if started.Add(1) == n {
					close(start)
				}
				select {
				case <-start:
				case <-time.After(5 * time.Second):
					t.Errorf("element %d: the others did not start beside it", i)
				}
			}
			return graphql.MarshalInt(i)
		})
		if len(out) != n || marshalled(out[n-1]) != fmt.Sprint(n-1) {
			t.Fatalf("planned %v: %d elements, the last %v", planned, len(out), out[n-1])
		}
		if planned && (f.max != 1 || fmt.Sprint(order) != fmt.Sprint(seq(n))) {
			t.Errorf("planned: at most %d elements at once, in the order %v; want one at a time, in order", f.max, order)
		}
		if !planned && f.max != n {
			t.Errorf("unplanned: at most %d elements at once, want %d", f.max, n)
		}
	}
}

// TestMarshalListBatchesWhatWasNotPrefetched: elements that wait on a loader (values not
// prefetched) still share its batches: the first one waits alone, in line, and the rest run
// side by side, in one batch, as they did before. Marshalled in line to the end, each would
// wait a batch of its own.
func TestMarshalListBatchesWhatWasNotPrefetched(t *testing.T) {
	l := &Loaders{fields: map[string]bool{}}
	var mu sync.Mutex
	var batches [][]string
	loader := newLoader(func(_ context.Context, keys []string) ([]string, error) {
		mu.Lock()
		batches = append(batches, keys)
		mu.Unlock()
		return keys, nil
	}, 50*time.Millisecond, &l.batches, nil)
	ctx := listContext(l)
	const n = 12
	out := marshalList(ctx, n, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		v, err := Load(ctx, loader, fmt.Sprint("k", i))
		if err != nil {
			t.Error(err)
		}
		return graphql.MarshalString(v)
	})
	for i, m := range out {
		if got := marshalled(m); got != fmt.Sprintf("%q", fmt.Sprint("k", i)) {
			t.Errorf("element %d: %s", i, got)
		}
	}
	if len(batches) != 2 || len(batches[0]) != 1 || len(batches[1]) != n-1 {
		t.Errorf("batches %v: want the first key alone, then the other %d in one", batches, n-1)
	}

	// Prefetched, the same list waits on nothing and is marshalled in line to its end.
	batches = nil
	l2 := &Loaders{fields: map[string]bool{}}
	loader2 := newLoader(loader.fetch, 50*time.Millisecond, &l2.batches, nil)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	loader2.Prefetch(context.Background(), keys)
	prefetched := l2.batches.Load()
	var f inFlight
	marshalList(listContext(l2), n, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		f.enter()
		defer f.leave()
		v, _ := Load(ctx, loader2, keys[i])
		return graphql.MarshalString(v)
	})
	if len(batches) != 1 || f.max != 1 || prefetched != 1 || l2.batches.Load() != prefetched {
		t.Errorf("prefetched: %d fetches, %d reads counted, %d elements at once; want the prefetch alone, in line", len(batches), l2.batches.Load(), f.max)
	}
}

// TestMarshalListPanic: an element's panic is the answer's error and nulls the list, in line as
// in goroutines, and the other elements are still marshalled.
func TestMarshalListPanic(t *testing.T) {
	for _, at := range []int{0, 5} {
		l := &Loaders{fields: map[string]bool{}}
		ctx := listContext(l)
		var ran atomic.Int32
		out := marshalList(ctx, 8, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
			ran.Add(1)
			if i == 2 {
				l.batches.Add(1) // as a loader's batch would: the rest run in goroutines
			}
			if i == at {
				panic("boom")
			}
			return graphql.MarshalInt(i)
		})
		errs := graphql.GetErrors(ctx)
		if out != nil || len(errs) != 1 || !strings.Contains(errs[0].Message, "internal system error") || ran.Load() != 8 {
			t.Errorf("panic at %d: list %v, errors %v, %d elements ran", at, out, errs, ran.Load())
		}
		if len(errs) == 1 && (len(errs[0].Path) != 1 || errs[0].Path[0] != ast.PathIndex(at)) {
			t.Errorf("panic at %d: the error's path is %v", at, errs[0].Path)
		}
	}
}

func marshalled(m graphql.Marshaler) string {
	var b strings.Builder
	m.MarshalGQL(&b)
	return b.String()
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestDeferredPath: an object without @defer groups builds no path; one with them gets its own.
func TestDeferredPath(t *testing.T) {
	i := 3
	ctx := graphql.WithFieldContext(context.Background(), &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "legs"}}})
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
	if p := deferredPath(ctx, map[string]*graphql.FieldSetView{}); p != nil {
		t.Errorf("no groups: path %v, want none", p)
	}
	if p := deferredPath(ctx, map[string]*graphql.FieldSetView{"l": nil}); p.String() != "legs[3]" {
		t.Errorf("a group: path %q, want legs[3]", p.String())
	}
}

// marshalFunc is marshalList's signature, and gqlgen's graphql.MarshalSliceConcurrently's.
type marshalFunc func(ctx context.Context, n int, workerLimit int64, omitPanicHandler bool, elem func(context.Context, int) graphql.Marshaler) graphql.Array

// TestMarshalListCountsEveryRead: an element that waits on a read that is not a dataloader
// batch (LoadAll, as an _entities-style resolver reads; Prefetch) is noticed as a batch's is,
// and the other elements' reads run side by side, as under gqlgen's. Counted only in the
// batches, the whole list would stay in line and its reads run one after another.
func TestMarshalListCountsEveryRead(t *testing.T) {
	const (
		n   = 8
		rtt = 20 * time.Millisecond
	)
	for _, c := range []struct {
		name string
		m    marshalFunc
	}{{"gqlgen", graphql.MarshalSliceConcurrently}, {"marshalList", marshalList}} {
		l := &Loaders{fields: map[string]bool{}}
		var (
			mu       sync.Mutex
			now, top int
		)
		loader := newLoader(func(_ context.Context, keys []string) ([]string, error) {
			mu.Lock()
			now++
			top = max(top, now)
			mu.Unlock()
			time.Sleep(rtt)
			mu.Lock()
			now--
			mu.Unlock()
			return keys, nil
		}, time.Millisecond, &l.batches, nil)
		start := time.Now()
		c.m(listContext(l), n, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
			vals, errs := LoadAll(ctx, loader, []string{fmt.Sprint("k", i)}) // as an _entities-style resolver would
			if errs[0] != nil {
				t.Error(errs[0])
			}
			return graphql.MarshalString(vals[0])
		})
		took := time.Since(start)
		t.Logf("%s: %d reads at most side by side, %v for %d elements, batches counted %d", c.name, top, took.Round(time.Millisecond), n, l.batches.Load())
		if top == 1 {
			t.Errorf("%s: the %d elements' reads ran one after another (%v, ~%d round trips in line)", c.name, n, took.Round(time.Millisecond), n)
		}
	}
}

// TestMarshalListNested: lists of lists whose leaves load a hop nobody prefetched (which the
// roots' prefetching rules out: TestListHopsArePrefetched). gqlgen runs every leaf at once and
// they share one batch; marshalList runs each level's first element in line, so the first leaf
// waits alone, then its siblings, and every level's remaining elements, with all the lists
// under them, at once (concurrentElements): depth+1 batches in sequence at most, not one per
// element, nor 2^depth as when nested lists went in line again under elements in goroutines.
func TestMarshalListNested(t *testing.T) {
	const depth, width = 3, 4
	for _, c := range []struct {
		name string
		m    marshalFunc
	}{{"gqlgen", graphql.MarshalSliceConcurrently}, {"marshalList", marshalList}} {
		l := &Loaders{fields: map[string]bool{}}
		var mu sync.Mutex
		var sizes []int
		loader := newLoader(func(_ context.Context, keys []string) ([]string, error) {
			mu.Lock()
			sizes = append(sizes, len(keys))
			mu.Unlock()
			return keys, nil
		}, 50*time.Millisecond, &l.batches, nil)
		var level func(ctx context.Context, d int, prefix string) graphql.Marshaler
		level = func(ctx context.Context, d int, prefix string) graphql.Marshaler {
			if d == depth {
				v, err := Load(ctx, loader, prefix)
				if err != nil {
					t.Error(err)
				}
				return graphql.MarshalString(v)
			}
			return c.m(ctx, width, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
				return level(ctx, d+1, fmt.Sprint(prefix, "/", i))
			})
		}
		start := time.Now()
		level(listContext(l), 0, "")
		took := time.Since(start)
		t.Logf("%s: %d leaves in %d batches %v, %v", c.name, width*width*width, len(sizes), sizes, took.Round(time.Millisecond))
		// gqlgen's, for comparison only: its goroutines may outlast the window under the race
		// detector, and split its batch.
		if c.name != "gqlgen" && len(sizes) > depth+1 {
			t.Errorf("%s: %d batches in sequence for one level of leaves (%v), want at most %d", c.name, len(sizes), took.Round(time.Millisecond), depth+1)
		}
	}
}
