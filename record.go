package flightgraph

import (
	"context"
	"slices"
	"sync"
)

// Record is what the edges note of one request as they serve it, for an observer that wraps them
// all and sees only the request and its answer: the request's trace (package tracing). It holds
// the caller, the APIs the call was charged, the GraphQL operation it ran and the error codes it
// answered with: identifiers, never a credential. The observer puts one in the context
// (WithRecord) and reads it once the answer is written. Without one, RecordFromContext is nil,
// whose methods do nothing: a note costs a context lookup.
//
// A Record is safe for concurrent use: resolvers note their errors in parallel.
type Record struct {
	mu            sync.Mutex
	caller        *Caller
	apis          []string
	calls         int
	operationType string
	operationName string
	codes         []string
}

type recordKey struct{}

// WithRecord returns ctx in which the edges note what they do in r.
func WithRecord(ctx context.Context, r *Record) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

// RecordFromContext returns the request's record, or nil when nobody observes it.
func RecordFromContext(ctx context.Context) *Record {
	r, _ := ctx.Value(recordKey{}).(*Record)
	return r
}

// NoteCaller notes who calls, as the access guard authenticated them.
func (r *Record) NoteCaller(c *Caller) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.caller = c
	r.mu.Unlock()
}

// NoteCharge notes that the call was admitted and charged calls in all to the APIs products.
func (r *Record) NoteCharge(products []string, calls int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range products {
		if !slices.Contains(r.apis, p) {
			r.apis = append(r.apis, p)
		}
	}
	r.calls += calls
}

// NoteOperation notes the GraphQL operation the request runs: its type (query, mutation,
// subscription) and its name, "" for an anonymous one.
func (r *Record) NoteOperation(typ, name string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.operationType, r.operationName = typ, name
	r.mu.Unlock()
}

// NoteError notes an error code the answer carries; each code is kept once, in the order first
// noted.
func (r *Record) NoteError(code string) {
	if r == nil || code == "" {
		return
	}
	r.mu.Lock()
	if !slices.Contains(r.codes, code) {
		r.codes = append(r.codes, code)
	}
	r.mu.Unlock()
}

// Caller returns the caller noted, nil when the request was not authenticated (a page, the token
// endpoint, a preflight answered before the guard).
func (r *Record) Caller() *Caller {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.caller
}

// Charged returns the APIs the call was charged, in the order admitted, and the calls it was
// charged in all.
func (r *Record) Charged() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.apis), r.calls
}

// Operation returns the GraphQL operation noted: its type, "" when none ran, and its name.
func (r *Record) Operation() (typ, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.operationType, r.operationName
}

// ErrorCodes returns the error codes the answer carries, in the order first noted.
func (r *Record) ErrorCodes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.codes)
}
