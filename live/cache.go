package live

import (
	"context"
	"crypto/sha256"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/flightgraph/flightgraph"
)

// Cache is the response cache: the answers that many callers read (a departures board, a
// flight's status, the airports), kept in memory up to the max-age of their cache policy and
// dropped the moment the status feed says that something they show changed. Both edges keep their
// answers here (graph.Answers for GraphQL queries, rest's routes for REST), each under a key that
// names everything the answer depends on: the caller's audience, the point of sale, the
// normalised request. It keeps public policies up to their max-age; a private answer (the caller's
// own data) is the caller's alone, and keeping it per caller would hold memory for answers that
// are seldom asked twice. The one exception is a quote that is the same for every caller of the
// key within the second it was made in (a heavy search's prices, rest's answered): kept with
// Until, for that second only.
//
// It lives with the hub because the hub is what makes it correct: every event the hub reads, on
// this replica or another (PostgreSQL LISTEN/NOTIFY, or the hub's poll within PollEvery), evicts
// the answers tagged with the flight, its airports' boards, or all flights (flightgraph.EventTags)
// before the hub's position moves past it; and while the hub has not given the watchers every
// event this replica was told of (Hub.Settled: a change just written here, before the hub has
// read it), the cache serves nothing, so the next read after a write is never stale. An answer
// computed while an event it shows was being applied is not kept (Begin, Put).
//
// Memory is bounded: at most MaxBytes of kept answers, counted as their bodies, headers and tags
// plus entryOverhead each, the least recently used going first; an answer larger than a
// sixteenth of that is not kept. Quotes (kept with an Until, for the second they were made in)
// hold at most a quarter of it: a quote's Put first drops the quotes past their second, then the
// oldest ones until it fits, so that heavy searches, however many and however large, never push
// out more than a quarter of the answers that stay fresh for minutes. Limits and usage are the
// edges' business: each asks the cache only after the caller was admitted and charged, so a hit
// is counted as any call is.
type Cache struct {
	hub *Hub
	now func() time.Time
	max int

	mu    sync.Mutex
	kept  *simplelru.LRU[CacheKey, *Kept]
	bytes int
	byTag map[string]map[CacheKey]struct{}
	// quotes are the kept answers with an Until (quotes of a second), and their bytes: at most
	// a quarter of max (maxQuoteShare), so that answers fresh for a second never push out more
	// than that of the answers fresh for minutes.
	quotes     map[CacheKey]*Kept
	quoteBytes int
	quoteOrder []quoteRef // the quotes as kept, oldest first (makeRoomForQuote)
	// gen counts the batches of events applied; evicted holds, per tag, the gen of the last
	// batch that evicted it, since floor (evicted is cleared when it grows past maxEvicted).
	gen, floor uint64
	evicted    map[string]uint64

	hits, misses atomic.Int64
}

// CacheKey names a kept answer: a hash of everything the answer depends on (KeyOf).
type CacheKey [sha256.Size]byte

// KeyOf hashes parts, each ended by a zero byte, into a key.
func KeyOf(parts ...string) CacheKey {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var k CacheKey
	h.Sum(k[:0])
	return k
}

// Kept is one kept answer.
type Kept struct {
	Body []byte
	// Header holds the headers the answer was made with (REST: its Content-Type, ETag, Link …).
	Header http.Header
	// Policy is the answer's cache policy: it is kept at most Policy.MaxAge.
	Policy flightgraph.CachePolicy
	// Until, when set, is when the answer stops being fresh instead (exclusive): a quote's, kept
	// for the second it was quoted in whatever its policy (see Cache).
	Until time.Time
	// Extra is what an edge keeps beside the body (GraphQL: the cache hints of the extensions;
	// the flight cache: the flight itself), and ExtraSize the bytes it holds, counted against
	// the bound with the body's.
	Extra     any
	ExtraSize int
	Stored    time.Time
	tags      []string
	size      int
}

// expires is the instant the answer stops being fresh: Until, else Stored and the max-age.
func (k *Kept) expires() time.Time {
	if !k.Until.IsZero() {
		return k.Until
	}
	return k.Stored.Add(time.Duration(k.Policy.MaxAge) * time.Second)
}

// Age is how long ago the answer was made, in whole seconds (the Age header).
func (k *Kept) Age(now time.Time) int { return max(int(now.Sub(k.Stored)/time.Second), 0) }

// Now is the cache's clock: an answer is Stored at Now, and fresh until Now passes its max-age.
func (c *Cache) Now() time.Time { return c.now() }

// DefaultCacheBytes is the response cache's bound unless configured (--response-cache-mb).
const DefaultCacheBytes = 64 << 20

