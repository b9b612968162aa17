package dataset

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Horizon is what a traveller can buy: the operational flights the store holds for its window
// (with their status, gates, delays and cancellations), and after the window's last date the
// schedule's flights as it plans them, made in memory from the schedule (route, days, times,
// aircraft) for the dates a read asks for and priced by the same rules. No flight instance is
// stored beyond the window, so the booking horizon costs neither start-up time nor disk.
//
// A read that falls in the window is the store's, in the same round trips as before; one beyond
// it costs none; one across the edge costs the store's round trips and the schedule's part is
// merged in the store's order (departure, then id). The schedule and the window's last date are
// read once, off the request (a detached context), and again after TTL in the background, like
// the reference snapshot, so that a day's roll of the window is seen within TTL.
type Horizon struct {
	Operational flightgraph.FlightStore
	Dataset     flightgraph.DatasetStore
	// TTL is how long the schedule and the window's last date are trusted; 0 means a minute.
	TTL time.Duration
	// Log reports failed background reloads; nil discards them.
	Log *slog.Logger
	// Now is the clock of the reloads' age; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	plan    *plan
	loading bool
}

var _ flightgraph.FlightStore = (*Horizon)(nil)

// MaxPlannedDays bounds the dates after the window one read plans, so that a read with an open
// end does not walk the schedule's whole period: the booking horizon (360 days) fits with room.
const MaxPlannedDays = 400

// plan is the schedule indexed for reads beyond the window.
type plan struct {
	loaded time.Time
	// last is the window's last materialised date; "" when the store holds no flight (then every
	// date is planned).
	last string
	m    *Materialiser
	// byOrigin are the indexes in m.flights of the flights that leave each airport first.
	byOrigin map[string][]int
	// byNumber indexes m.flights by carrier and number.
	byNumber map[string][]int
}

func (h *Horizon) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// current returns the plan, loading it on first use and reloading a stale one in the background.
func (h *Horizon) current(ctx context.Context) (*plan, error) {
	ttl := cmp.Or(h.TTL, time.Minute)
	h.mu.Lock()
	p := h.plan
	if p != nil {
		if h.now().Sub(p.loaded) >= ttl && !h.loading {
			h.loading = true
			go func() {
				np, err := h.load(context.Background())
				h.mu.Lock()
				defer h.mu.Unlock()
				h.loading = false
				if err != nil {
					if h.Log != nil {
						h.Log.Warn("schedule horizon reload failed; serving the previous one", "err", err)
					}
					return
				}
				h.plan = np
			}()
		}
		h.mu.Unlock()
		return p, nil
	}
	h.mu.Unlock()
	// The first load is the caller's, bounded by its cancellation but off its request's values:
	// its round trips are the service's, once, not the request's.
	np, err := h.load(ctx)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.plan == nil {
		h.plan = np
	}
	return h.plan, nil
}

// load reads the schedule, the zones and the window's dates.
func (h *Horizon) load(ctx context.Context) (*plan, error) {
	ctx, cancel := context.WithTimeout(detached{ctx}, 30*time.Second)
	defer cancel()
	dates, err := h.Dataset.MaterialisedDates(ctx)
	if err != nil {
		return nil, err
	}
	st, err := h.Dataset.DatasetState(ctx)
	if err != nil {
		return nil, err
	}
	p := &plan{loaded: h.now(), byOrigin: map[string][]int{}, byNumber: map[string][]int{}}
	if len(dates) > 0 {
		p.last = dates[len(dates)-1]
	}
	if st == nil {
		p.m = &Materialiser{}
		return p, nil
	}
	schedule, err := h.Dataset.Schedule(ctx)
	if err != nil {
		return nil, err
	}
	zones, err := h.Dataset.AirportZones(ctx)
	if err != nil {
		return nil, err
	}
	if p.m, err = NewMaterialiser(st.Seed, schedule, zones); err != nil {
		return nil, err
	}
	for i, legs := range p.m.flights {
		p.byOrigin[legs[0].OriginCode] = append(p.byOrigin[legs[0].OriginCode], i)
		k := numberKey(legs[0].CarrierCode, legs[0].FlightNumber)
		p.byNumber[k] = append(p.byNumber[k], i)
	}
	return p, nil
}

