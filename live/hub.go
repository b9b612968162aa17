// Package live is the status feed's room: it fans the flight status events out to the
// subscribers of this replica (GraphQL subscriptions and the REST stream), runs the status clock
// that records the transitions time brings, and sweeps the events past their retention.
//
// Every replica follows the one table of events by position: the store tells the hub when events
// commit (in this process at once, other processes over PostgreSQL LISTEN/NOTIFY, EventFeed), and
// the hub also reads after its position every PollEvery, so that a lost notification delays an
// event by at most that. A subscriber resumes from a position: what it missed is replayed from
// the store in order, then the live stream follows with nothing lost and nothing twice.
package live

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Defaults of a Hub.
const (
	DefaultBuffer    = 256
	DefaultPollEvery = time.Second
	readPage         = 500
)

// Hub fans the events out to this replica's subscribers. A slow subscriber never slows it: each
// has a buffer of its own, and one whose buffer is full is ended with ECodeResume.
type Hub struct {
	Events flightgraph.FlightEventStore
	Log    *slog.Logger
	// Buffer is each subscription's buffer of events (DefaultBuffer when 0).
	Buffer int
	// PollEvery is how often the hub reads new events without being told (DefaultPollEvery).
	PollEvery time.Duration

	wake chan struct{}
	once sync.Once

	// told is the latest position the hub was told of (Notify, and catchUp for the events it
	// finds by reading before their notification); settled the latest position whose events
	// every watcher has been given (Settled). Both only grow.
	told, settled atomic.Int64
	watchers      []func(evs []*flightgraph.FlightEvent)

	mu      sync.Mutex
	cursor  int64 // the latest position fanned out
	started bool
	subs    map[*Sub]struct{}
	index   *index        // the subs by what their filters select
	ready   chan struct{} // closed once the cursor is read
}

// NewHub returns a hub over events.
func NewHub(events flightgraph.FlightEventStore, log *slog.Logger) *Hub {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Hub{Events: events, Log: log, wake: make(chan struct{}, 1), subs: map[*Sub]struct{}{}, index: newIndex(), ready: make(chan struct{})}
}

// Notify tells the hub events were recorded up to position; it never blocks.
func (h *Hub) Notify(position int64) {
	h.tell(position)
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// tell records that events were recorded up to position: until the watchers have been given
// them, the hub is not Settled.
func (h *Hub) tell(position int64) {
	for {
		told := h.told.Load()
		if position <= told || h.told.CompareAndSwap(told, position) {
			return
		}
	}
}

// Watch has f called with every event the hub reads, in order, before the hub's position moves
// past them (so before Settled can report them): the response cache (Cache) evicts what they
// change this way. f runs on the hub's goroutine and must not block. Watchers are added before
// the hub runs.
func (h *Hub) Watch(f func(evs []*flightgraph.FlightEvent)) {
	h.mu.Lock()
	h.watchers = append(h.watchers, f)
	h.mu.Unlock()
}

// Settled reports whether the hub runs and every event this replica was told of (Notify: its
// own at once as they commit, other replicas' over the event feed) has been given to the
// watchers. While it is not, an answer kept before may show a flight as it was: the response
// cache serves nothing from memory then.
func (h *Hub) Settled() bool {
	return h.settled.Load() > 0 && h.told.Load() <= h.settled.Load()-1
}

// settle records that the watchers have been given every event up to cursor.
func (h *Hub) settle(cursor int64) {
	h.settled.Store(cursor + 1) // + 1: 0 is "not running yet"
}

// Open is the number of subscriptions open on this replica.
func (h *Hub) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Start runs the hub (Run) in a goroutine of its own until ctx is done, unless it runs already:
// the server starts it with its background work, a subscription on a server that did not (a
// test's handler) with a context that never ends.
func (h *Hub) Start(ctx context.Context) {
	h.once.Do(func() { go h.run(ctx) })
}

// run follows the events until ctx is done.
func (h *Hub) run(ctx context.Context) {
	every := cmp.Or(h.PollEvery, DefaultPollEvery)
	for {
		_, latest, err := h.Events.Positions(ctx)
		if err == nil {
			h.mu.Lock()
			h.cursor, h.started = latest, true
			h.mu.Unlock()
			h.settle(latest)
			close(h.ready)
			break
		}
		h.Log.Warn("live: cannot read the latest event position; will retry", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			h.endAll(nil)
			return
		case <-h.wake:
		case <-t.C:
		}
		h.catchUp(ctx)
	}
}

// catchUp reads the events after the cursor and fans them out.
func (h *Hub) catchUp(ctx context.Context) {
	for {
		h.mu.Lock()
		after := h.cursor
		h.mu.Unlock()
		evs, err := h.Events.EventsAfter(ctx, after, readPage)
		if err != nil {
			if ctx.Err() == nil {
				h.Log.Warn("live: cannot read the events", "after", after, "err", err)
			}
			return
		}
		if len(evs) == 0 {
			h.settle(after) // everything committed up to the read is given
			return
		}
		// Events found by reading (another replica's, before its notification) are told
		// first: while the watchers apply them, in turn, none serves what one of them is about
		// to evict (the flight cache and the response cache, Cache.Get), and what is begun
		// meanwhile is not kept (Cache.Begin).
		h.tell(evs[len(evs)-1].Position)
		h.mu.Lock()
		for _, f := range h.watchers {
			f(evs)
		}
		var behind []*Sub
		for _, e := range evs {
			h.index.each(e, func(s *Sub) {
				select {
				case s.live <- e:
				default:
					behind = append(behind, s)
				}
			})
			// Ended after the event's fan-out, not during it: the index is not changed while
			// it is walked.
			for _, s := range behind {
				h.endLocked(s, flightgraph.Errorf(flightgraph.ECodeResume,
					"the subscription fell %d events behind; subscribe again after position %d, the last one received", cap(s.live), s.lastSent()))
			}
			behind = behind[:0]
		}
		h.cursor = evs[len(evs)-1].Position
		h.mu.Unlock()
		h.settle(evs[len(evs)-1].Position)
		if len(evs) < readPage {
			return
		}
	}
}

func (h *Hub) endAll(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		h.endLocked(s, err)
	}
}

