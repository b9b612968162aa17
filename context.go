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

type clientAddressKey struct{}

// WithClientAddress returns ctx carrying the address of the request's client: its connection's
// host, an IPv6 client by its /64 (X-Forwarded-For is not trusted). The access middleware puts it
// there once, for every request; what bounds work per client (the mail budget) reads it.
func WithClientAddress(ctx context.Context, address string) context.Context {
	return context.WithValue(ctx, clientAddressKey{}, address)
}

// ClientAddressFromContext returns the request's client address, or "" outside a request.
func ClientAddressFromContext(ctx context.Context) string {
	a, _ := ctx.Value(clientAddressKey{}).(string)
	return a
}
