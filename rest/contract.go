package rest

import (
	"context"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/flightgraph/flightgraph"
)

type contentTypeKey struct{}

// contentType is the media type to answer the request with: HAL unless the client asked for plain
// JSON (see acceptable).
func contentType(ctx context.Context) string {
	if ct, ok := ctx.Value(contentTypeKey{}).(string); ok {
		return ct
	}
	return halJSON
}

const halJSON = "application/hal+json"

// contract checks the headers every REST call shares (spec 4.2, 4.3, 9): Accept, then the point of
// sale's (Accept-Language, svc-travel-country, svc-travel-host; flightgraph.PointOfSaleOf), and
// puts both in the context. A malformed value is INSP_400.002, an unknown one INSP_400.001, an
// Accept the API cannot serve INSP_406.000. The answer's Content-Language is the language its
// labels are in: the negotiated one, English when Accept-Language names none the service speaks
// (and English for an error, whose words are; see Error).
func (a *API) contract(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct, pos, err := a.negotiate(r)
		if err != nil {
			a.Error(w, r, err)
			return
		}
		ctx := context.WithValue(r.Context(), contentTypeKey{}, ct)
		w.Header().Set("Content-Language", string(pos.Language))
		next.ServeHTTP(w, r.WithContext(flightgraph.WithPointOfSale(ctx, pos)))
	})
}

// negotiate reads what the contract reads of r: the media type to answer with and the point of
// sale; once a request, since a heavy route's admission reads them first (quoteKept), and the
// point of sale may be read from the store.
func (a *API) negotiate(r *http.Request) (ct string, pos flightgraph.PointOfSale, err error) {
	h, _ := r.Context().Value(quoteHitKey{}).(*quoteHit)
	if h != nil && h.negotiated {
		return h.ct, h.pos, nil
	}
	// Only the events stream answers server-sent events.
	ct, ok := acceptable(r.Header.Get("Accept"), r.URL.Path == EventsPath)
	if !ok {
		return "", pos, flightgraph.Errorf(flightgraph.ECodeNotAcceptable, "this API answers application/hal+json or application/json, not %s", r.Header.Get("Accept"))
	}
	if pos, err = flightgraph.PointOfSaleOf(r.Context(), r.Header, a.Travel, true); err != nil {
		return "", pos, err
	}
	if h != nil {
		h.ct, h.pos, h.negotiated = ct, pos, true
	}
	return ct, pos, nil
}

// acceptable picks the media type to answer with from an Accept header: of HAL, plain JSON and,
// on the events stream (events), server-sent events, the one the client weighs most, each
// weighed by the most specific range that names it (HAL with parameters such as charset or
// profile is HAL; application/* and */* name every type); at equal weights the events stream's
// own type on its route, then HAL. A type weighed 0 (q=0, q=0.0) is not served, a malformed range
// or weight is ignored, and an empty Accept is HAL.
func acceptable(accept string, events bool) (string, bool) {
	if strings.TrimSpace(accept) == "" {
		return halJSON, true
	}
	candidates := []string{halJSON, "application/json"}
	if events {
		candidates = []string{eventStream, halJSON, "application/json"} // preferred first
	}
	q := make([]float64, len(candidates))
	specific := make([]int, len(candidates)) // of the range that weighed it: 3 exact, 2 type/*, 1 */*
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		weight := 1.0
		if v, ok := params["q"]; ok {
			if weight, err = strconv.ParseFloat(v, 64); err != nil || weight < 0 || weight > 1 {
				continue
			}
		}
		for i, c := range candidates {
			n := 0
			switch {
			case mt == c:
				n = 3
			case mt == "*/*":
				n = 1
			case strings.HasSuffix(mt, "/*") && strings.HasPrefix(c, strings.TrimSuffix(mt, "*")):
				n = 2
			}
			if n > specific[i] || n == specific[i] && n > 0 && weight > q[i] {
				specific[i], q[i] = n, weight
			}
		}
	}
	best := -1
	for i := range candidates {
		if q[i] > 0 && (best < 0 || q[i] > q[best]) {
			best = i
		}
	}
	if best < 0 {
		return "", false
	}
	return candidates[best], true
}