// Edge is the window's last stored date, as the horizon last loaded it: the flights it reads
// change when the window rolls, and then the edge moves (travel.Edged).
func (h *Horizon) Edge(ctx context.Context) (string, error) {
	p, err := h.current(ctx)
	if err != nil {
		return "", err
	}
	return p.last, nil
}

// detached is a context without the values of its parent (the request's round-trip counter):
// the plan is the service's, loaded once for every request.
type detached struct{ context.Context }

func (detached) Value(any) any { return nil }

// numberKey is the key of a carrier's flight number in plan.byNumber.
func numberKey(carrier string, number int) string { return fmt.Sprintf("%s%04d", carrier, number) }

// planned reports whether a schedule date is beyond the window.
func (p *plan) planned(date string) bool { return date > p.last }

// dayAfter is the date after date.
func dayAfter(date string) string {
	d, _ := time.Parse(flightgraph.DateLayout, date)
	return d.AddDate(0, 0, 1).Format(flightgraph.DateLayout)
}

// span is the schedule dates a filter can match: from first to last, inclusive; last "" for
// open-ended.
func span(f flightgraph.FlightFilter) (first, last string) {
	switch {
	case f.Date != "" && f.LastDate != "":
		return f.Date, f.LastDate
	case f.Date != "":
		return f.Date, f.Date
	}
	// A flight's schedule date is its local date of departure: a day at most from the UTC one
	// (two with delays; planned flights have none, and the store's own reads bound it so).
	if !f.DepartureFrom.IsZero() {
		first = f.DepartureFrom.UTC().Add(-48 * time.Hour).Format(flightgraph.DateLayout)
	}
	if !f.DepartureTo.IsZero() {
		last = f.DepartureTo.UTC().Add(48 * time.Hour).Format(flightgraph.DateLayout)
	}
	return first, last
}

// split tells which side of the window's edge a filter reads: the store's, the plan's, or both.
func (p *plan) split(f flightgraph.FlightFilter) (store, planned bool) {
	first, last := span(f)
	store = p.last != "" && (first == "" || first <= p.last)
	planned = last == "" || last > p.last
	return store, planned
}

// find plans the flights beyond the window that f matches (f's page aside), by departure then
// id, with their legs.
func (p *plan) find(f flightgraph.FlightFilter) ([]*flightgraph.Flight, map[string][]*flightgraph.FlightLeg) {
	first, last := span(f)
	if first == "" || first <= p.last {
		if p.last == "" {
			first = cmp.Or(first, time.Now().UTC().Format(flightgraph.DateLayout))
		} else {
			first = dayAfter(p.last)
		}
	}
	var dates []string
	for d := first; (last == "" || d <= last) && len(dates) < MaxPlannedDays; d = dayAfter(d) {
		dates = append(dates, d)
	}
	var patterns []int
	switch {
	case f.Carrier != "" && f.FlightNumber != 0:
		patterns = p.byNumber[numberKey(f.Carrier, f.FlightNumber)]
	case f.Origin != nil:
		for _, code := range f.Origin.AirportCodes() {
			patterns = append(patterns, p.byOrigin[code]...)
		}
	default:
		patterns = make([]int, len(p.m.flights))
		for i := range patterns {
			patterns[i] = i
		}
	}
	var dests []string
	if f.Destination != nil {
		dests = f.Destination.AirportCodes()
	}
	var origins []string
	if f.Origin != nil {
		origins = f.Origin.AirportCodes()
	}
	var out []*flightgraph.Flight
	legs := map[string][]*flightgraph.FlightLeg{}
	for _, date := range dates {
		day, _ := time.Parse(flightgraph.DateLayout, date)
		for _, i := range patterns {
			sched := p.m.flights[i]
			if f.Carrier != "" && sched[0].CarrierCode != f.Carrier || f.FlightNumber != 0 && sched[0].FlightNumber != f.FlightNumber ||
				origins != nil && !slices.Contains(origins, sched[0].OriginCode) ||
				dests != nil && !slices.Contains(dests, sched[len(sched)-1].DestinationCode) {
				continue
			}
			fl, ls := p.m.instance(sched, date, day, false)
			if fl == nil || !matches(f, fl) {
				continue
			}
			out = append(out, fl)
			legs[fl.ID] = ls
		}
	}
	slices.SortFunc(out, func(a, b *flightgraph.Flight) int {
		return cmp.Or(a.DepartureUTC.Compare(b.DepartureUTC), strings.Compare(a.ID, b.ID))
	})
	return out, legs
}

