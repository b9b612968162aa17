package flightgraph

import (
	"context"
	"net/http"
	"strconv"
	"strings"
)

// PointOfSale is where, in what language and under which brand a request sells: the market's
// country (offers are priced in its currency), the language of labels, and the host carrier.
// Every edge reads it from the same headers (PointOfSaleOf) and puts it in the request's context;
// travel reads it from there (PointOfSaleFromContext).
type PointOfSale struct {
	// Country is the market, ISO 3166-1 alpha-2, from svc-travel-country or else the region of
	// Accept-Language's preferred tag; "" when neither says.
	Country string
	// Currency is the market's currency (ISO 4217) when the network sells there; "" otherwise.
	Currency string
	Language Language
	// Brand is the host carrier, from svc-travel-host; "" for none.
	Brand string
}

// DefaultPointOfSale is the point of sale of a request that names none: English, no market, no
// brand.
var DefaultPointOfSale = PointOfSale{Language: LanguageEN}

// Markets tells where the network sells and under which brands: what PointOfSaleOf checks a
// point of sale against (travel.Service).
type Markets interface {
	// MarketCountry returns the country of code, or nil when the network does not sell there.
	MarketCountry(ctx context.Context, code string) (*Country, error)
	// IsHost reports whether code is a carrier of the network.
	IsHost(ctx context.Context, code string) (bool, error)
}

// PointOfSaleOf reads the point of sale of a request's headers (spec 4.2, 4.3): Accept-Language
// (the most preferred of en, fr and nl, q weights honoured; its region names the market when
// svc-travel-country does not), svc-travel-country (a country the network sells in) and
// svc-travel-host (a carrier of the network). A malformed value is ECodeBadFormat, an unknown
// one ECodeInvalidParameter, each naming its header.
func PointOfSaleOf(ctx context.Context, h http.Header, markets Markets) (PointOfSale, error) {
	pos := DefaultPointOfSale
	if al := strings.TrimSpace(h.Get("Accept-Language")); al != "" {
		lang, country, err := acceptLanguage(al)
		if err != nil {
			return pos, err
		}
		pos.Language, pos.Country = lang, country
	}
	explicit := false
	if c := strings.TrimSpace(h.Get("svc-travel-country")); c != "" {
		c = strings.ToUpper(c)
		if !IsCountryCode(c) {
			return pos, ParamErrorf(ECodeBadFormat, "svc-travel-country", "svc-travel-country must be a two-letter country code, got %q", c)
		}
		pos.Country, explicit = c, true
	}
	if pos.Country != "" {
		market, err := markets.MarketCountry(ctx, pos.Country)
		if err != nil {
			return pos, err
		}
		switch {
		case market != nil:
			pos.Currency = market.Currency
		case explicit:
			return pos, ParamErrorf(ECodeInvalidParameter, "svc-travel-country", "%s is not a point of sale of the network", pos.Country)
		}
	}
	if b := strings.TrimSpace(h.Get("svc-travel-host")); b != "" {
		b = strings.ToUpper(b)
		if !IsCarrierCode(b) {
			return pos, ParamErrorf(ECodeBadFormat, "svc-travel-host", "svc-travel-host must be a two-character carrier code, got %q", b)
		}
		host, err := markets.IsHost(ctx, b)
		if err != nil {
			return pos, err
		}
		if !host {
			return pos, ParamErrorf(ECodeInvalidParameter, "svc-travel-host", "%s is not a host of the network", b)
		}
		pos.Brand = b
	}
	return pos, nil
}

// acceptLanguage reads the language the service speaks that the Accept-Language list of ll or
// ll-CC tags prefers most (q weights honoured, q=0 excluded), and its region.
func acceptLanguage(al string) (lang Language, country string, err error) {
	type choice struct {
		lang    Language
		country string
		q       float64
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
					return "", "", ParamErrorf(ECodeBadFormat, "Accept-Language", "Accept-Language has a bad weight %q", p)
				}
				q = f
			}
		}
		if tag == "*" {
			tag = "en"
		}
		ll, cc, hasCC := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
		if len(ll) != 2 || !isLetters(ll) || (hasCC && (len(cc) != 2 || !isLetters(cc))) {
			return "", "", ParamErrorf(ECodeBadFormat, "Accept-Language", "Accept-Language must list tags like en or en-GB, got %q", tag)
		}
		if l := Language(strings.ToLower(ll)); q > 0 && l.Spoken() && (best == nil || q > best.q) {
			best = &choice{l, strings.ToUpper(cc), q}
		}
	}
	if best == nil {
		return "", "", ParamErrorf(ECodeInvalidParameter, "Accept-Language", "labels are in en, fr and nl; %q has none of them", al)
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

type pointOfSaleKey struct{}

// WithPointOfSale returns ctx carrying the request's point of sale.
func WithPointOfSale(ctx context.Context, pos PointOfSale) context.Context {
	return context.WithValue(ctx, pointOfSaleKey{}, pos)
}

// PointOfSaleFromContext returns the request's point of sale, DefaultPointOfSale when it has none.
func PointOfSaleFromContext(ctx context.Context) PointOfSale {
	if pos, ok := ctx.Value(pointOfSaleKey{}).(PointOfSale); ok {
		return pos
	}
	return DefaultPointOfSale
}
