package flightgraph_test

import (
	"testing"

	"github.com/flightgraph/flightgraph"
)

// TestCustomPlanName: a granted plan is named by its limits, in the words people read, and so
// is one granted before plans were so named.
func TestCustomPlanName(t *testing.T) {
	if got := flightgraph.CustomPlanName(flightgraph.Limits{PerSecond: 20, PerDay: 200000}); got != "Custom: 20/s, 200,000/day" {
		t.Errorf("CustomPlanName = %q", got)
	}
	old := &flightgraph.Plan{Name: "Custom sub_abc", Custom: true, Limits: flightgraph.Limits{PerSecond: 1000, PerDay: 1_000_000_000}}
	if got := old.DisplayName(); got != "Custom: 1,000/s, 1,000,000,000/day" {
		t.Errorf("DisplayName = %q", got)
	}
	if got := (&flightgraph.Plan{Name: "Default", Limits: flightgraph.DefaultLimits}).DisplayName(); got != "Default" {
		t.Errorf("a standard plan's DisplayName = %q", got)
	}
}
