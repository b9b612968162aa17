package travel

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flightgraph/flightgraph"
)

// FareIndex keeps what inspirations and deals price ahead of the calls that ask for it, so that
// they answer in milliseconds rather than seconds. An entry is one read of tripsOf (an origin, a
// destination or anywhere, an interval of days): the candidate flights, their legs and their
// reference data, read once. Over it, lazily and kept: each destination's plan (the trips a
// search to it alone keeps, day by day), and each day's cheapest trip for a pricing (cabins,
// passengers, currency) with the interval of instants it holds for.
//
// A price follows from the instant it is quoted at only through whole days before departure
// (booking lead, cabin load) and the booking lead's two hours (MinBookingLead): a trip's price is
// constant between instants one can name ahead (nextChange). A day's cheapest is therefore kept
// with the first such instant of any of its trips (cell.until) and priced again only after it:
// at every instant, the answer is the one the offers search of that instant gives
// (TestIndexIsTheSearchAtEveryInstant). A day whose kept trips start losing their first flights
// to the booking lead is planned again at that instant, as a read then would plan it.
//
// An entry holds until the flights change: when the shopping store's window rolls (its Edge, a
// day at a time), or after TTL when the store has no edge. The background refresh (Run) reads
// the entries used in the last RefreshIdle again when their edge moves, and prices their stale
// days ahead, so that the calls find them ready; an entry nobody asked for in that time is left
// to be evicted. Entries are bounded by MaxFlights, the flights they hold together (least
// recently used out first).
type FareIndex struct {
	// MaxFlights bounds the candidate flights all entries hold together; 0 means
	// DefaultIndexFlights.
	MaxFlights int
	// TTL is how long an entry holds when the shopping store tells no window edge; 0 means a
	// minute.
	TTL time.Duration
	// Refresh is the background refresh's period; 0 means a minute. RefreshIdle is how long an
	// entry nobody asks for is still refreshed; 0 means ten minutes.
	Refresh, RefreshIdle time.Duration
	// WarmHubs has Run compute the inspirations of the network's hubs this month and the next
	// (Economy, one adult, in PricingCurrency) WarmDelay after it starts, and refresh them as if
	// asked for; without it, Run only refreshes what calls asked for. The delay lets a replica's
	// start-up and its first calls go first: a call before the index is warm reads and prices
	// its origin's month itself (as without an index), and leaves it in the index.
	WarmHubs  bool
	WarmDelay time.Duration
	// Log reports failed background work; nil discards it.
	Log *slog.Logger

	mu      sync.Mutex
	entries map[indexKey]*indexEntry
	tick    atomic.Int64
}

// DefaultIndexFlights bounds a FareIndex: about 860 bytes a flight with its legs, plans and one
// pricing's cells (BenchmarkFareIndexMemory), so some 250 MiB at most; an inspiration from a spoke
// of the demo network over a month holds about 48,000 flights (40 MiB).
const DefaultIndexFlights = 300_000

// Edged is a flight store that tells the edge of its stored window (dataset.Horizon): its
// flights change when the edge moves, and only then.
type Edged interface {
	Edge(ctx context.Context) (string, error)
}

// indexKey is what an entry's read depends on.
type indexKey struct {
	origin, dest string // placeKey; dest "" for anywhere
	first, last  string
	days, limit  int
}

// placeKey names a place with its airports: a city and an airport may share a code.
func placeKey(p *flightgraph.Place) string {
	if p == nil {
		return ""
	}
	return p.Code + ":" + strings.Join(p.AirportCodes(), ",")
}

// indexEntry is one read and what was priced over it.
type indexEntry struct {
	done  chan struct{}
	err   error
	t     *trips
	edge  string
	built time.Time // the instant of the read
	// used orders the entries by last use (a tick of the index), usedAt is its instant.
	used, usedAt atomic.Int64
	// origin, dest, days and limit are what the read was for (Run reads them again).
	origin, dest *flightgraph.Place
	days         []string
	limit        int

	mu      sync.Mutex
	reached []*flightgraph.Place // nil until asked
	plans   map[string]*destPlan // by placeKey
	refs    map[string]*refs     // by currency
}

