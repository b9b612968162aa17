package flightgraph

import (
	"context"
	"sync/atomic"
)

// HeavyWork is a request's hold on one of the replica's heavy-work slots (see Weight). The edge's
// access guard takes the slot before it charges the call and gives it back when the request ends;
// the domain code of heavy work takes the request's turn (Turn) before it starts, so the heavy
// parts of one request (a GraphQL operation's aliased calendars) run one at a time in that one
// slot rather than each on a core of its own.
//
// It is the second line behind the guard's: heavy work asked to run without a held slot (an edge
// that did not declare its operation heavy) is refused, not run unbounded.
type HeavyWork struct {
	held atomic.Bool
	turn chan struct{}
}

// NewHeavyWork returns a request's hold, not yet holding a slot. Every request has one, and
// few do heavy work: its turn is made when it first holds a slot.
func NewHeavyWork() *HeavyWork { return &HeavyWork{} }

// Hold records that the request holds a slot, or (false) that it gave it back. The guard holds
// it before any of the request's work starts, so whatever takes a Turn sees the turn made.
func (w *HeavyWork) Hold(held bool) {
	if held && w.turn == nil {
		w.turn = make(chan struct{}, 1)
	}
	w.held.Store(held)
}

// Held reports whether the request holds a slot.
func (w *HeavyWork) Held() bool { return w != nil && w.held.Load() }

// Turn waits for the request's turn at its slot and returns the function that gives it back;
// ECodeTimeout when ctx ends first.
func (w *HeavyWork) Turn(ctx context.Context) (func(), error) {
	select {
	case w.turn <- struct{}{}:
		return func() { <-w.turn }, nil
	case <-ctx.Done():
		return nil, &Error{Code: ECodeTimeout, Message: "The request ran out of time waiting for its turn.", Err: ctx.Err()}
	}
}

type heavyWorkKey struct{}

// WithHeavyWork returns ctx carrying the request's hold on heavy work.
func WithHeavyWork(ctx context.Context, w *HeavyWork) context.Context {
	return context.WithValue(ctx, heavyWorkKey{}, w)
}

// HeavyWorkFromContext returns the request's hold on heavy work, or nil.
func HeavyWorkFromContext(ctx context.Context) *HeavyWork {
	w, _ := ctx.Value(heavyWorkKey{}).(*HeavyWork)
	return w
}
