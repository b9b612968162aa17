package resolvers

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
)

// A federation router sends the representations of many entities in one request. gqlgen hands
// each type's representations to one resolver (@entityResolver(multi: true)), which reads them
// through the request's loaders in one round trip per hop (graph.LoadAll): the statements of N
// representations of a type are those of a root list of N, whatever the timing. The keys are
// checked and normalised as the root fields check them. Each representation that fails has its
// own error, which gqlgen reports at ["_entities", i], i the representation's index; the others
// resolve. Access was decided before any of this ran, for every representation (graph.Gate).

// batch resolves one type's representations: each key is normalised by check or refused, the
// accepted ones are loaded together by load (a value or an error per key), and a key without a
// value is missing.
func batch[T any](keys []string, check func(string) (string, error), load func([]string) ([]*T, []error), missing func(string) error) ([]*T, error) {
	out, errs := make([]*T, len(keys)), make([]error, len(keys))
	var valid []string
	var at []int
	for i, k := range keys {
		c, err := check(k)
		if err != nil {
			errs[i] = err
			continue
		}
		valid, at = append(valid, c), append(at, i)
	}
	if len(valid) > 0 {
		vals, verrs := load(valid)
		for j, i := range at {
			switch {
			case verrs[j] != nil:
				errs[i] = verrs[j]
			case vals[j] == nil:
				errs[i] = missing(valid[j])
			default:
				out[i] = vals[j]
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return out, graphql.BatchErrorList(errs)
		}
	}
	return out, nil
}

// keysOf returns the key of each representation.
func keysOf[R any](reps []*R, key func(*R) string) []string {
	out := make([]string, len(reps))
	for i, r := range reps {
		out[i] = key(r)
	}
	return out
}

// loadAll loads keys through l in one round trip.
func loadAll[T any](ctx context.Context, l *graph.Loader[*T]) func([]string) ([]*T, []error) {
	return func(keys []string) ([]*T, []error) { return graph.LoadAll(ctx, l, keys) }
}

func checkFlightID(id string) (string, error) {
	fid, err := flightgraph.ParseFlightID("id", id)
	return fid.String(), err
}

func flightMissing(id string) error {
	return flightgraph.ParamErrorf(flightgraph.ECodeFlightNotFound, "id", "flight %s is not found", id)
}

func checkIATA(code string) (string, error) { return flightgraph.NormalizeIATACode("code", code) }

func checkCountry(code string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	if !flightgraph.IsCountryCode(c) {
		return "", flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "code", "country must be a two-letter ISO code, got %q", code)
	}
	return c, nil
}

func checkConfiguration(configuration string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(configuration))
	if len(c) != 3 {
		return "", flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "configuration", "an aircraft configuration is three characters, e.g. 77W, got %q", configuration)
	}
	return c, nil
}

var (
	registrationFormat = regexp.MustCompile(`^[A-Z0-9]{1,2}-?[A-Z0-9]{1,5}$`)
	carrierFormat      = regexp.MustCompile(`^[A-Z0-9]{2}$`)
	routeFormat        = regexp.MustCompile(`^[A-Z0-9]{2}-[A-Z]{3}-[A-Z]{3}$`)
)

func checkRegistration(registration string) (string, error) {
	r := strings.ToUpper(strings.TrimSpace(registration))
	if !registrationFormat.MatchString(r) {
		return "", flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "registration", "an aircraft registration is a prefix and marks, e.g. PH-HAB, got %q", registration)
	}
	return r, nil
}

func checkCarrier(code string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	if !carrierFormat.MatchString(c) {
		return "", flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "code", "a carrier code is two characters, e.g. XX, got %q", code)
	}
	return c, nil
}

func checkRoute(id string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(id))
	if !routeFormat.MatchString(c) {
		return "", flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "id", "a route id is carrier, origin and destination, e.g. XX-AMS-JFK, got %q", id)
	}
	return c, nil
}

// checkLeg normalises a leg id: a flight id, a slash and the leg's sequence.
func checkLeg(id string) (string, error) {
	fid, seq, ok := strings.Cut(strings.TrimSpace(id), "/")
	n, err := strconv.Atoi(seq)
	if !ok || err != nil || n < 1 || n > 9 {
		return "", flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "id", "a flight leg id is a flight id, a slash and the leg's sequence, e.g. 20261122+XX+1234/1, got %q", id)
	}
	f, err := checkFlightID(fid)
	if err != nil {
		return "", err
	}
	return model.LegID(f, n), nil
}