// destPlan is one destination's trips over an entry's days and their cheapest, per pricing.
type destPlan struct {
	place *flightgraph.Place
	trips map[string][][]*flightgraph.Flight
	cells map[string]map[string]*cell // pricingKey, day
	best  map[string]keptBest         // pricingKey and days: what best found
}

// keptBest is the first cheapest cell over a run of days, which holds while every cell of the run
// holds: from the latest of their at to the earliest of their until (inclusive).
type keptBest struct {
	c         *cell
	at, until time.Time
}

// cell is a day's cheapest trip for one pricing, as priced at instant at, which holds for every
// instant up to until (inclusive); trip nil when no trip has an offer.
type cell struct {
	at, until time.Time
	trip      []*flightgraph.Flight
	total     int64
	departure time.Time
	segments  int
	// offer is the trip's cheapest offer as first built for an answer (offer), its ID unset:
	// the same for every call from at to until but for when it was quoted.
	offer atomic.Pointer[flightgraph.Offer]
}

// before is before() on cells: cheaper, else leaving first, else fewer segments.
func (c *cell) before(o *cell) bool {
	if c.total != o.total {
		return c.total < o.total
	}
	if k := c.departure.Compare(o.departure); k != 0 {
		return k < 0
	}
	return c.segments < o.segments
}

// pricing is what a day's cheapest depends on besides the instant.
type pricing struct {
	cabins []flightgraph.CabinClass // from Economy up
	counts flightgraph.PassengerCounts
	cur    flightgraph.Currency
}

func (p pricing) key() string {
	var b strings.Builder
	for _, c := range p.cabins {
		b.WriteString(string(c))
		b.WriteByte(',')
	}
	for _, t := range flightgraph.PassengerTypes {
		if n := p.counts[t.Code]; n > 0 {
			b.WriteString(t.Code + strconv.Itoa(n))
		}
	}
	return b.String() + "|" + p.cur.Code
}

// over is what best looks for over days at pricing p, with its key worked out once: a call over
// many destinations asks the same of each.
func (p pricing) over(days []string) span {
	return span{pr: p, days: days, key: p.key() + "|" + strings.Join(days, ",")}
}

// span is a pricing over a run of days, keyed (pricing.over).
type span struct {
	pr   pricing
	days []string
	key  string
}

// shopping returns the entry of a read (tripsOf's arguments): from the index when the service has
// one, else read for this call alone. An entry the index lacks is read in the call that first
// asks for it (the others asking wait for it), within the call's heavy slot: the first call from
// an origin over an interval costs what it did before the index, the next ones milliseconds.
func (s *Service) shopping(ctx context.Context, origin, dest *flightgraph.Place, days []string, now time.Time, limit int) (*indexEntry, error) {
	build := func(ctx context.Context, e *indexEntry) error {
		eur, err := flightgraph.CurrencyOf("currency", flightgraph.PricingCurrency)
		if err != nil {
			return err
		}
		t, err := s.tripsOf(ctx, origin, dest, days, now, limit, eur)
		if err != nil {
			return err
		}
		e.t, e.built, e.origin, e.dest, e.days, e.limit = t, now, origin, dest, days, limit
		e.plans, e.refs = map[string]*destPlan{}, map[string]*refs{}
		return nil
	}
	x := s.Index
	if x == nil {
		e := &indexEntry{}
		return e, build(ctx, e)
	}
	edge, err := s.edge(ctx)
	if err != nil {
		return nil, err
	}
	key := indexKey{origin: placeKey(origin), dest: placeKey(dest), first: days[0], last: days[len(days)-1], days: len(days), limit: limit}
	for {
		x.mu.Lock()
		if x.entries == nil {
			x.entries = map[indexKey]*indexEntry{}
		}
		e := x.entries[key]
		if e != nil && e.ready() && (e.edge != edge || now.Before(e.built) || edge == "" && now.Sub(e.built) >= cmp.Or(x.TTL, time.Minute)) {
			delete(x.entries, key)
			e = nil
		}
		if e == nil {
			e = &indexEntry{done: make(chan struct{}), edge: edge}
			x.entries[key] = e
			x.mu.Unlock()
			err := build(ctx, e)
			x.fill(key, e, err, now)
			if err != nil {
				return nil, err
			}
			return e, nil
		}
		x.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err == nil {
			e.use(x, now)
			return e, nil
		}
		// Another call's read failed: its own time ran out, or the store failed it; this call
		// reads again, in its own time.
	}
}

