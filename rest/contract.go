package rest

import (
	"context"
	"mime"
	"net/http"
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
	ct, ok := acceptable(r.Header.Get("Accept"))
	if ct == eventStream && r.URL.Path != EventsPath {
		ok = false // only the events stream answers server-sent events
	}
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

// acceptable picks the media type to answer with: HAL unless the client asked for plain JSON
// only. HAL with parameters (charset, profile), application/json, application/* and */* are
// served; anything else is not.
func acceptable(accept string) (string, bool) {
	if strings.TrimSpace(accept) == "" {
		return halJSON, true
	}
	plain := false
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["q"] == "0" {
			continue
		}
		switch mt {
		case halJSON, "application/*", "*/*":
			return halJSON, true
		case "application/json":
			plain = true
		case eventStream:
			return eventStream, true
		}
	}
	if plain {
		return "application/json", true
	}
	return "", false
}
