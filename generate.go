package flightgraph

// The GraphQL executor in graph/ and the resolver stubs in resolvers/ are generated from
// schema.graphql and gqlgen.yml; the portal's, in graph/portal and resolvers/portal, from
// portal.graphql and gqlgen.portal.yml. gqlgen resolves their paths from this directory. The
// subgraph's is gqlgen's run through graph/gen, which has its lists marshalled by graph's
// marshalList (graph/lists.go).
//go:generate go run ./graph/gen
//go:generate go tool gqlgen generate --config gqlgen.portal.yml