// use marks an entry used at now: last for eviction, and still refreshed.
func (e *indexEntry) use(x *FareIndex, now time.Time) {
	e.used.Store(x.tick.Add(1))
	e.usedAt.Store(now.UnixNano())
}

// fill completes an entry read (or failed) and evicts what the index holds past its bound. A
// failed entry leaves the index; the waiting calls read again.
func (x *FareIndex) fill(key indexKey, e *indexEntry, err error, now time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e.err = err
	if err != nil {
		if x.entries[key] == e {
			delete(x.entries, key)
		}
		close(e.done)
		return
	}
	e.use(x, now)
	close(e.done)
	x.evict()
}

// evict drops the least recently used ready entries while they hold more than MaxFlights.
func (x *FareIndex) evict() {
	held := 0
	var ready []indexKey
	for k, e := range x.entries {
		if e.ready() {
			held += e.flights()
			ready = append(ready, k)
		}
	}
	slices.SortFunc(ready, func(a, b indexKey) int { return cmp.Compare(x.entries[a].used.Load(), x.entries[b].used.Load()) })
	for _, k := range ready {
		if held <= cmp.Or(x.MaxFlights, DefaultIndexFlights) {
			break
		}
		held -= x.entries[k].flights()
		delete(x.entries, k)
	}
}

// Held reports the entries the index holds and their candidate flights.
func (x *FareIndex) Held() (entries, flights int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, e := range x.entries {
		if e.ready() {
			entries++
			flights += e.flights()
		}
	}
	return entries, flights
}

func (e *indexEntry) ready() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

func (e *indexEntry) flights() int {
	if e.t == nil || e.t.c == nil {
		return 0
	}
	return len(e.t.c.firsts) + len(e.t.c.seconds)
}

// edge is the shopping store's window edge; "" when it has none.
func (s *Service) edge(ctx context.Context) (string, error) {
	if ed, ok := s.shop().(Edged); ok {
		return ed.Edge(ctx)
	}
	return "", nil
}

// places are the places the entry's flights reach, as reached finds them, once.
func (e *indexEntry) places(ctx context.Context, s *Service, origin *flightgraph.Place) ([]*flightgraph.Place, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.reached == nil {
		ps, err := s.reached(ctx, origin, e.t.c)
		if err != nil {
			return nil, err
		}
		e.reached = append([]*flightgraph.Place{}, ps...)
	}
	return e.reached, nil
}

// refsIn are the entry's reference data with charges in cur, shared by its cells (under e.mu).
func (e *indexEntry) refsIn(cur flightgraph.Currency) *refs {
	r := e.refs[cur.Code]
	if r == nil {
		b := e.t.refs
		r = &refs{airports: b.airports, countries: b.countries, cabins: b.cabins, cur: cur, lines: map[chargeKey][]*flightgraph.PriceLine{}}
		e.refs[cur.Code] = r
	}
	return r
}