// matches checks a planned flight against f's times (scheduled and estimated are the same).
func matches(f flightgraph.FlightFilter, fl *flightgraph.Flight) bool {
	return (f.DepartureFrom.IsZero() || !fl.DepartureUTC.Before(f.DepartureFrom)) &&
		(f.DepartureTo.IsZero() || fl.DepartureUTC.Before(f.DepartureTo)) &&
		(f.ArrivalFrom.IsZero() || !fl.ArrivalUTC.Before(f.ArrivalFrom)) &&
		(f.ArrivalTo.IsZero() || fl.ArrivalUTC.Before(f.ArrivalTo))
}

// FindFlights implements flightgraph.FlightStore.
func (h *Horizon) FindFlights(ctx context.Context, f flightgraph.FlightFilter) ([]*flightgraph.Flight, int, error) {
	p, err := h.current(ctx)
	if err != nil {
		return nil, 0, err
	}
	inStore, inPlan := p.split(f)
	if !inPlan {
		return h.Operational.FindFlights(ctx, f)
	}
	planned, _ := p.find(f)
	if !inStore {
		return page(planned, f.Page), counted(len(planned), f.Page), nil
	}
	// Both sides: the store's matches up to the page's end, then the plan's, merged.
	sf := f
	sf.Page = flightgraph.Page{Limit: f.Page.Offset + f.Page.Limit, Uncounted: f.Page.Uncounted}
	stored, total, err := h.Operational.FindFlights(ctx, sf)
	if err != nil {
		return nil, 0, err
	}
	all := append(stored, planned...)
	slices.SortStableFunc(all, func(a, b *flightgraph.Flight) int {
		return cmp.Or(a.DepartureUTC.Compare(b.DepartureUTC), strings.Compare(a.ID, b.ID))
	})
	return page(all, f.Page), counted(total+len(planned), f.Page), nil
}

// page is one page of flights in order.
func page(all []*flightgraph.Flight, p flightgraph.Page) []*flightgraph.Flight {
	if p.Offset >= len(all) {
		return nil
	}
	all = all[p.Offset:]
	if p.Limit > 0 && len(all) > p.Limit {
		all = all[:p.Limit]
	}
	return all
}

func counted(n int, p flightgraph.Page) int {
	if p.Uncounted {
		return 0
	}
	return n
}

// FindLegs implements flightgraph.FlightStore.
func (h *Horizon) FindLegs(ctx context.Context, f flightgraph.FlightFilter) ([]*flightgraph.FlightLeg, error) {
	p, err := h.current(ctx)
	if err != nil {
		return nil, err
	}
	inStore, inPlan := p.split(f)
	var out []*flightgraph.FlightLeg
	if inStore {
		if out, err = h.Operational.FindLegs(ctx, f); err != nil {
			return nil, err
		}
	}
	if inPlan {
		_, legs := p.find(f)
		for _, ls := range legs {
			out = append(out, ls...)
		}
		slices.SortStableFunc(out, func(a, b *flightgraph.FlightLeg) int {
			return cmp.Or(strings.Compare(a.FlightID, b.FlightID), a.Sequence-b.Sequence)
		})
	}
	return out, nil
}

