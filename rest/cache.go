package rest

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/live"
)

// RouteCache is how long the answer of each GET route may be cached, and by whom, by what it
// serves, in the classes the GraphQL schema's hints use for the same data (flightgraph.CachePolicy;
// TestCacheClasses holds both edges to them): reference data for a day, the schedule for an hour,
// a flight's status for seconds, everything priced or the caller's own (offers, carts,
// inspiration's prices, baggage by the customer's tier, staff's cargo figures) privately. Every
// GET route but the pings is listed (TestCacheClasses), a stream as flightgraph.NoStore; a route
// that is not (a POST, a ping) answers no-store.
var RouteCache = map[string]flightgraph.CachePolicy{
	"GET /opendata/flightoffers/reference-data": flightgraph.CacheReference,
	"GET /opendata/inspire/v2/amenities":        flightgraph.CacheReference,
	"GET /opendata/schedule/v1/routes":          flightgraph.CacheSchedule,
	"GET /opendata/schedule/v1/flights":         flightgraph.CacheSchedule,
	"GET /opendata/flightstatus":                flightgraph.CacheStatus,
	"GET /opendata/flightstatus/{id}":           flightgraph.CacheStatus,
	// A stream of events: never kept.
	"GET /opendata/flightstatus/events":                        flightgraph.NoStore,
	"GET /opendata/inspire/v2/destinations/inspiration":        flightgraph.CacheQuote,
	"GET /opendata/offers/v1/available-offers":                 flightgraph.CacheQuote,
	"GET /opendata/offers/v1/upsell-offers":                    flightgraph.CacheQuote,
	"GET /opendata/offers/v1/lowest-fare-offers":               flightgraph.CacheQuote,
	"GET /opendata/offers/v1/ticket-conditions":                flightgraph.CacheQuote,
	"GET /opendata/offers/v1/priceDetails":                     flightgraph.CacheQuote,
	"GET /opendata/offers/v1/tax-breakdown":                    flightgraph.CacheQuote,
	"GET /opendata/offers/v1/flightDetails":                    flightgraph.CacheQuote,
	"GET /opendata/offers/v1/shopping-carts/{cartId}":          flightgraph.CacheQuote,
	"GET /opendata/offers/v1/related-products":                 flightgraph.CacheQuote,
	"GET /opendata/offers/v1/search-context":                   flightgraph.CacheQuote,
	"GET /opendata/offers/v1/reference-data":                   flightgraph.CacheReference.AsPrivate(),
	"GET /opendata/offers/v1/reference-data/deals":             flightgraph.CacheSchedule.AsPrivate(),
	"GET /opendata/baggages/allowances":                        flightgraph.CacheSchedule.AsPrivate(),
	"GET /opendata/baggages/v1/all-allowances-without-loyalty": flightgraph.CacheSchedule.AsPrivate(),
	"GET /opendata/baggages/v1/base-allowances":                flightgraph.CacheSchedule.AsPrivate(),
	"GET /opendata/baggages/v1/loyalty-allowances":             flightgraph.CacheSchedule.AsPrivate(),
	"GET /opendata/baggages/v1/paid-options-with-loyalty":      flightgraph.CacheSchedule.AsPrivate(),
	"GET /opendata/baggages/v1/paid-options-without-loyalty":   flightgraph.CacheSchedule.AsPrivate(),
	"GET /opendata/baggages/v1/all-allowances-with-loyalty":    flightgraph.CacheSchedule.AsPrivate(),
	"GET /opendata/cargo/v1/flights/{flightId}/capacity":       flightgraph.CacheStatus.AsPrivate(),
}

// cached sets the Cache-Control of every answer of next as it is written: a successful one (2xx,
// 304) gets p, unless the handler chose its own; any other (a refusal, a limit, an error, a
// timeout), from the guard or the handler, no-store. A cacheable answer varies on the
// credentials and the point of sale (flightgraph.CacheVary) and on Accept (HAL or plain JSON).
func cached(p flightgraph.CachePolicy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&cacheWriter{ResponseWriter: w, policy: p}, r)
	})
}

// cacheWriter sets the Cache-Control of its answer when the status is written.
type cacheWriter struct {
	http.ResponseWriter
	policy flightgraph.CachePolicy
	wrote  bool
}