// cheapest is, of each of days, the cheapest trip to p for pr at now (cells whose trip is nil
// have none): a day's kept cell when now is within its instants, else priced again.
func (e *indexEntry) cheapest(ctx context.Context, s *Service, p *flightgraph.Place, days []string, pr pricing, now time.Time) (map[string]*cell, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := placeKey(p)
	dp := e.plans[k]
	if dp == nil {
		trips, err := e.t.c.plan(ctx, p, e.built, nil)
		if err != nil {
			return nil, err
		}
		dp = &destPlan{place: p, trips: trips, cells: map[string]map[string]*cell{}}
		e.plans[k] = dp
	}
	pk := pr.key()
	cells := dp.cells[pk]
	if cells == nil {
		cells = map[string]*cell{}
		dp.cells[pk] = cells
	}
	out := make(map[string]*cell, len(days))
	for _, d := range days {
		c := cells[d]
		if c == nil || now.Before(c.at) || now.After(c.until) {
			var err error
			if c, err = e.price(ctx, s, dp, d, pr, now); err != nil {
				return nil, err
			}
			cells[d] = c
		}
		out[d] = c
	}
	return out, nil
}

// best is bestOver(cheapest(…), days): the first cheapest cell over days, kept per pricing and
// days until a cell of them changes, so that a warm inspiration or deals call visits a cell per
// destination rather than one per destination and day (5,700 for a month to 190 destinations).
// The days are the entry's (an entry is one run of days, indexKey) or, for deals of a type
// (weekends, last minute), some of them: a few keys an entry, beside cheapest's one per day.
func (e *indexEntry) best(ctx context.Context, s *Service, p *flightgraph.Place, sp span, now time.Time) (*cell, error) {
	days, key := sp.days, sp.key
	pk := placeKey(p)
	e.mu.Lock()
	if dp := e.plans[pk]; dp != nil {
		if b, ok := dp.best[key]; ok && !now.Before(b.at) && !now.After(b.until) {
			e.mu.Unlock()
			return b.c, nil
		}
	}
	e.mu.Unlock()
	cells, err := e.cheapest(ctx, s, p, days, sp.pr, now)
	if err != nil {
		return nil, err
	}
	kept := keptBest{c: bestOver(cells, days), at: now, until: now.Add(day)}
	for _, c := range cells {
		if c.at.After(kept.at) {
			kept.at = c.at
		}
		if c.until.Before(kept.until) {
			kept.until = c.until
		}
	}
	e.mu.Lock()
	if dp := e.plans[pk]; dp != nil {
		if dp.best == nil {
			dp.best = map[string]keptBest{}
		}
		dp.best[key] = kept
	}
	e.mu.Unlock()
	return kept.c, nil
}

// price works out a day's cell at now: each trip's cheapest offer (cheapestOf, as the calendar
// finds it), the first cheapest in the search's order (before), and until when the prices hold.
// When a kept trip's first flight has left the booking lead, the day is planned again at now.
func (e *indexEntry) price(ctx context.Context, s *Service, dp *destPlan, day string, pr pricing, now time.Time) (*cell, error) {
	trips := dp.trips[day]
	for _, trip := range trips {
		if trip[0].DepartureUTC.Before(now.Add(MinBookingLead)) {
			replanned, err := e.t.c.plan(ctx, dp.place, now, []string{day})
			if err != nil {
				return nil, err
			}
			trips = replanned[day]
			dp.trips[day] = trips
			break
		}
	}
	r := e.refsIn(pr.cur)
	c := &cell{at: now, until: now.Add(24 * time.Hour)}
	var best *flightgraph.Offer
	for _, trip := range trips {
		it := itineraryOf(trip, e.t.legs)
		if o := s.cheapestOf(r, it, pr.cabins, pr.counts, now, flightgraph.Outbound); o != nil && (best == nil || before(o, best)) {
			best, c.trip = o, trip
		}
		for i, f := range trip {
			c.until = earliest(c.until, now, f.DepartureUTC.Add(-MinBookingLead))
			c.until = earliest(c.until, now, nextChange(now, f.DepartureUTC))
			for _, l := range it.legs[i] {
				c.until = earliest(c.until, now, nextChange(now, l.ScheduledDep))
			}
		}
	}
	if best != nil {
		c.total, c.departure, c.segments = best.Price.Total.Minor, best.Departure(), len(best.Segments)
	}
	return c, nil
}

