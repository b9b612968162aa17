package rest

import (
	"context"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// Languages the labels are kept in.
var languages = map[string]bool{"en": true, "fr": true, "nl": true}

// locale is what the request headers say of the caller: the language of labels, the point of
// sale and the brand, and the media type to answer with.
type locale struct {
	Lang        string // en, fr or nl
	Country     string // point of sale, from svc-travel-country or Accept-Language; may be empty
	Host        string // svc-travel-host; may be empty
	ContentType string
}

type localeKey struct{}

func localeFrom(ctx context.Context) locale {
	if l, ok := ctx.Value(localeKey{}).(locale); ok {
		return l
	}
	return locale{Lang: "en", ContentType: halJSON}
}

const halJSON = "application/hal+json"

// contract checks the headers every REST call shares (spec 4.2, 4.3, 9): Accept, Accept-Language,
// svc-travel-country and svc-travel-host. A malformed value is INSP_400.002, an unknown one
// INSP_400.001, an Accept the API cannot serve INSP_406.000.
func (a *API) contract(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		loc, err := a.negotiate(r)
		if err != nil {
			a.Error(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), localeKey{}, loc)))
	})
}

func (a *API) negotiate(r *http.Request) (locale, error) {
	loc := locale{Lang: "en", ContentType: halJSON}
	ct, ok := acceptable(r.Header.Get("Accept"))
	if !ok {
		return loc, flightgraph.Errorf(flightgraph.ECodeNotAcceptable, "this API answers application/hal+json or application/json, not %s", r.Header.Get("Accept"))
	}
	loc.ContentType = ct
	if al := strings.TrimSpace(r.Header.Get("Accept-Language")); al != "" {
		lang, country, err := acceptLanguage(al)
		if err != nil {
			return loc, err
		}
		loc.Lang, loc.Country = lang, country
	}
	ctx := r.Context()
	if c := strings.TrimSpace(r.Header.Get("svc-travel-country")); c != "" {
		c = strings.ToUpper(c)
		if !flightgraph.IsCountryCode(c) {
			return loc, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "svc-travel-country", "svc-travel-country must be a two-letter country code, got %q", c)
		}
		served, err := a.Travel.CountryServed(ctx, c)
		if err != nil {
			return loc, err
		}
		if !served {
			return loc, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "svc-travel-country", "%s is not a point of sale of the network", c)
		}
		loc.Country = c
	}
	if h := strings.TrimSpace(r.Header.Get("svc-travel-host")); h != "" {
		h = strings.ToUpper(h)
		if !flightgraph.IsCarrierCode(h) {
			return loc, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "svc-travel-host", "svc-travel-host must be a two-character carrier code, got %q", h)
		}
		names, err := a.Travel.CarrierNames(ctx)
		if err != nil {
			return loc, err
		}
		if _, known := names[h]; !known {
			return loc, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "svc-travel-host", "%s is not a host of the network", h)
		}
		loc.Host = h
	}
	return loc, nil
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
		}
	}
	if plain {
		return "application/json", true
	}
	return "", false
}

// acceptLanguage reads the language the service speaks that the Accept-Language list of ll or
// ll-CC tags prefers most (q weights honoured, q=0 excluded).
func acceptLanguage(al string) (lang, country string, err error) {
	type choice struct {
		lang, country string
		q             float64
	}
	var best *choice
	for _, part := range strings.Split(al, ",") {
		fields := strings.Split(part, ";")
		tag := strings.TrimSpace(fields[0])
		q := 1.0
		for _, p := range fields[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil || f < 0 || f > 1 {
					return "", "", flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "Accept-Language", "Accept-Language has a bad weight %q", p)
				}
				q = f
			}
		}
		if tag == "*" {
			tag = "en"
		}
		ll, cc, hasCC := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
		if len(ll) != 2 || !isLetters(ll) || (hasCC && (len(cc) != 2 || !isLetters(cc))) {
			return "", "", flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "Accept-Language", "Accept-Language must list tags like en or en-GB, got %q", tag)
		}
		if q > 0 && languages[strings.ToLower(ll)] && (best == nil || q > best.q) {
			best = &choice{strings.ToLower(ll), strings.ToUpper(cc), q}
		}
	}
	if best == nil {
		return "", "", flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "Accept-Language", "labels are in en, fr and nl; %q has none of them", al)
	}
	return best.lang, best.country, nil
}

func isLetters(s string) bool {
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}