// byID is the planned flight of an id beyond the window, with its legs; nil for none.
func (p *plan) byID(id string) (*flightgraph.Flight, []*flightgraph.FlightLeg) {
	fid, err := flightgraph.ParseFlightID("id", id)
	if err != nil || !p.planned(fid.Date) {
		return nil, nil
	}
	day, _ := time.Parse(flightgraph.DateLayout, fid.Date)
	for _, i := range p.byNumber[numberKey(fid.Carrier, fid.Number)] {
		if f, legs := p.m.instance(p.m.flights[i], fid.Date, day, false); f != nil && f.ID == id {
			return f, legs
		}
	}
	return nil, nil
}

// operational are the ids that the store holds (in the window), in their order, and whether any.
func (p *plan) operational(ids []string) []string {
	stored := func(id string) bool {
		fid, err := flightgraph.ParseFlightID("id", id)
		return err != nil || !p.planned(fid.Date)
	}
	for i, id := range ids {
		if !stored(id) {
			out := slices.Clone(ids[:i])
			for _, id := range ids[i+1:] {
				if stored(id) {
					out = append(out, id)
				}
			}
			return out
		}
	}
	return ids // all of them, as a flight by id's one usually is
}

// spread places got, read for stored (the ids the store holds, in their order), at the places of
// ids: the zero value where an id is not among them.
func spread[T any](ids, stored []string, got []T) []T {
	if len(stored) == len(ids) {
		// stored is ids, in their order: every id is stored. got is the store's answer, a
		// slice of its own for each read (FlightStore's stores all make one), which the
		// callers then fill where it is nil.
		return got
	}
	at := make(map[string]T, len(stored))
	for i, id := range stored {
		at[id] = got[i]
	}
	out := make([]T, len(ids))
	for i, id := range ids {
		out[i] = at[id]
	}
	return out
}

// FlightsByIDs implements flightgraph.FlightStore.
func (h *Horizon) FlightsByIDs(ctx context.Context, ids []string) ([]*flightgraph.Flight, error) {
	p, err := h.current(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*flightgraph.Flight, len(ids))
	if stored := p.operational(ids); len(stored) > 0 {
		got, err := h.Operational.FlightsByIDs(ctx, stored)
		if err != nil {
			return nil, err
		}
		out = spread(ids, stored, got)
	}
	for i, id := range ids {
		if out[i] == nil {
			out[i], _ = p.byID(id)
		}
	}
	return out, nil
}

// FlightsWithLegs implements flightgraph.FlightStore: the stored flights in one read of the
// store, the planned ones from the plan.
func (h *Horizon) FlightsWithLegs(ctx context.Context, ids []string) ([]*flightgraph.Flight, [][]*flightgraph.FlightLeg, error) {
	p, err := h.current(ctx)
	if err != nil {
		return nil, nil, err
	}
	flights, legs := make([]*flightgraph.Flight, len(ids)), make([][]*flightgraph.FlightLeg, len(ids))
	if stored := p.operational(ids); len(stored) > 0 {
		gotF, gotL, err := h.Operational.FlightsWithLegs(ctx, stored)
		if err != nil {
			return nil, nil, err
		}
		flights, legs = spread(ids, stored, gotF), spread(ids, stored, gotL)
	}
	for i, id := range ids {
		if flights[i] == nil {
			flights[i], legs[i] = p.byID(id)
		}
	}
	return flights, legs, nil
}

// LegsByFlightIDs implements flightgraph.FlightStore.
func (h *Horizon) LegsByFlightIDs(ctx context.Context, ids []string) ([][]*flightgraph.FlightLeg, error) {
	p, err := h.current(ctx)
	if err != nil {
		return nil, err
	}
	out := make([][]*flightgraph.FlightLeg, len(ids))
	if stored := p.operational(ids); len(stored) > 0 {
		got, err := h.Operational.LegsByFlightIDs(ctx, stored)
		if err != nil {
			return nil, err
		}
		out = spread(ids, stored, got)
	}
	for i, id := range ids {
		if out[i] == nil {
			_, out[i] = p.byID(id)
		}
	}
	return out, nil
}
