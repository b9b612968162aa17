package access

import (
	"testing"

	"github.com/flightgraph/flightgraph"
)

// TestStandardPlansFitTheCeiling: the GraphQL parser is held to flightgraph.MaxQueryLimits before
// anyone's plan is known, so no standard plan may allow more.
func TestStandardPlansFitTheCeiling(t *testing.T) {
	for vis, p := range planOf {
		if got := p.query.Max(flightgraph.MaxQueryLimits); got != flightgraph.MaxQueryLimits {
			t.Errorf("the %s plan's bounds %+v pass the ceiling %+v", vis, p.query, flightgraph.MaxQueryLimits)
		}
	}
}