// earliest is the earlier of until and t, when t is not before now.
func earliest(until, now, t time.Time) time.Time {
	if t.Before(now) || !t.Before(until) {
		return until
	}
	return t
}

const day = 24 * time.Hour

// nextChange is the last instant from now on at which what an instant x ahead prices (whole days
// to x: the booking lead, leadPerMille, and the cabin load, cabinLoad, counted to 150 days)
// is still what it is at now; zero (before now) once x is past. From 150 days out nothing
// changes until x is 150 days away.
func nextChange(now, x time.Time) time.Time {
	d := x.Sub(now)
	switch {
	case d < 0:
		return time.Time{}
	case d > 150*day:
		return x.Add(-150 * day)
	}
	return now.Add(d % day)
}

// offer prices a cell's trip at now into the offer a search shows (cheapestOf, as the cell
// found it); nil for none. It reads the entry's reference data with charges of its own, so that
// no two calls share an offer's lines.
func (e *indexEntry) offer(s *Service, c *cell, pr pricing, now time.Time) *flightgraph.Offer {
	if c == nil || c.trip == nil {
		return nil
	}
	o := c.offer.Load()
	if o == nil || now.Before(c.at) || now.After(c.until) {
		b := e.t.refs
		r := &refs{airports: b.airports, countries: b.countries, cabins: b.cabins, cur: pr.cur, lines: map[chargeKey][]*flightgraph.PriceLine{}}
		if o = s.cheapestOf(r, itineraryOf(c.trip, e.t.legs), pr.cabins, pr.counts, now, flightgraph.Outbound); o == nil {
			return nil
		}
		c.offer.Store(o)
	}
	// Within the cell's life its price and seats hold (price marks until where either moves):
	// the offer built once is the one of now, quoted now. Callers sign and label their copy; the
	// segments and price they share are read only.
	quoted := *o
	quoted.QuotedAt, quoted.ExpiresAt = now, now.Add(flightgraph.OfferValidity)
	return &quoted
}

// bestOver is the first cheapest of cells over days, in their order; nil when none.
func bestOver(cells map[string]*cell, days []string) *cell {
	var best *cell
	for _, d := range days {
		if c := cells[d]; c != nil && c.trip != nil && (best == nil || c.before(best)) {
			best = c
		}
	}
	return best
}

