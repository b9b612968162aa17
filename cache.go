package flightgraph

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CachePolicy is how long an answer may be kept by an HTTP cache or a gateway's response cache,
// and by whom: the policy of a REST route, or of a GraphQL operation (the most restrictive of the
// hints of the fields it selects, as Apollo's cache control computes it). A zero policy is "not
// cacheable".
type CachePolicy struct {
	// MaxAge is in seconds; 0 or less: not cacheable.
	MaxAge int
	// Private says that the answer is for its caller only: a shared cache (a CDN, a gateway's
	// response cache without a per-caller key) must not keep it.
	Private bool
}

// The classes of answers, by how fast what they serve changes and by whom it may be shared.
// Every GraphQL hint in schema.graphql and every REST route's policy (rest/cache.go) is one of
// them; TestCacheClasses holds both edges to the same class for the same data.
var (
	// CacheReference is reference data (airports, cities, countries, carriers, aircraft and
	// their cabins and amenities): it changes with a release of the data set, not during a day.
	CacheReference = CachePolicy{MaxAge: int((24 * time.Hour).Seconds())}
	// CacheSchedule is the published schedule (flights as planned, routes, schedule records):
	// a schedule change is planned, never minutes before it applies.
	CacheSchedule = CachePolicy{MaxAge: int(time.Hour.Seconds())}
	// CacheStatus is a flight's status and the times, gates and terminals of its movements:
	// they change with the status clock and the operations feed, and an answer is at most this
	// old in any cache. Live boards subscribe instead of polling faster.
	CacheStatus = CachePolicy{MaxAge: 15}
	// CacheQuote is a price, an offer, a cart, an availability: a quote made for the caller's
	// search at its point of sale, kept privately for far less than OfferValidity.
	CacheQuote = CachePolicy{MaxAge: 60, Private: true}
	// NoStore is an answer no cache keeps: an error, a change, a stream.
	NoStore = CachePolicy{}
)

// Cacheable reports whether a cache may keep the answer at all.
func (p CachePolicy) Cacheable() bool { return p.MaxAge > 0 }

// Restrict returns the more restrictive of p and q: the smaller max age, private if either is.
func (p CachePolicy) Restrict(q CachePolicy) CachePolicy {
	return CachePolicy{MaxAge: min(p.MaxAge, q.MaxAge), Private: p.Private || q.Private}
}

// AsPrivate returns p kept for the caller only.
func (p CachePolicy) AsPrivate() CachePolicy { p.Private = true; return p }

// Header is p as a Cache-Control value: "public, max-age=N" or "private, max-age=N", and
// "no-store" (", private" when the data is the caller's) for an answer that is not cacheable.
// public is written out because every call carries credentials: without it, a shared cache must
// not keep an answer to a request with Authorization (RFC 9111 §3.5).
func (p CachePolicy) Header() string {
	switch {
	case !p.Cacheable() && p.Private:
		return "private, no-store"
	case !p.Cacheable():
		return "no-store"
	case p.Private:
		return "private, max-age=" + strconv.Itoa(p.MaxAge)
	}
	return "public, max-age=" + strconv.Itoa(p.MaxAge)
}

// CacheVary lists the request headers an API answer depends on besides its URL (and Accept,
// which each edge adds where it negotiates one): the credentials, since every call is a
// caller's and a cache must never serve one caller's answer to another credential (or to none),
// and the point of sale (PointOfSaleOf), which prices, markets and labels follow.
var CacheVary = []string{"api-key", "Authorization", "Accept-Language", "svc-travel-country", "svc-travel-host"}

// SetCacheHeaders sets h's Cache-Control to p, and when p is cacheable adds CacheVary to its
// Vary.
func SetCacheHeaders(h http.Header, p CachePolicy) {
	h.Set("Cache-Control", p.Header())
	if p.Cacheable() {
		h.Add("Vary", strings.Join(CacheVary, ", "))
	}
}

// CacheTags collects what an answer was made of, so that a response cache can drop it when that
// changes: the flights it read (FlightTag), the boards whose membership a change can alter
// (DeparturesTag, ArrivalsTag), or every flight (AllFlightsTag) for a read that names neither.
// The store decorator that reads flights for the edges records them (live.TagFlights); a nil
// *CacheTags records nothing. It is safe for concurrent use: loaders read in goroutines.
type CacheTags struct {
	mu   sync.Mutex
	tags map[string]struct{}
}

// The tags of a flight status event's reach (EventTags).
const AllFlightsTag = "flights"

// FlightTag names the answers that show flight id.
func FlightTag(id string) string { return "f:" + id }

// DeparturesTag names the answers that list the flights leaving airport.
func DeparturesTag(airport string) string { return "d:" + airport }

// ArrivalsTag names the answers that list the flights reaching airport.
func ArrivalsTag(airport string) string { return "a:" + airport }

// EventTags are the tags of every answer that e can change: the flight's own, the boards of
// every airport its legs leave or reach, and the reads of all flights.
func EventTags(e *FlightEvent) []string {
	tags := []string{FlightTag(e.FlightID), AllFlightsTag}
	for code := range strings.FieldsSeq(e.Origins) {
		tags = append(tags, DeparturesTag(code))
	}
	for code := range strings.FieldsSeq(e.Destinations) {
		tags = append(tags, ArrivalsTag(code))
	}
	return tags
}

type cacheTagsKey struct{}

// WithCacheTags returns ctx recording the tags of what is read under it.
func WithCacheTags(ctx context.Context) (context.Context, *CacheTags) {
	t := &CacheTags{tags: map[string]struct{}{}}
	return context.WithValue(ctx, cacheTagsKey{}, t), t
}

// CacheTagsFromContext returns the recorder of ctx, nil when none records.
func CacheTagsFromContext(ctx context.Context) *CacheTags {
	t, _ := ctx.Value(cacheTagsKey{}).(*CacheTags)
	return t
}

// Add records tags.
func (t *CacheTags) Add(tags ...string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	for _, tag := range tags {
		t.tags[tag] = struct{}{}
	}
	t.mu.Unlock()
}

// List returns the tags recorded, sorted.
func (t *CacheTags) List() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Sorted(maps.Keys(t.tags))
}
