package flightgraph

import "context"

// CallerKind tells how a request authenticated.
type CallerKind string

const (
	CallerAnonymous CallerKind = "anonymous"
	CallerKey       CallerKind = "api_key"      // the api-key header
	CallerToken     CallerKind = "access_token" // an OAuth 2.0 bearer token
	CallerSession   CallerKind = "session"      // a portal session
)

// Caller is who is calling, as the access middleware established it. Handlers and resolvers read
// it and never parse credentials themselves.
type Caller struct {
	Kind          CallerKind
	KeyID         string
	ApplicationID string
	// Account is the portal account behind a session, or the owner of the key's application.
	Account *Account
	// SessionHash is the hash of a portal session's token, to end it with.
	SessionHash string
	// CustomerID is the loyalty customer of a password-grant token.
	CustomerID string
	Grant      Grant
	// Products maps each product the caller may call to its approved subscription and plan.
	Products map[string]*Entitlement
}

// Entitlement is an approved subscription with its limits.
type Entitlement struct {
	SubscriptionID string
	Plan           *Plan
}

// Role is the caller's portal role, "" for callers without an account.
func (c *Caller) Role() Role {
	if c == nil || c.Account == nil {
		return ""
	}
	return c.Account.Role
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFromContext returns the request's caller; an anonymous one if the middleware put none.
func CallerFromContext(ctx context.Context) *Caller {
	if c, ok := ctx.Value(callerKey{}).(*Caller); ok && c != nil {
		return c
	}
	return &Caller{Kind: CallerAnonymous}
}
