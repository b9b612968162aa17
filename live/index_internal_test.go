package live

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flightgraph/flightgraph"
)

// TestIndexMatchesTheFilters: over 2,000 subscriptions of every kind of filter (up to
// MaxFlightIDs ids, repeated ids among them, boards of departures and arrivals, all events), the
// index calls for each event exactly the subscriptions whose filter matches it, each once; as
// they are removed, it forgets them, down to nothing.
func TestIndexMatchesTheFilters(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	flight := func() string { return fmt.Sprintf("20261122+XX+%04d", r.IntN(300)) }
	airport := func() string { return []string{"AMS", "JFK", "CDG", "LHR", "NRT", "SIN"}[r.IntN(6)] }
	x := newIndex()
	var subs []*Sub
	for i := range 2000 {
		var f Filter
		switch i % 4 {
		case 0:
			for range 1 + r.IntN(MaxFlightIDs) {
				f.FlightIDs = append(f.FlightIDs, flight())
			}
		case 1:
			f.Departing = airport()
		case 2:
			f.Arriving = airport()
		}
		s := &Sub{filter: f}
		subs = append(subs, s)
		x.add(s)
	}
	check := func(t *testing.T, open []*Sub) {
		t.Helper()
		for range 150 {
			e := &flightgraph.FlightEvent{FlightID: flight(), Origins: " " + airport() + " " + airport() + " ", Destinations: " " + airport() + " " + airport() + " "}
			got := map[*Sub]int{}
			x.each(e, func(s *Sub) { got[s]++ })
			want := 0
			for _, s := range open {
				if s.filter.match(e) {
					want++
					if got[s] != 1 {
						t.Fatalf("event %+v: a matching subscription %+v called %d times", e, s.filter, got[s])
					}
				}
			}
			if len(got) != want {
				t.Fatalf("event %+v: %d subscriptions called, %d match", e, len(got), want)
			}
		}
	}
	check(t, subs)
	r.Shuffle(len(subs), func(i, j int) { subs[i], subs[j] = subs[j], subs[i] })
	for len(subs) > 0 {
		n := min(len(subs), 500)
		for _, s := range subs[:n] {
			x.remove(s)
		}
		subs = subs[n:]
		check(t, subs)
	}
	if n := x.size(); n != 0 || len(x.byFlight)+len(x.departing)+len(x.arriving) != 0 {
		t.Fatalf("the index holds %d entries (%d flights, %d, %d airports) once every subscription is removed", n, len(x.byFlight), len(x.departing), len(x.arriving))
	}
}
