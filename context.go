package flightgraph

import "context"

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request's id, which logs and masked errors quote.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFromContext returns the request id, or "".
func RequestIDFromContext(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