// entryOverhead is what a kept answer costs beyond its bytes: the LRU's element and map entry,
// the Kept, its key; tagOverhead is a tag's share of the tag index.
const (
	entryOverhead = 256
	tagOverhead   = 96
	maxEvicted    = 1 << 16
)

// NewCache returns an empty cache of at most maxBytes (see Cache), evicted by hub's events.
func NewCache(hub *Hub, maxBytes int, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	c := &Cache{hub: hub, now: now, max: maxBytes, byTag: map[string]map[CacheKey]struct{}{}, evicted: map[string]uint64{},
		quotes: map[CacheKey]*Kept{}}
	c.kept, _ = simplelru.NewLRU(max(maxBytes/entryOverhead, 1), c.dropped)
	hub.Watch(c.apply)
	return c
}

// dropped unindexes an answer the LRU removes; mu is held.
func (c *Cache) dropped(key CacheKey, k *Kept) {
	c.bytes -= k.size
	if !k.Until.IsZero() {
		delete(c.quotes, key)
		c.quoteBytes -= k.size
	}
	for _, tag := range k.tags {
		if keys := c.byTag[tag]; keys != nil {
			delete(keys, key)
			if len(keys) == 0 {
				delete(c.byTag, tag)
			}
		}
	}
}

// Get returns the answer kept under key while it is fresh, and nothing while the hub has events
// to apply.
func (c *Cache) Get(key CacheKey) (*Kept, bool) {
	c.hub.Start(context.Background()) // a server that did not start it (a test's handler)
	if !c.hub.Settled() {
		c.misses.Add(1)
		return nil, false
	}
	c.mu.Lock()
	k, ok := c.kept.Get(key)
	if ok && !c.now().Before(k.expires()) {
		c.kept.Remove(key)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return k, true
}

// Fresh reports whether Get would find an answer under key now, without counting a lookup or
// using the answer: for an edge that decides how to admit a call by whether it will be answered
// from memory, then asks Get.
func (c *Cache) Fresh(key CacheKey) bool {
	if !c.hub.Settled() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.kept.Peek(key)
	return ok && c.now().Before(k.expires())
}

// Ticket is taken before an answer is computed and given to Put with it.
type Ticket struct {
	gen uint64
	ok  bool
}

// Begin returns the ticket of an answer about to be computed.
func (c *Cache) Begin() Ticket {
	settled := c.hub.Settled()
	c.mu.Lock()
	defer c.mu.Unlock()
	return Ticket{gen: c.gen, ok: settled}
}

// QuoteUntil is the Until of a quote begun now: the end of the cache clock's second.
func (c *Cache) QuoteUntil() time.Time { return c.now().Truncate(time.Second).Add(time.Second) }

// Put keeps k under key with tags, unless its policy is not public and cacheable (and it is not a
// quote kept Until the end of its second, which it must be made within: QuoteUntil when it was
// begun, and Put before then, else it is a later second's), it is too
// large, or an event evicted one of its tags since t was taken (the answer may show what the
// event changed), or the hub had events to apply when t was taken.
func (c *Cache) Put(t Ticket, key CacheKey, k *Kept, tags []string) bool {
	quote := !k.Until.IsZero()
	switch {
	case !t.ok, quote && !c.now().Before(k.Until), !quote && (!k.Policy.Cacheable() || k.Policy.Private):
		return false
	}
	k.tags = tags
	k.size = entryOverhead + cap(k.Body) + k.ExtraSize // what it holds, which may be more than it says
	for name, vs := range k.Header {
		k.size += len(name) + 16
		for _, v := range vs {
			k.size += len(v) + 16
		}
	}
	for _, tag := range tags {
		k.size += len(tag) + tagOverhead
	}
	if k.size > c.max/16 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.gen < c.floor {
		return false
	}
	for _, tag := range tags {
		if c.evicted[tag] > t.gen {
			return false
		}
	}
	if old, ok := c.kept.Peek(key); ok {
		c.dropped(key, old) // Add replaces it without evicting
	}
	if quote {
		c.makeRoomForQuote(k.size)
		c.quotes[key] = k
		c.quoteBytes += k.size
		c.quoteOrder = append(c.quoteOrder, quoteRef{key, k})
	}
	c.kept.Add(key, k)
	c.bytes += k.size
	for _, tag := range tags {
		keys := c.byTag[tag]
		if keys == nil {
			keys = map[CacheKey]struct{}{}
			c.byTag[tag] = keys
		}
		keys[key] = struct{}{}
	}
	for c.bytes > c.max {
		c.kept.RemoveOldest()
	}
	return true
}

// maxQuoteShare is the share of a Cache's bytes that quotes may hold: one in maxQuoteShare.
const maxQuoteShare = 4

// makeRoomForQuote drops the quotes past their second, then the oldest, until a quote of size
// fits in the quotes' share; mu is held. The quotes are dropped in the order they were kept
// (quoteOrder), whose front holds those past their second: a Put visits those it drops and the
// references left by quotes gone otherwise (replaced, evicted), not every quote kept.
func (c *Cache) makeRoomForQuote(size int) {
	now := c.now()
	for len(c.quoteOrder) > 0 {
		q := c.quoteOrder[0]
		switch {
		case c.quotes[q.key] != q.kept: // gone already
		case !now.Before(q.kept.Until) || c.quoteBytes+size > c.max/maxQuoteShare:
			c.kept.Remove(q.key) // dropped unindexes it
		default:
			return
		}
		c.quoteOrder[0] = quoteRef{}
		c.quoteOrder = c.quoteOrder[1:]
	}
}

// quoteRef is a quote in the order quotes were kept.
type quoteRef struct {
	key  CacheKey
	kept *Kept
}

// apply evicts what evs change: the hub's watcher.
func (c *Cache) apply(evs []*flightgraph.FlightEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if len(c.evicted) > maxEvicted {
		clear(c.evicted)
		c.floor = c.gen // an answer begun before cannot be checked any more: not kept
	}
	for _, e := range evs {
		for _, tag := range flightgraph.EventTags(e) {
			c.evicted[tag] = c.gen
			for key := range c.byTag[tag] {
				c.kept.Remove(key) // dropped unindexes it
			}
		}
	}
}

// CacheStats is what a Cache holds and has served.
type CacheStats struct {
	Entries, Bytes, MaxBytes int
	// Quotes and QuoteBytes are the quotes among them (Kept.Until).
	Quotes, QuoteBytes int
	Hits, Misses       int64
}

// Stats returns what c holds and has served.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Entries: c.kept.Len(), Bytes: c.bytes, MaxBytes: c.max, Quotes: len(c.quotes), QuoteBytes: c.quoteBytes,
		Hits: c.hits.Load(), Misses: c.misses.Load()}
}

