// Package resolvers implements the GraphQL schema. The generated stubs in *.resolvers.go stay
// one-liners over travel/ and the request's dataloaders; the helpers they call live in one
// hand-written file per noun. Only this file holds dependencies.
package resolvers

import (
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/travel"
)

// Resolver is the root resolver.
type Resolver struct {
	Travel *travel.Service
	// Now is the clock that statuses and actual times follow.
	Now func() time.Time
	// Airframes names the configuration of each registration of the fleet, "" where none
	// (dataset.Airframes).
	Airframes func(registrations []string) []string
	// Live opens the subscriptions; Events records the operations API's writes.
	Live   *live.Service
	Events flightgraph.FlightEventStore
}
