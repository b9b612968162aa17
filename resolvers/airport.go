package resolvers

import (
	"context"
	"fmt"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
)

func (r *Resolver) airports(ctx context.Context, f flightgraph.AirportFilter, first *int, after *string) (*model.AirportConnection, error) {
	p, err := page(first, after)
	if err != nil {
		return nil, err
	}
	f.Page = p
	list, total, err := r.Travel.FindAirports(ctx, f)
	if err != nil {
		return nil, err
	}
	graph.For(ctx).PrefetchAirports(ctx, list)
	return &model.AirportConnection{
		TotalCount: total,
		PageInfo:   pageInfo(p, len(list), total),
		Edges: edges(p, list, func(c string, n *flightgraph.Airport) *model.AirportEdge {
			return &model.AirportEdge{Cursor: c, Node: n}
		}),
	}, nil
}

func (r *Resolver) city(ctx context.Context, code string) (*flightgraph.City, error) {
	c, err := graph.Load(ctx, graph.For(ctx).City, code)
	if err == nil && c == nil {
		err = fmt.Errorf("resolvers: city %q is referenced but missing", code)
	}
	return c, err
}

func (r *Resolver) country(ctx context.Context, code string) (*flightgraph.Country, error) {
	c, err := graph.Load(ctx, graph.For(ctx).Country, code)
	if err == nil && c == nil {
		err = fmt.Errorf("resolvers: country %q is referenced but missing", code)
	}
	return c, err
}

// cities is every city, primed into the request's loader so that their countries and airports
// are read a level at a time, not element by element (graph.PrimeAll).
func (r *Resolver) cities(ctx context.Context) ([]*flightgraph.City, error) {
	cities, err := r.Travel.Cities(ctx)
	if err == nil {
		graph.PrimeAll(ctx, graph.For(ctx).City, cities, cityCode)
	}
	return cities, err
}

// carriers is every carrier, primed into the request's loader so that their hubs are read a
// level at a time (graph.PrimeAll).
func (r *Resolver) carriers(ctx context.Context) ([]*flightgraph.Carrier, error) {
	carriers, err := r.Travel.Carriers(ctx)
	if err == nil {
		graph.PrimeAll(ctx, graph.For(ctx).Carrier, carriers, func(c *flightgraph.Carrier) string { return c.Code })
	}
	return carriers, err
}

func cityCode(c *flightgraph.City) string { return c.Code }

// primeCities primes the cities of a root's list of items (city gives an item's, or nil) into the
// request's loader, so that their countries and airports are read a level at a time.
func primeCities[T any](ctx context.Context, items []T, city func(T) *flightgraph.City) {
	cities := make([]*flightgraph.City, 0, len(items))
	for _, it := range items {
		if c := city(it); c != nil {
			cities = append(cities, c)
		}
	}
	graph.PrimeAll(ctx, graph.For(ctx).City, cities, cityCode)
}

// searchContext is a search's context, its places' airports and its connections' hubs primed
// into the request's loader so that their cities and countries are read a level at a time.
func (r *Resolver) searchContext(ctx context.Context, origin, destination, date string) (*flightgraph.SearchContext, error) {
	sc, err := r.Travel.SearchContext(ctx, origin, destination, date)
	if err != nil {
		return nil, err
	}
	var airports []*flightgraph.Airport
	for _, p := range []*flightgraph.LabelledPlace{sc.Origin, sc.Destination} {
		if p != nil && p.Place != nil {
			airports = append(airports, p.Airports...)
		}
	}
	for _, c := range sc.Connections {
		if c.Via != nil {
			airports = append(airports, c.Via)
		}
	}
	graph.PrimeAll(ctx, graph.For(ctx).Airport, airports, func(a *flightgraph.Airport) string { return a.Code })
	return sc, nil
}