func (w *cacheWriter) WriteHeader(code int) {
	if !w.wrote && code >= http.StatusOK {
		w.wrote = true
		h := w.Header()
		switch {
		case code >= 300 && code != http.StatusNotModified:
			flightgraph.SetCacheHeaders(h, flightgraph.NoStore)
		case h.Get("Cache-Control") == "":
			flightgraph.SetCacheHeaders(h, w.policy)
			if w.policy.Cacheable() {
				h.Add("Vary", "Accept")
			}
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *cacheWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets a streaming handler flush through the writer (http.ResponseController).
func (w *cacheWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *cacheWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// answered serves a route from the response cache (API.Answers), or runs next and keeps its 200
// answer there, under everything the answer depends on: the caller's audience, the point of sale,
// the media type and the request's URI as sent (path and query spelled as they came), and for a
// quote its method and body (below). It keeps two kinds of answers:
//
//   - a GET route's whose policy p is public, tagged with the flights it read and kept up to p's
//     max-age (the status feed evicts it before, live.Cache);
//   - a heavy route's (quote: an inspiration, a calendar, deals, the feed), which prices offers
//     at the second it runs: the same for every caller of an audience and point of sale within
//     that second (the offers' ids and quotes name the second, not the caller), and kept for that
//     second only (live.Kept.Until), and only when made within it. Many callers asking the same
//     search in one second (a home page's deals) make one; the body is read and bounded as
//     arrived reads it (peek), and a body that did not arrive whole is not looked up.
//
// The URI is not normalised (parameters sorted, escapes decoded): the answer echoes it as sent
// (its HAL self link), so two spellings of one request are two answers, else the first spelling's
// caller chose what every later one was told.
// It runs inside the guard, which has admitted and charged the call (a hit is counted as any call
// is), and inside the contract, which read the point of sale and the media type. A kept answer
// is sent with the headers the handler made it with and its Age; Cache-Control is the route's
// (cached), the limit headers the guard's of this call.
func (a *API) answered(pattern string, p flightgraph.CachePolicy, quote bool, next http.HandlerFunc) http.HandlerFunc {
	public := p.Cacheable() && !p.Private
	if a.Answers == nil || !public && !quote {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		pos := flightgraph.PointOfSaleFromContext(ctx)
		var (
			until  time.Time
			key    live.CacheKey
			looked bool // Get was asked already
		)
		switch {
		case quote && (r.Method == http.MethodGet || r.Method == http.MethodPost):
			body, whole := peek(r)
			if whole {
				key = quoteKey(r, contentType(ctx), pos, pattern, body)
			}
			if h, _ := ctx.Value(quoteHitKey{}).(*quoteHit); h != nil && h.found {
				if whole && h.key == key {
					if kept, hit := a.Answers.Get(key); hit {
						serveKept(w, kept, a.Answers.Now())
						return
					}
					looked = true
				}
				// Admitted without a slot for a kept quote that is not, or no longer, this
				// call's answer (its second ended meanwhile, a change evicted it, or its body
				// read otherwise the second time): it takes its slot now, before any work.
				if err := a.Guard.EnterHeavy(ctx); err != nil {
					a.Error(w, r, err)
					return
				}
				// Another call may have made this second's answer while this one waited for
				// its slot: it looks again, as a call admitted with its slot looks only then.
				looked = false
			}
			if !whole {
				next(w, r)
				return
			}
			until = a.Answers.QuoteUntil()
		case !public || r.Method != http.MethodGet:
			next(w, r)
			return
		default:
			key = live.KeyOf("rest", access.Audience(flightgraph.CallerFromContext(ctx).Role()),
				pos.Country, pos.Currency, string(pos.Language), pos.Brand, contentType(ctx), pattern, r.URL.RequestURI())
		}
		if !looked {
			if kept, hit := a.Answers.Get(key); hit {
				serveKept(w, kept, a.Answers.Now())
				return
			}
		}
		ctx, tags := flightgraph.WithCacheTags(ctx)
		ticket := a.Answers.Begin()
		rec := &keeping{ResponseWriter: w, before: w.Header().Clone()}
		next(rec, r.WithContext(ctx))
		if rec.status != http.StatusOK || rec.failed || ctx.Err() != nil {
			return
		}
		a.Answers.Put(ticket, key, &live.Kept{Body: rec.body.Bytes(), Header: rec.made, Policy: p, Stored: a.Answers.Now(), Until: until}, tags.List())
	}
}

// serveKept sends a kept answer: the headers the handler made it with, its Age at now, its body.
func serveKept(w http.ResponseWriter, kept *live.Kept, now time.Time) {
	h := w.Header()
	for name, vs := range kept.Header {
		h[name] = slices.Clone(vs)
	}
	h.Set("Age", strconv.Itoa(kept.Age(now)))
	w.WriteHeader(http.StatusOK)
	w.Write(kept.Body)
}

// quoteKey is the key of a heavy route's answer (a quote, see answered): the caller's audience,
// the point of sale, the media type, the route, the URI as sent, the method, and the body with
// its headers as a handler reads them: every Content-Encoding (flightgraph's readBody joins them)
// and the Content-Types (ReadJSON reads the first), each list joined by a line feed, which no
// header value holds. The second is not in it: each second's answer takes the place of the last.
func quoteKey(r *http.Request, ct string, pos flightgraph.PointOfSale, pattern string, body []byte) live.CacheKey {
	return live.KeyOf("rest", access.Audience(flightgraph.CallerFromContext(r.Context()).Role()),
		pos.Country, pos.Currency, string(pos.Language), pos.Brand, ct, pattern, r.URL.RequestURI(),
		"quote", r.Method, strings.Join(r.Header.Values("Content-Type"), "\n"), strings.Join(r.Header.Values("Content-Encoding"), "\n"), string(body))
}

// quoteHit is where a heavy route's classification leaves the key of the kept quote it found to
// answer the call (quoteKept), for answered to serve if it is still there, and what it read of
// the request to find it, for the contract (negotiate).
type quoteHit struct {
	key   live.CacheKey
	found bool

	negotiated bool
	ct         string
	pos        flightgraph.PointOfSale
}

type quoteHitKey struct{}

// withQuoteHit gives each request of next a place for its kept quote.
func withQuoteHit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), quoteHitKey{}, &quoteHit{})))
	})
}

