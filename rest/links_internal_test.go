package rest

import (
	"net/url"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
)

// TestSearchLink: the hand-built link is what url.Values.Encode gives for the same parameters
// (the form it replaced for its cost), escapes included.
func TestSearchLink(t *testing.T) {
	for _, c := range []struct {
		q       flightgraph.OfferSearch
		display string
	}{
		{q: flightgraph.OfferSearch{Passengers: []flightgraph.Passenger{{ID: 1, Type: "adt"}}, Connections: []flightgraph.RequestedConnection{{DepartureDate: "2026-12-01", Origin: "AMS", Destination: "BCN"}}}},
		{q: flightgraph.OfferSearch{Cabins: []flightgraph.CabinClass{"ECONOMY", "BUSINESS"}, Passengers: []flightgraph.Passenger{{ID: 1, Type: "ADT"}, {ID: 2, Type: "chd"}},
			Connections: []flightgraph.RequestedConnection{{DepartureDate: "2026-12-01", Origin: "PAR", Destination: "NYC"}}, Currency: "USD"}, display: "ALL_PAX"},
		{q: flightgraph.OfferSearch{Connections: []flightgraph.RequestedConnection{{DepartureDate: "2026-12-01", Origin: "A&B", Destination: "c d"}}, Currency: "€"}, display: "x=y"},
	} {
		v := url.Values{}
		conn := c.q.Connections[0]
		v.Set("origin", conn.Origin)
		v.Set("destination", conn.Destination)
		v.Set("departureDate", conn.DepartureDate)
		var types, cabins []string
		for _, p := range c.q.Passengers {
			types = append(types, strings.ToUpper(p.Type))
		}
		v.Set("passengers", strings.Join(types, ","))
		for _, k := range c.q.Cabins {
			cabins = append(cabins, string(k))
		}
		if len(cabins) == 0 {
			cabins = []string{"ALL"}
		}
		v.Set("commercialCabins", strings.Join(cabins, ","))
		if c.q.Currency != "" {
			v.Set("currency", c.q.Currency)
		}
		if c.display != "" {
			v.Set("displayPriceContent", c.display)
		}
		want := "/opendata/offers/v1/available-offers?" + v.Encode()
		if got := searchLink(&c.q, c.display); got != want {
			t.Errorf("searchLink:\n got %s\nwant %s", got, want)
		}
	}
}
