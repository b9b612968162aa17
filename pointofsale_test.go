package flightgraph_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/flightgraph/flightgraph"
)

// markets is a network of two markets and one host. The travel service over the real stores is
// what the edges pass (REST's and GraphQL's tests read those headers end to end); this table
// tests the reading of the headers.
type markets struct{}

func (markets) MarketCountry(_ context.Context, code string) (*flightgraph.Country, error) {
	return map[string]*flightgraph.Country{"NL": {Code: "NL", Currency: "EUR"}, "GB": {Code: "GB", Currency: "GBP"}}[code], nil
}

func (markets) IsHost(_ context.Context, code string) (bool, error) { return code == "XX", nil }

// TestPointOfSaleOf: the point of sale both edges read from the same headers.
func TestPointOfSaleOf(t *testing.T) {
	for _, c := range []struct {
		name    string
		headers map[string]string
		want    flightgraph.PointOfSale
		code    string // of the error, and the header it names
		header  string
	}{
		{"none", nil, flightgraph.PointOfSale{Language: flightgraph.LanguageEN}, "", ""},
		{"the preferred language and its region", map[string]string{"Accept-Language": "de-DE, fr-FR;q=0.5, nl-NL;q=0.8"},
			flightgraph.PointOfSale{Language: flightgraph.LanguageNL, Country: "NL", Currency: "EUR"}, "", ""},
		{"a region the network does not sell in", map[string]string{"Accept-Language": "en-US"},
			flightgraph.PointOfSale{Language: flightgraph.LanguageEN, Country: "US"}, "", ""},
		{"the market header wins", map[string]string{"Accept-Language": "nl-NL", "svc-travel-country": "gb", "svc-travel-host": "xx"},
			flightgraph.PointOfSale{Language: flightgraph.LanguageNL, Country: "GB", Currency: "GBP", Brand: "XX"}, "", ""},
		{"no language spoken: English", map[string]string{"Accept-Language": "de-DE"}, flightgraph.PointOfSale{Language: flightgraph.LanguageEN}, "", ""},
		{"only languages refused: English", map[string]string{"Accept-Language": "fr;q=0, de"}, flightgraph.PointOfSale{Language: flightgraph.LanguageEN}, "", ""},
		{"a malformed tag among them", map[string]string{"Accept-Language": "de-DE, english"}, flightgraph.PointOfSale{}, flightgraph.ECodeBadFormat, "Accept-Language"},
		{"the original's tags only", map[string]string{"Accept-Language": "es-419, en"}, flightgraph.PointOfSale{}, flightgraph.ECodeBadFormat, "Accept-Language"},
		{"a weight of NaN", map[string]string{"Accept-Language": "en;q=NaN"}, flightgraph.PointOfSale{}, flightgraph.ECodeBadFormat, "Accept-Language"},
		{"a weight in hex", map[string]string{"Accept-Language": "en;q=0x1p-1"}, flightgraph.PointOfSale{}, flightgraph.ECodeBadFormat, "Accept-Language"},
		{"a signed weight", map[string]string{"Accept-Language": "en;q=+0.5"}, flightgraph.PointOfSale{}, flightgraph.ECodeBadFormat, "Accept-Language"},
		{"a weight over 1", map[string]string{"Accept-Language": "en;q=1.001"}, flightgraph.PointOfSale{}, flightgraph.ECodeBadFormat, "Accept-Language"},
		{"a bad weight", map[string]string{"Accept-Language": "en;q=2"}, flightgraph.PointOfSale{}, flightgraph.ECodeBadFormat, "Accept-Language"},
		{"a malformed market", map[string]string{"svc-travel-country": "NLD"}, flightgraph.PointOfSale{}, flightgraph.ECodeBadFormat, "svc-travel-country"},
		{"an unknown market", map[string]string{"svc-travel-country": "US"}, flightgraph.PointOfSale{}, flightgraph.ECodeInvalidParameter, "svc-travel-country"},
		{"an unknown host", map[string]string{"svc-travel-host": "ZZ"}, flightgraph.PointOfSale{}, flightgraph.ECodeInvalidParameter, "svc-travel-host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range c.headers {
				h.Set(k, v)
			}
			got, err := flightgraph.PointOfSaleOf(context.Background(), h, markets{}, true)
			if c.code != "" {
				var fe *flightgraph.Error
				if flightgraph.ErrorCode(err) != c.code || !errors.As(err, &fe) || fe.Parameter != c.header {
					t.Fatalf("%v, want %s naming %s", err, c.code, c.header)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("%+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	// Not strict (GraphQL): any language range browsers send; a list of languages the service
	// does not speak is English, a malformed one still refused.
	lenient := func(al string) (flightgraph.PointOfSale, error) {
		return flightgraph.PointOfSaleOf(context.Background(), http.Header{"Accept-Language": {al}}, markets{}, false)
	}
	for al, want := range map[string]flightgraph.PointOfSale{
		"de-DE,de;q=0.9": {Language: flightgraph.LanguageEN},
		"es-419, zh-Hant-TW;q=0.9, fil;q=0.8, nl-BE;q=0.7, en,": {Language: flightgraph.LanguageEN},
		"fil, fr-Latn-FR;q=0.5":                                 {Language: flightgraph.LanguageFR, Country: "FR"},
	} {
		if pos, err := lenient(al); err != nil || pos.Language != want.Language || pos.Country != want.Country {
			t.Errorf("not strict, %q: %+v %v; want %+v", al, pos, err, want)
		}
	}
	if _, err := lenient("en;q=2"); flightgraph.ErrorCode(err) != flightgraph.ECodeBadFormat {
		t.Errorf("not strict, a bad weight: %v; want %s", err, flightgraph.ECodeBadFormat)
	}
	if pos := flightgraph.PointOfSaleFromContext(context.Background()); pos != flightgraph.DefaultPointOfSale {
		t.Errorf("a context without one: %+v, want the default", pos)
	}
}
