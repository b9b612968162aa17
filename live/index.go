package live

import (
	"strings"

	"github.com/flightgraph/flightgraph"
)

// index finds an event's subscribers without looking at the others: each subscription is filed
// under what its filter selects (its flights' ids, the airport of its board, or all events), and
// an event is matched against the subscriptions filed under its flight, its legs' airports and
// all. The fan-out of one event therefore costs its own subscribers, not the replica's. It is
// held under the Hub's lock.
type index struct {
	byFlight  map[string]map[*Sub]struct{}
	departing map[string]map[*Sub]struct{}
	arriving  map[string]map[*Sub]struct{}
	all       map[*Sub]struct{}
}

func newIndex() *index {
	return &index{byFlight: map[string]map[*Sub]struct{}{}, departing: map[string]map[*Sub]struct{}{},
		arriving: map[string]map[*Sub]struct{}{}, all: map[*Sub]struct{}{}}
}

// add files s under its filter; Filter.match decides the same way (ids first, then departures,
// then arrivals, else all).
func (x *index) add(s *Sub) {
	f := s.filter
	switch {
	case len(f.FlightIDs) > 0:
		for _, id := range f.FlightIDs {
			file(x.byFlight, id, s)
		}
	case f.Departing != "":
		file(x.departing, f.Departing, s)
	case f.Arriving != "":
		file(x.arriving, f.Arriving, s)
	default:
		x.all[s] = struct{}{}
	}
}

// remove takes s out of the index; empty entries go with it, so the index holds only what open
// subscriptions follow.
func (x *index) remove(s *Sub) {
	f := s.filter
	switch {
	case len(f.FlightIDs) > 0:
		for _, id := range f.FlightIDs {
			unfile(x.byFlight, id, s)
		}
	case f.Departing != "":
		unfile(x.departing, f.Departing, s)
	case f.Arriving != "":
		unfile(x.arriving, f.Arriving, s)
	default:
		delete(x.all, s)
	}
}

// each calls fn once for each subscription e matches. A subscription is filed under one of
// the maps (its filter's kind), and the airports of e are taken once each, so none is called
// twice for one event.
func (x *index) each(e *flightgraph.FlightEvent, fn func(*Sub)) {
	for s := range x.byFlight[e.FlightID] {
		fn(s)
	}
	airports(e.Origins, func(a string) {
		for s := range x.departing[a] {
			fn(s)
		}
	})
	airports(e.Destinations, func(a string) {
		for s := range x.arriving[a] {
			fn(s)
		}
	})
	for s := range x.all {
		fn(s)
	}
}

// size is the number of entries the index holds: for its tests.
func (x *index) size() int {
	n := len(x.all)
	for _, m := range []map[string]map[*Sub]struct{}{x.byFlight, x.departing, x.arriving} {
		for _, subs := range m {
			n += len(subs)
		}
	}
	return n
}

// airports calls fn once for each distinct airport of a space-separated list (" AMS JFK ").
func airports(list string, fn func(string)) {
	fields := strings.Fields(list)
	for i, a := range fields {
		seen := false
		for _, b := range fields[:i] {
			if a == b {
				seen = true
				break
			}
		}
		if !seen {
			fn(a)
		}
	}
}

func file(m map[string]map[*Sub]struct{}, k string, s *Sub) {
	subs := m[k]
	if subs == nil {
		subs = map[*Sub]struct{}{}
		m[k] = subs
	}
	subs[s] = struct{}{}
}

func unfile(m map[string]map[*Sub]struct{}, k string, s *Sub) {
	if subs := m[k]; subs != nil {
		delete(subs, s)
		if len(subs) == 0 {
			delete(m, k)
		}
	}
}