func (r *Resolver) entityFlights(ctx context.Context, ids []string) ([]*model.Flight, error) {
	return batch(ids, checkFlightID, loadAll(ctx, graph.For(ctx).Flight), flightMissing)
}

// entityLegs reads the legs' flights' legs in one round trip and picks each one's.
func (r *Resolver) entityLegs(ctx context.Context, ids []string) ([]*model.FlightLeg, error) {
	return batch(ids, checkLeg, func(ids []string) ([]*model.FlightLeg, []error) {
		flights := make([]string, len(ids))
		seqs := make([]int, len(ids))
		for i, id := range ids {
			f, seq, _ := strings.Cut(id, "/")
			flights[i] = f
			seqs[i], _ = strconv.Atoi(seq)
		}
		lists, errs := graph.For(ctx).FlightLegs(ctx, flights)
		out := make([]*model.FlightLeg, len(ids))
		for i, legs := range lists {
			for _, g := range legs {
				if g.Sequence == seqs[i] {
					out[i] = g
				}
			}
		}
		return out, errs
	}, func(id string) error {
		return flightgraph.ParamErrorf(flightgraph.ECodeFlightNotFound, "id", "flight leg %s is not found", id)
	})
}

func (r *Resolver) entityAirports(ctx context.Context, codes []string) ([]*flightgraph.Airport, error) {
	return batch(codes, checkIATA, loadAll(ctx, graph.For(ctx).Airport), func(c string) error {
		return flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, "code", "airport %s is not found", c)
	})
}

func (r *Resolver) entityCities(ctx context.Context, codes []string) ([]*flightgraph.City, error) {
	return batch(codes, checkIATA, loadAll(ctx, graph.For(ctx).City), func(c string) error {
		return flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, "code", "city %s is not found", c)
	})
}

func (r *Resolver) entityCountries(ctx context.Context, codes []string) ([]*flightgraph.Country, error) {
	return batch(codes, checkCountry, loadAll(ctx, graph.For(ctx).Country), func(c string) error {
		return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "code", "country %s is not served", c)
	})
}

func (r *Resolver) entityCarriers(ctx context.Context, codes []string) ([]*flightgraph.Carrier, error) {
	return batch(codes, checkCarrier, loadAll(ctx, graph.For(ctx).Carrier), func(c string) error {
		return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "code", "carrier %s is not found", c)
	})
}

func (r *Resolver) entityRoutes(ctx context.Context, ids []string) ([]*flightgraph.Route, error) {
	return batch(ids, checkRoute, loadAll(ctx, graph.For(ctx).Route), func(id string) error {
		return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "id", "route %s is not flown", id)
	})
}

func (r *Resolver) entityConfigurations(ctx context.Context, codes []string) ([]*flightgraph.Aircraft, error) {
	return batch(codes, checkConfiguration, loadAll(ctx, graph.For(ctx).Aircraft), func(c string) error {
		return flightgraph.ParamErrorf(flightgraph.ECodeFlightConfiguration, "configuration", "aircraft configuration %s is not found", c)
	})
}

// entityAirframes names each registration's configuration from the fleet's register
// (Resolver.Airframes) and reads the configurations in one round trip.
func (r *Resolver) entityAirframes(ctx context.Context, registrations []string) ([]*model.Airframe, error) {
	return batch(registrations, checkRegistration, func(regs []string) ([]*model.Airframe, []error) {
		configs := r.Airframes(regs)
		var known []string
		for _, c := range configs {
			if c != "" {
				known = append(known, c)
			}
		}
		vals, errs := graph.LoadAll(ctx, graph.For(ctx).Aircraft, known)
		out, outErr := make([]*flightgraph.Airframe, len(regs)), make([]error, len(regs))
		for i, c := range configs {
			if c == "" {
				continue
			}
			if vals[0] != nil {
				out[i] = &flightgraph.Airframe{Registration: regs[i], Aircraft: vals[0]}
			}
			outErr[i], vals, errs = errs[0], vals[1:], errs[1:]
		}
		return graph.For(ctx).Airframes(ctx, out), outErr
	}, func(reg string) error {
		return flightgraph.ParamErrorf(flightgraph.ECodeFlightConfiguration, "registration", "aircraft %s is not in the fleet", reg)
	})
}
