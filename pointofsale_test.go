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
		{"no language spoken", map[string]string{"Accept-Language": "de"}, flightgraph.PointOfSale{}, flightgraph.ECodeInvalidParameter, "Accept-Language"},
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
			got, err := flightgraph.PointOfSaleOf(context.Background(), h, markets{})
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
	if pos := flightgraph.PointOfSaleFromContext(context.Background()); pos != flightgraph.DefaultPointOfSale {
		t.Errorf("a context without one: %+v, want the default", pos)
	}
}
