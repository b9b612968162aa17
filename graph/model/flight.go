package model

import (
	"fmt"
	"strconv"

	"github.com/flightgraph/flightgraph"
)

// The flight subgraph reads a flight's legs and a leg's airports in line, as plain methods, where
// a resolver would cost a goroutine per parent: the request's loaders fetch each hop for a whole
// level at once (graph/prefetch.go) and hand GraphQL these, the domain's rows with what was fetched
// for them. The domain's Flight and FlightLeg carry no loading state; a hop that was not fetched
// is an error, never a silent null.

// Flight is a flight as the flight subgraph serves it: made by graph.Loaders.Flights, with its
// legs.
type Flight struct {
	*flightgraph.Flight
	legs   hop[[]*FlightLeg]
	status hop[flightgraph.FlightStatus]
}

// NewFlight returns f with its legs, or the error of loading them.
func NewFlight(f *flightgraph.Flight, legs []*FlightLeg, err error) *Flight {
	return &Flight{Flight: f, legs: hop[[]*FlightLeg]{legs, err, true}}
}

// SetStatus attaches the flight's status, which the loaders worked out from its legs and the
// clock when they served it, or the error of loading its legs.
func (f *Flight) SetStatus(s flightgraph.FlightStatus, err error) {
	f.status = hop[flightgraph.FlightStatus]{s, err, true}
}

// Status returns the status worked out for the flight.
func (f *Flight) Status() (flightgraph.FlightStatus, error) {
	return f.status.get("the status", "", f.ID)
}

// Legs returns the legs fetched for the flight.
func (f *Flight) Legs() ([]*FlightLeg, error) { return f.legs.get("the legs", "", f.ID) }

// FlightLeg is a leg as the flight subgraph serves it, with its airports and its aircraft.
type FlightLeg struct {
	*flightgraph.FlightLeg
	origin, destination hop[*flightgraph.Airport]
	aircraft            hop[*Airframe]
	configuration       hop[*flightgraph.Aircraft]
}

// NewFlightLeg returns l with its airports, or the errors of loading them. A leg made without it
// ({FlightLeg: l}) has none fetched.
func NewFlightLeg(l *flightgraph.FlightLeg, origin, destination *flightgraph.Airport, originErr, destinationErr error) *FlightLeg {
	return &FlightLeg{FlightLeg: l, origin: hop[*flightgraph.Airport]{origin, originErr, true},
		destination: hop[*flightgraph.Airport]{destination, destinationErr, true}}
}

// SetAircraft attaches the leg's configuration as the loaders fetched it (nil where unknown), or
// the error of loading it, and the airframe that flies it in that configuration (nil while the
// leg has no registration).
func (l *FlightLeg) SetAircraft(configuration *flightgraph.Aircraft, airframe *Airframe, err error) {
	l.configuration = hop[*flightgraph.Aircraft]{configuration, err, true}
	l.aircraft = hop[*Airframe]{airframe, err, true}
}

// Origin returns the origin airport fetched for the leg.
func (l *FlightLeg) Origin() (*flightgraph.Airport, error) {
	return l.origin.get("the origin airport", l.OriginCode, l.FlightID)
}

// Destination returns the destination airport fetched for the leg.
func (l *FlightLeg) Destination() (*flightgraph.Airport, error) {
	return l.destination.get("the destination airport", l.DestinationCode, l.FlightID)
}

// Aircraft returns the airframe that flies the leg, in the leg's configuration; none while the
// leg has no airframe assigned.
func (l *FlightLeg) Aircraft() (*Airframe, error) {
	if l.Registration == "" {
		return nil, nil
	}
	return l.aircraft.get("the aircraft", l.Registration, l.FlightID)
}

// AircraftConfiguration returns the configuration fetched for the leg.
func (l *FlightLeg) AircraftConfiguration() (*flightgraph.Aircraft, error) {
	return l.configuration.get("the configuration", l.ConfigurationCode, l.FlightID)
}

// hop is a hop's value as the loaders fetched it, with the error of fetching it.
type hop[T any] struct {
	v       T
	err     error
	fetched bool
}

// get returns the hop's value. The error's text is made only when the hop was not fetched: a
// served field costs no allocation here.
func (h *hop[T]) get(what, key, of string) (T, error) {
	if !h.fetched {
		var zero T
		if key != "" {
			what += " " + key
		}
		return zero, fmt.Errorf("graph: %s of %s was not fetched", what, of)
	}
	return h.v, h.err
}

// ID names the leg: its flight's id and its sequence, e.g. 20261122+XX+1234/1.
func (l *FlightLeg) ID() string { return LegID(l.FlightID, l.Sequence) }

// IsEntity marks FlightLeg as an Apollo Federation entity.
func (FlightLeg) IsEntity() {}

// LegID is the id of the leg of flight flightID with sequence seq.
func LegID(flightID string, seq int) string { return flightID + "/" + strconv.Itoa(seq) }
