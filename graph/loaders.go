package graph

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/flightgraph/flightgraph"
)

// DefaultLoaderWait is how long a loader collects keys before it queries. It is short because it
// adds to the latency of every level of a query; gqlgen resolves siblings concurrently, so the
// keys of one level arrive well within it.
const DefaultLoaderWait = 250 * time.Microsecond

// Stores are what the loaders read.
type Stores struct {
	Flights  flightgraph.FlightStore
	Places   flightgraph.PlaceStore
	Aircraft flightgraph.AircraftStore
	Network  flightgraph.NetworkStore
}

// Loaders batch and cache the parent-to-child lookups of one request. They are created per
// request: a global loader would serve one caller's cached rows to another and never forget.
type Loaders struct {
	Flight    *dataloader.Loader[string, *flightgraph.Flight]
	Legs      *dataloader.Loader[string, []*flightgraph.FlightLeg]
	Airport   *dataloader.Loader[string, *flightgraph.Airport]
	City      *dataloader.Loader[string, *flightgraph.City]
	Country   *dataloader.Loader[string, *flightgraph.Country]
	CityPorts *dataloader.Loader[string, []*flightgraph.Airport]
	Carrier   *dataloader.Loader[string, *flightgraph.Carrier]
	Aircraft  *dataloader.Loader[string, *flightgraph.Aircraft]
	Cabins    *dataloader.Loader[string, []*flightgraph.Cabin]
	Amenities *dataloader.Loader[string, []*flightgraph.Amenity]
}

// NewLoaders returns fresh loaders over st that wait wait for keys.
func NewLoaders(st Stores, wait time.Duration) *Loaders {
	return &Loaders{
		Flight:    newLoader(st.Flights.FlightsByIDs, wait),
		Legs:      newLoader(st.Flights.LegsByFlightIDs, wait),
		Airport:   newLoader(st.Places.AirportsByCodes, wait),
		City:      newLoader(st.Places.CitiesByCodes, wait),
		Country:   newLoader(st.Places.CountriesByCodes, wait),
		CityPorts: newLoader(st.Places.AirportsByCities, wait),
		Carrier:   newLoader(st.Network.CarriersByCodes, wait),
		Aircraft:  newLoader(st.Aircraft.AircraftByConfigurations, wait),
		Cabins:    newLoader(st.Aircraft.CabinsByConfigurations, wait),
		Amenities: newLoader(st.Aircraft.AmenitiesByProducts, wait),
	}
}

// newLoader adapts a batch-first store lookup, which returns one value per key in key order, to
// a dataloader batch function.
func newLoader[V any](fetch func(context.Context, []string) ([]V, error), wait time.Duration) *dataloader.Loader[string, V] {
	batch := func(ctx context.Context, keys []string) []*dataloader.Result[V] {
		out := make([]*dataloader.Result[V], len(keys))
		vals, err := fetch(ctx, keys)
		if err == nil && len(vals) != len(keys) {
			err = fmt.Errorf("graph: batch returned %d values for %d keys", len(vals), len(keys))
		}
		for i := range keys {
			if err != nil {
				out[i] = &dataloader.Result[V]{Error: err}
			} else {
				out[i] = &dataloader.Result[V]{Data: vals[i]}
			}
		}
		return out
	}
	return dataloader.NewBatchedLoader(batch, dataloader.WithWait[string, V](wait))
}

type loadersKey struct{}

// WithLoaders returns ctx carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// For returns the request's loaders. It panics when the middleware did not run: that is a wiring
// bug, not a runtime condition.
func For(ctx context.Context) *Loaders {
	return ctx.Value(loadersKey{}).(*Loaders)
}

// Middleware gives each request its own loaders.
func Middleware(st Stores, wait time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(WithLoaders(r.Context(), NewLoaders(st, wait))))
	})
}

// Load runs one load through a loader: the value of key or the batch's error.
func Load[V any](ctx context.Context, l *dataloader.Loader[string, V], key string) (V, error) {
	return l.Load(ctx, key)()
}