// quoteKept reports whether a kept quote answers the heavy call r of the route pattern, looked up
// as answered will look it up (with the media type and point of sale the contract reads: negotiate), and
// leaves its key in the request's quoteHit for answered: such a call is admitted without a
// heavy-work slot. The guard has authenticated the call; a call it will refuse for its credential
// (none, or a bad one) is not looked up, so that it costs no point-of-sale read before its refusal.
// It counts no lookup (live.Cache.Fresh): answered's is the call's.
func (a *API) quoteKept(r *http.Request, pattern string) bool {
	h, _ := r.Context().Value(quoteHitKey{}).(*quoteHit)
	if a.Answers == nil || h == nil || r.Method != http.MethodGet && r.Method != http.MethodPost {
		return false
	}
	if pass := access.PassFromContext(r.Context()); pass == nil || pass.AuthErr != nil ||
		flightgraph.CallerFromContext(r.Context()).Kind == flightgraph.CallerAnonymous {
		return false
	}
	ct, pos, err := a.negotiate(r)
	if err != nil {
		return false
	}
	body, whole := peek(r)
	if !whole {
		return false
	}
	key := quoteKey(r, ct, pos, pattern, body)
	if !a.Answers.Fresh(key) {
		return false
	}
	h.key, h.found = key, true
	return true
}

// keeping passes an answer through and keeps a copy: its status, the headers its handler set
// (those that were not there before it ran), and its body.
type keeping struct {
	http.ResponseWriter
	before http.Header
	made   http.Header
	status int
	body   bytes.Buffer
	failed bool
}

func (k *keeping) WriteHeader(code int) {
	if k.status == 0 {
		k.status = code
		k.made = http.Header{}
		for name, vs := range k.Header() {
			if !slices.Equal(k.before[name], vs) {
				k.made[name] = slices.Clone(vs)
			}
		}
	}
	k.ResponseWriter.WriteHeader(code)
}

func (k *keeping) Write(b []byte) (int, error) {
	if k.status == 0 {
		k.WriteHeader(http.StatusOK)
	}
	n, err := k.ResponseWriter.Write(b)
	if err != nil {
		k.failed = true
	}
	k.body.Write(b)
	return n, err
}

// Flush ends keeping: a flushed answer is a stream.
func (k *keeping) Flush() {
	k.failed = true
	http.NewResponseController(k.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (k *keeping) Unwrap() http.ResponseWriter { return k.ResponseWriter }
