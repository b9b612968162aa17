package flightgraph

// The GraphQL executor in graph/ and the resolver stubs in resolvers/ are generated from
// schema.graphql and gqlgen.yml; gqlgen resolves their paths from this directory.
//go:generate go tool gqlgen generate