// TagFlights returns flights recording, in the tags of the request (flightgraph.CacheTags), what
// each read may show: the flights read by id, and for a search the boards of its origin's
// airports, else of its destination's, else all flights, since a change can bring a flight into
// a search's page or take it out.
func TagFlights(flights flightgraph.FlightStore) flightgraph.FlightStore {
	return taggedFlights{flights}
}

type taggedFlights struct{ flightgraph.FlightStore }

func tagIDs(ctx context.Context, ids []string) {
	if t := flightgraph.CacheTagsFromContext(ctx); t != nil {
		for _, id := range ids {
			t.Add(flightgraph.FlightTag(id))
		}
	}
}

func tagFilter(ctx context.Context, f flightgraph.FlightFilter) {
	t := flightgraph.CacheTagsFromContext(ctx)
	switch {
	case t == nil:
	case f.Origin != nil && len(f.Origin.Airports) > 0:
		for _, code := range f.Origin.AirportCodes() {
			t.Add(flightgraph.DeparturesTag(code))
		}
	case f.Destination != nil && len(f.Destination.Airports) > 0:
		for _, code := range f.Destination.AirportCodes() {
			t.Add(flightgraph.ArrivalsTag(code))
		}
	default:
		t.Add(flightgraph.AllFlightsTag)
	}
}

func (s taggedFlights) FlightsByIDs(ctx context.Context, ids []string) ([]*flightgraph.Flight, error) {
	tagIDs(ctx, ids)
	return s.FlightStore.FlightsByIDs(ctx, ids)
}

func (s taggedFlights) FindFlights(ctx context.Context, f flightgraph.FlightFilter) ([]*flightgraph.Flight, int, error) {
	tagFilter(ctx, f)
	return s.FlightStore.FindFlights(ctx, f)
}

func (s taggedFlights) LegsByFlightIDs(ctx context.Context, ids []string) ([][]*flightgraph.FlightLeg, error) {
	tagIDs(ctx, ids)
	return s.FlightStore.LegsByFlightIDs(ctx, ids)
}

func (s taggedFlights) FlightsWithLegs(ctx context.Context, ids []string) ([]*flightgraph.Flight, [][]*flightgraph.FlightLeg, error) {
	tagIDs(ctx, ids)
	return s.FlightStore.FlightsWithLegs(ctx, ids)
}

func (s taggedFlights) FindLegs(ctx context.Context, f flightgraph.FlightFilter) ([]*flightgraph.FlightLeg, error) {
	tagFilter(ctx, f)
	return s.FlightStore.FindLegs(ctx, f)
}
