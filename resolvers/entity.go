package resolvers

import (
	"context"
	"strings"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
)

// A federation router sends the representations of many entities in one request; each entity is
// looked up through the request's loader, so a batch costs one query per type rather than one per
// entity. The keys are checked and normalised as the root fields check them.

// entity loads key through l; a key the check refused or a missing entity is an error.
func entity[V any](ctx context.Context, l *graph.Loader[*V], key string, checked error, missing *flightgraph.Error) (*V, error) {
	if checked != nil {
		return nil, checked
	}
	v, err := graph.Load(ctx, l, key)
	if err == nil && v == nil {
		err = missing
	}
	return v, err
}

func (r *Resolver) entityFlight(ctx context.Context, id string) (*model.Flight, error) {
	fid, err := flightgraph.ParseFlightID("id", id)
	return entity(ctx, graph.For(ctx).Flight, fid.String(), err,
		flightgraph.ParamErrorf(flightgraph.ECodeFlightNotFound, "id", "flight %s is not found", fid))
}

func (r *Resolver) entityAirport(ctx context.Context, code string) (*flightgraph.Airport, error) {
	c, err := flightgraph.NormalizeIATACode("code", code)
	return entity(ctx, graph.For(ctx).Airport, c, err, flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, "code", "airport %s is not found", c))
}

func (r *Resolver) entityCity(ctx context.Context, code string) (*flightgraph.City, error) {
	c, err := flightgraph.NormalizeIATACode("code", code)
	return entity(ctx, graph.For(ctx).City, c, err, flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, "code", "city %s is not found", c))
}

func (r *Resolver) entityCountry(ctx context.Context, code string) (*flightgraph.Country, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	var err error
	if !flightgraph.IsCountryCode(c) {
		err = flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "code", "country must be a two-letter ISO code, got %q", code)
	}
	return entity(ctx, graph.For(ctx).Country, c, err, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "code", "country %s is not served", c))
}

func (r *Resolver) entityAircraft(ctx context.Context, configuration string) (*flightgraph.Aircraft, error) {
	c := strings.ToUpper(strings.TrimSpace(configuration))
	var err error
	if len(c) != 3 {
		err = flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "configuration", "an aircraft configuration is three characters, e.g. 77W, got %q", configuration)
	}
	return entity(ctx, graph.For(ctx).Aircraft, c, err,
		flightgraph.ParamErrorf(flightgraph.ECodeFlightConfiguration, "configuration", "aircraft configuration %s is not found", c))
}
