package live

import (
	"context"
	"slices"
	"unsafe"

	"github.com/flightgraph/flightgraph"
)

// DefaultFlightCacheBytes is the flight cache's bound unless configured (--flight-cache-mb): some
// 11,800 flights of a leg or two (about 1.4 KB each, TestFlightCacheCountsWhatItHolds), four days
// of the demo network's.
const DefaultFlightCacheBytes = 16 << 20

// CacheFlights returns flights reading the flights it reads by id (FlightsByIDs, LegsByFlightIDs,
// FlightsWithLegs: a flight's status by id, an offer's segments, federation's _entities) through
// c, the entity cache of the operational flights: each flight with its legs as the store last
// read them, under its id. It is the response cache's kind (a Cache of its own, so that neither
// pushes the other out), and correct for the same reasons: an event of the status feed evicts
// the flight it names (flightgraph.FlightTag) before the hub's position moves past it, nothing is
// served while the hub has events to apply, a flight read while an event of it was being applied
// is not kept, and none is kept past flightgraph.CacheStatus's max-age. What the answer shows is
// still made per call from the flight (its status at the clock's now, the caller's audience), and
// the caller is admitted and charged before anything is read.
//
// The searches (FindFlights, FindLegs: a board, a schedule) read the store, whose page and order
// an entity cache cannot give. A flight missing from the store is not kept: the next read asks
// again. Callers get copies, never what is kept.
func CacheFlights(flights flightgraph.FlightStore, c *Cache) flightgraph.FlightStore {
	return cachedFlights{flights, c}
}

type cachedFlights struct {
	flightgraph.FlightStore
	c *Cache
}

// keptFlight is a flight and its legs as kept: values, so that what a caller does with its copy
// never reaches another's.
type keptFlight struct {
	flight flightgraph.Flight
	legs   []flightgraph.FlightLeg
}

func (k *keptFlight) copy() (*flightgraph.Flight, []*flightgraph.FlightLeg) {
	f, ls := k.flight, slices.Clone(k.legs)
	legs := make([]*flightgraph.FlightLeg, len(ls))
	for i := range ls {
		legs[i] = &ls[i]
	}
	return &f, legs
}

// ownTagOverhead is what a kept flight costs the cache's index beyond what Put counts for every
// answer (entryOverhead, tagOverhead): its tag is its own, so the index holds a map of one key
// for it, where an answer's tags are mostly shared (a board's flights); measured with the map's
// growth by TestFlightCacheCountsWhatItHolds.
const ownTagOverhead = 448

// size is what k holds: its structs and their strings' bytes, and its tag's map in the index.
func (k *keptFlight) size() int {
	f := &k.flight
	n := ownTagOverhead + int(unsafe.Sizeof(*k)) + len(f.ID) + len(f.ScheduleDate) + len(f.CarrierCode) + len(f.Suffix) + len(f.OriginCode) +
		len(f.DestinationCode) + len(f.Codeshares) + len(f.OnwardFlightID) + len(f.PreviousFlightID) + len(f.Haul)
	for i := range k.legs {
		l := &k.legs[i]
		n += int(unsafe.Sizeof(*l)) + len(l.FlightID) + len(l.OriginCode) + len(l.DestinationCode) + len(l.DepartureTerminal) +
			len(l.DepartureGate) + len(l.ArrivalTerminal) + len(l.ArrivalGate) + len(l.ConfigurationCode) + len(l.Registration) + len(l.ServiceType)
	}
	return n
}

func flightKey(id string) CacheKey { return KeyOf("flight", id) }

// read is FlightsWithLegs through the cache: the kept flights copied, the others read from the
// store in one call and kept.
func (s cachedFlights) read(ctx context.Context, ids []string) ([]*flightgraph.Flight, [][]*flightgraph.FlightLeg, error) {
	flights, legs := make([]*flightgraph.Flight, len(ids)), make([][]*flightgraph.FlightLeg, len(ids))
	var (
		missed     []string
		missedKeys []CacheKey // each hashed once, for Get and for Put
	)
	for i, id := range ids {
		key := flightKey(id)
		if k, ok := s.c.Get(key); ok {
			flights[i], legs[i] = k.Extra.(*keptFlight).copy()
		} else {
			missed, missedKeys = append(missed, id), append(missedKeys, key)
		}
	}
	if len(missed) == 0 {
		return flights, legs, nil
	}
	t := s.c.Begin() // before the read: an event applied during it keeps what it read out
	gotF, gotL, err := s.FlightStore.FlightsWithLegs(ctx, missed)
	if err != nil {
		return nil, nil, err
	}
	stored := s.c.Now()
	j := 0
	for i, id := range ids {
		if flights[i] != nil {
			continue
		}
		flights[i], legs[i] = gotF[j], gotL[j]
		key := missedKeys[j]
		j++
		if flights[i] == nil {
			continue
		}
		k := &keptFlight{flight: *flights[i], legs: make([]flightgraph.FlightLeg, len(legs[i]))}
		for n, l := range legs[i] {
			k.legs[n] = *l
		}
		s.c.Put(t, key, &Kept{Policy: flightgraph.CacheStatus, Stored: stored, Extra: k, ExtraSize: k.size()},
			[]string{flightgraph.FlightTag(id)})
	}
	return flights, legs, nil
}

func (s cachedFlights) FlightsWithLegs(ctx context.Context, ids []string) ([]*flightgraph.Flight, [][]*flightgraph.FlightLeg, error) {
	return s.read(ctx, ids)
}

func (s cachedFlights) FlightsByIDs(ctx context.Context, ids []string) ([]*flightgraph.Flight, error) {
	flights, _, err := s.read(ctx, ids)
	return flights, err
}

func (s cachedFlights) LegsByFlightIDs(ctx context.Context, ids []string) ([][]*flightgraph.FlightLeg, error) {
	_, legs, err := s.read(ctx, ids)
	return legs, err
}
