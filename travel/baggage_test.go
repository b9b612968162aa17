package travel_test

import (
	"context"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
)

// TestBaggageRules: the base allowance follows class and family (the offers' checked bags), a tier
// adds bags, paid options cost less with a tier, and a loyalty query without a tier is refused.
func TestBaggageRules(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	ask := func(q flightgraph.BaggageQuery) *flightgraph.BaggageAnswer {
		t.Helper()
		q.Origin, q.Destination = "AMS", "CDG"
		a, err := e.BaggageAllowances(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	product := func(ps []*flightgraph.BaggageProduct, id string) *flightgraph.BaggageProduct {
		for _, p := range ps {
			if p.Identifier == id {
				return p
			}
		}
		return nil
	}
	light := ask(flightgraph.BaggageQuery{Type: flightgraph.BaggageBase, TravelClass: flightgraph.CabinEconomy, PassengerTypes: []string{"ADT", "INF"}})
	base := light.Passengers[0].Base[0].Products
	if h := product(base, "hand-baggage"); h == nil || h.Allowance != 1 || h.MaxKg != 12 || product(base, "check-in-baggage") != nil {
		t.Errorf("Economy Light: %+v", base)
	}
	if light.Passengers[1].Base[0].Products[0].Identifier != "accessory" || product(light.Passengers[1].Base[0].Products, "strollers") == nil {
		t.Errorf("an infant's: %+v", light.Passengers[1].Base[0].Products)
	}
	flex := ask(flightgraph.BaggageQuery{Type: flightgraph.BaggageAllLoyalty, TravelClass: flightgraph.CabinBusiness, FareFamily: "BUSINESS_FLEX", LoyaltyProgram: "FGMILES_GOLD"})
	p := flex.Passengers[0]
	if c := product(p.Base[0].Products, "check-in-baggage"); c == nil || c.Allowance != flightgraph.FareFamilies[6].CheckedBags || c.MaxKg != 32 {
		t.Errorf("Business Flex checked: %+v", c)
	}
	if l := p.Loyalty[0].Products; len(l) != 1 || l[0].Allowance != 1 || l[0].MaxKg != 32 {
		t.Errorf("GOLD adds: %+v", l)
	}
	plain := ask(flightgraph.BaggageQuery{Type: flightgraph.BaggagePaid, TravelClass: flightgraph.CabinBusiness})
	if a, b := p.Paid[0].Products[0].Online.Minor, plain.Passengers[0].Paid[0].Products[0].Online.Minor; a >= b {
		t.Errorf("an extra bag costs %d with GOLD, %d without", a, b)
	}
	for _, c := range []struct {
		q    flightgraph.BaggageQuery
		code string
	}{
		{flightgraph.BaggageQuery{Type: flightgraph.BaggageLoyalty, TravelClass: flightgraph.CabinEconomy}, flightgraph.ECodeMissingParameter},
		{flightgraph.BaggageQuery{Type: "everything", TravelClass: flightgraph.CabinEconomy}, flightgraph.ECodeInvalidParameter},
		{flightgraph.BaggageQuery{Type: flightgraph.BaggageBase, TravelClass: flightgraph.CabinEconomy, FareFamily: "FIRST"}, flightgraph.ECodeInvalidParameter},
		{flightgraph.BaggageQuery{Type: flightgraph.BaggageBase, TravelClass: flightgraph.CabinEconomy, PassengerTypes: []string{"DOG"}}, flightgraph.ECodeInvalidParameter},
	} {
		c.q.Origin, c.q.Destination = "AMS", "CDG"
		if _, err := e.BaggageAllowances(ctx, c.q); flightgraph.ErrorCode(err) != c.code {
			t.Errorf("%+v: %v, want %s", c.q, err, c.code)
		}
	}
}