// RunIndex keeps the index warm until ctx ends: first it computes the hubs' inspirations
// (WarmHubs), then every Refresh it reads again the entries used in the last RefreshIdle whose window edge
// moved, and prices their days that went stale, so that calls rarely do either. It runs one
// entry at a time: the background work of one replica is one core at most.
func (s *Service) RunIndex(ctx context.Context) {
	x := s.Index
	if x == nil {
		return
	}
	if x.WarmHubs {
		select {
		case <-ctx.Done():
			return
		case <-time.After(cmp.Or(x.WarmDelay, 10*time.Second)):
		}
		s.warm(ctx)
	}
	t := time.NewTicker(cmp.Or(x.Refresh, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.refresh(ctx)
	}
}

// warm computes the Warm origins' inspirations of this month and the next.
func (s *Service) warm(ctx context.Context) {
	now := s.Now().UTC().Truncate(time.Second)
	eur, err := flightgraph.CurrencyOf("currency", flightgraph.PricingCurrency)
	if err != nil {
		return
	}
	pr := pricing{cabins: []flightgraph.CabinClass{flightgraph.CabinEconomy}, counts: flightgraph.PassengerCounts{"ADT": 1}, cur: eur}
	carriers, err := s.Network.Carriers(ctx)
	if err != nil {
		return
	}
	var hubs []string
	for _, c := range carriers {
		if !slices.Contains(hubs, c.HubCode) {
			hubs = append(hubs, c.HubCode)
		}
	}
	for _, code := range hubs {
		for _, month := range []time.Time{now, now.AddDate(0, 1, 0)} {
			if ctx.Err() != nil {
				return
			}
			if err := s.warmOne(ctx, code, flightgraph.MonthDays(month.Format(flightgraph.MonthLayout)), pr, now); err != nil && s.Index.Log != nil {
				s.Index.Log.Warn("warming the fare index failed", "origin", code, "month", month.Format(flightgraph.MonthLayout), "err", err)
			}
		}
	}
}

// warmOne computes an inspiration's entry and its cells, as Inspiration would.
func (s *Service) warmOne(ctx context.Context, code string, days []string, pr pricing, now time.Time) error {
	origin, err := s.Place(ctx, "origin", code)
	if err != nil {
		return err
	}
	e, err := s.shopping(ctx, origin, nil, days, now, maxInspirationFlights)
	if err != nil || e.t.c.full {
		return err
	}
	places, err := e.places(ctx, s, origin)
	if err != nil {
		return err
	}
	for _, p := range places {
		if _, err := e.cheapest(ctx, s, p, days, pr, now); err != nil {
			return err
		}
	}
	return nil
}

// refresh reads again the recently used entries whose edge moved, and prices their stale cells.
func (s *Service) refresh(ctx context.Context) {
	x := s.Index
	edge, err := s.edge(ctx)
	if err != nil {
		return
	}
	now := s.Now().UTC().Truncate(time.Second)
	since := now.Add(-cmp.Or(x.RefreshIdle, 10*time.Minute)).UnixNano()
	x.mu.Lock()
	var hot []*indexEntry
	for _, e := range x.entries {
		if e.ready() && e.err == nil && e.usedAt.Load() >= since {
			hot = append(hot, e)
		}
	}
	x.mu.Unlock()
	for _, e := range hot {
		if ctx.Err() != nil {
			return
		}
		if e.edge != edge {
			// Read again as a call would.
			if _, err := s.shopping(ctx, e.origin, e.dest, e.days, now, e.limit); err != nil && x.Log != nil && !isParamError(err) {
				x.Log.Warn("refreshing the fare index failed", "origin", e.origin.Code, "err", err)
			}
			continue
		}
		e.mu.Lock()
		for _, dp := range e.plans {
			for pk, cells := range dp.cells {
				pr, ok := pricingOf(pk)
				if !ok {
					continue
				}
				for d, c := range cells {
					if now.After(c.until) {
						if c, err := e.price(ctx, s, dp, d, pr, now); err == nil {
							cells[d] = c
						}
					}
				}
			}
		}
		e.mu.Unlock()
	}
}

// pricingOf reads a pricing back from its key.
func pricingOf(key string) (pricing, bool) {
	head, code, ok := strings.Cut(key, "|")
	if !ok {
		return pricing{}, false
	}
	cur, err := flightgraph.CurrencyOf("currency", code)
	if err != nil {
		return pricing{}, false
	}
	pr := pricing{cur: cur, counts: flightgraph.PassengerCounts{}}
	parts := strings.Split(head, ",")
	for _, c := range parts[:len(parts)-1] {
		pr.cabins = append(pr.cabins, flightgraph.CabinClass(c))
	}
	pax := parts[len(parts)-1]
	for len(pax) >= 4 {
		i := 3
		for i < len(pax) && pax[i] >= '0' && pax[i] <= '9' {
			i++
		}
		n, err := strconv.Atoi(pax[3:i])
		if err != nil {
			return pricing{}, false
		}
		pr.counts[pax[:3]] = n
		pax = pax[i:]
	}
	return pr, true
}

// isParamError reports a refusal of the query (a domain error), not a failure.
func isParamError(err error) bool {
	var e *flightgraph.Error
	return errors.As(err, &e)
}
