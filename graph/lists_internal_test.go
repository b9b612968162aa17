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
	}, 20*time.Millisecond, &l.batches, nil)
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
	loader2 := newLoader(loader.fetch, 20*time.Millisecond, &l2.batches, nil)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	loader2.Prefetch(context.Background(), keys)
	var f inFlight
	marshalList(listContext(l2), n, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		f.enter()
		defer f.leave()
		v, _ := Load(ctx, loader2, keys[i])
		return graphql.MarshalString(v)
	})
	if len(batches) != 1 || f.max != 1 || l2.batches.Load() != 0 {
		t.Errorf("prefetched: %d fetches, %d batches, %d elements at once; want the prefetch alone, in line", len(batches), l2.batches.Load(), f.max)
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
