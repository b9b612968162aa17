// Package portal implements the portal's GraphQL schema (portal.graphql). The generated stubs in
// *.resolvers.go stay one-liners over access/; the helpers they call live in portal.go. Only this
// file holds dependencies.
package portal

import "github.com/flightgraph/flightgraph/access"

// Resolver is the root resolver.
type Resolver struct {
	Access *access.Service
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