func (h *Hub) endLocked(s *Sub, err error) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	h.index.remove(s)
	s.err = err
	close(s.ended)
}

// Filter selects the events of a subscription.
type Filter struct {
	FlightIDs []string
	Departing string // an airport whose departures the board shows
	Arriving  string
}

func (f Filter) match(e *flightgraph.FlightEvent) bool {
	switch {
	case len(f.FlightIDs) > 0:
		for _, id := range f.FlightIDs {
			if id == e.FlightID {
				return true
			}
		}
		return false
	case f.Departing != "":
		return e.Departs(f.Departing)
	case f.Arriving != "":
		return e.Arrives(f.Arriving)
	}
	return true
}

// Sub is one subscription: the events of its filter after its position, in order.
type Sub struct {
	filter Filter
	live   chan *flightgraph.FlightEvent
	ended  chan struct{}
	err    error // why it ended, set before ended is closed
	mu     sync.Mutex
	last   int64
}

func (s *Sub) lastSent() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Subscribe opens a subscription of the events that f selects after position after (0: from now
// on) and returns its channel: the missed events from the store in order, then the live ones. The
// channel is closed when ctx is done or the subscription ends; the last value sent before, if
// any, is an event with only End set, saying why (ECodeResume, ECodePositionExpired,
// ECodeSubscriptionRevoked via cut). cut ends the subscription with its error.
func (h *Hub) Subscribe(ctx context.Context, f Filter, after int64) (<-chan *flightgraph.FlightEvent, func(error), error) {
	return h.subscribe(ctx, f, after, nil, nil)
}

// subscribe is Subscribe; stopped, when set, is called once the subscription sends no more
// events (it was cut, or ctx is done), before its reason waits for the reader; ended, after it,
// once the stream is over and the channel closed (neither when it fails to open).
func (h *Hub) subscribe(ctx context.Context, f Filter, after int64, stopped, ended func()) (<-chan *flightgraph.FlightEvent, func(error), error) {
	h.Start(context.Background())
	select {
	case <-h.ready:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if after > 0 {
		oldest, _, err := h.Events.Positions(ctx)
		if err != nil {
			return nil, nil, err
		}
		if oldest > 0 && after < oldest-1 {
			return nil, nil, flightgraph.ParamErrorf(flightgraph.ECodePositionExpired, "after",
				"position %d is older than the events kept (the oldest is %d): subscribe again without a position", after, oldest)
		}
	}
	s := &Sub{filter: f, live: make(chan *flightgraph.FlightEvent, cmp.Or(h.Buffer, DefaultBuffer)), ended: make(chan struct{})}
	h.mu.Lock()
	liveFrom := h.cursor
	h.subs[s] = struct{}{}
	h.index.add(s)
	h.mu.Unlock()
	if after == 0 || after > liveFrom {
		after = max(after, liveFrom)
	}
	s.last = after
	out := make(chan *flightgraph.FlightEvent)
	cut := func(err error) {
		h.mu.Lock()
		h.endLocked(s, err)
		h.mu.Unlock()
	}
	go func() {
		if ended != nil {
			defer ended()
		}
		defer close(out)
		defer cut(nil)
		send := func(e *flightgraph.FlightEvent) bool {
			if e.Position <= s.lastSent() {
				return true // replayed already
			}
			select {
			case out <- e:
				s.mu.Lock()
				s.last = e.Position
				s.mu.Unlock()
				return true
			case <-ctx.Done():
				return false
			case <-s.ended:
				return false
			}
		}
		// The replay: what was recorded after the position up to where the live stream starts.
	replay:
		for next := after; next < liveFrom; {
			evs, err := h.Events.EventsAfter(ctx, next, readPage)
			if err != nil {
				h.Log.Warn("live: cannot replay the events", "after", next, "err", err)
				cut(flightgraph.Errorf(flightgraph.ECodeDatabase, "the events could not be read; subscribe again after position %d", s.lastSent()))
				break
			}
			if len(evs) == 0 {
				break
			}
			for _, e := range evs {
				if e.Position > liveFrom {
					break replay
				}
				if f.match(e) && !send(e) {
					goto end
				}
				next = e.Position
			}
			if len(evs) < readPage {
				break
			}
		}
		for {
			select {
			case e := <-s.live:
				if !send(e) {
					goto end
				}
			case <-s.ended:
				goto end
			case <-ctx.Done():
				goto end
			}
		}
	end:
		if stopped != nil {
			stopped()
		}
		// The reason is kept for the reader however slow it is (a slow reader is why most
		// subscriptions end): ctx, the request's or the socket's, bounds the wait, as it bounds
		// every send before.
		select {
		case <-s.ended:
			if s.err != nil {
				select {
				case out <- &flightgraph.FlightEvent{Position: s.lastSent(), End: s.err}:
				case <-ctx.Done():
				}
			}
		default:
		}
	}()
	return out, cut, nil
}
