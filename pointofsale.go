package flightgraph

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
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
// one ECodeInvalidParameter, each naming its header. An Accept-Language that names none of the
// languages (de-DE) is answered in English, on both edges, as the original falls back: the
// edges say so in Content-Language. Strict (REST) takes the original's tags only, ll or ll-CC;
// otherwise (GraphQL, whose clients are browsers) any RFC 4647 language range.
func PointOfSaleOf(ctx context.Context, h http.Header, markets Markets, strict bool) (PointOfSale, error) {
	pos := DefaultPointOfSale
	if al := strings.TrimSpace(h.Get("Accept-Language")); al != "" {
		lang, country, err := acceptLanguage(al, strict)
		if err != nil {
			return pos, err
		}
		pos.Language, pos.Country = lang, country
	}
	explicit := false
	if c := strings.TrimSpace(h.Get("svc-travel-country")); c != "" {
		c = strings.ToUpper(c)
		if !IsCountryCode(c) {
			return pos, ParamErrorf(ECodeBadFormat, "svc-travel-country", "svc-travel-country must be a two-letter country code, got %q", Clip(c))
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
			return pos, ParamErrorf(ECodeBadFormat, "svc-travel-host", "svc-travel-host must be a two-character carrier code, got %q", Clip(b))
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

// acceptLanguage reads the language the service speaks that the Accept-Language list prefers
// most (q weights honoured, q=0 excluded, empty elements skipped), and the region of that range;
// English and no region when the list names none of them. Strict, it takes the original's tags
// only, ll or ll-CC; otherwise any language range of RFC 4647, as browsers send (es-419,
// zh-Hant-TW, fil). Only a malformed list is an error (ECodeBadFormat).
func acceptLanguage(al string, strict bool) (lang Language, country string, err error) {
	type choice struct {
		lang    Language
		country string
		q       float64
	}
	var best *choice
	for _, part := range strings.Split(al, ",") {
		fields := strings.Split(part, ";")
		tag := strings.TrimSpace(fields[0])
		if tag == "" && len(fields) == 1 {
			continue // RFC 9110 §5.6.1: empty elements are skipped
		}
		q := 1.0
		for _, p := range fields[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "q="); ok {
				if q, ok = qvalue(v); !ok {
					return "", "", ParamErrorf(ECodeBadFormat, "Accept-Language", "Accept-Language has a bad weight %q", Clip(p))
				}
			}
		}
		if tag == "*" {
			tag = "en"
		}
		subtags := strings.Split(strings.ReplaceAll(tag, "_", "-"), "-")
		if strict && (len(subtags) > 2 || len(subtags[0]) != 2 || len(subtags) == 2 && len(subtags[1]) != 2) || !languageRange(subtags) {
			return "", "", ParamErrorf(ECodeBadFormat, "Accept-Language", "Accept-Language must list language tags like en or en-GB, got %q", Clip(tag))
		}
		var cc string
		for _, st := range subtags[1:] {
			if len(st) == 2 && isLetters(st) {
				cc = strings.ToUpper(st)
				break
			}
		}
		if l := Language(strings.ToLower(subtags[0])); q > 0 && l.Spoken() && (best == nil || q > best.q) {
			best = &choice{l, cc, q}
		}
	}
	if best == nil {
		// None of en, fr and nl: the original falls back to English, and so does the
		// region, which belonged to a language the answer is not in.
		return LanguageEN, "", nil
	}
	return best.lang, best.country, nil
}

// languageRange reports whether subtags make an RFC 4647 language range: a primary of 1 to 8
// letters, then subtags of 1 to 8 letters or digits.
func languageRange(subtags []string) bool {
	for i, st := range subtags {
		if len(st) < 1 || len(st) > 8 {
			return false
		}
		for _, c := range st {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}

// qvalue parses an RFC 9110 §12.4.2 weight: 0 to 1 with at most three decimals.
func qvalue(v string) (float64, bool) {
	whole, frac, _ := strings.Cut(v, ".")
	if (whole != "0" && whole != "1") || len(frac) > 3 || strings.Trim(frac, "0123456789") != "" || whole == "1" && strings.Trim(frac, "0") != "" {
		return 0, false
	}
	q, err := strconv.ParseFloat(v, 64)
	return q, err == nil
}

// Clip shortens a value a client sent for quoting in an error, at a character's boundary.
func Clip(v string) string { return clipAt(v, 64) }

// clipAt keeps at most n bytes of v, cut at a character's boundary, and marks the cut.
func clipAt(v string, n int) string {
	if len(v) <= n {
		return v
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "…"
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
