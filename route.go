package flightgraph

import "context"

// Route is a scheduled connection of the network: a carrier flying between two airports.
type Route struct {
	CarrierCode     string `db:"carrier"`
	OriginCode      string `db:"origin"`
	DestinationCode string `db:"destination"`
	DistanceKm      int    `db:"distance_km"`
	BlockMinutes    int    `db:"block_minutes"`
	Haul            string `db:"haul"`
	WeeklyFlights   int    `db:"weekly_flights"`
}

// RouteFilter selects routes from and to places.
type RouteFilter struct {
	Origin      *Place
	Destination *Place
	Carrier     string
	Page
}

// Validate checks the filter; it returns ECodeBadFormat.
func (f *RouteFilter) Validate() error {
	if err := normalizeCarrier(&f.Carrier); err != nil {
		return err
	}
	return f.Page.Validate()
}

// Carrier is an airline of the network.
type Carrier struct {
	Code    string `db:"code"`
	Name    string `db:"name"`
	HubCode string `db:"hub"`
}

// NetworkStore reads the schedule's network.
type NetworkStore interface {
	// FindRoutes returns one page of routes ordered by origin, destination and carrier, and the
	// number of all matches.
	FindRoutes(ctx context.Context, f RouteFilter) ([]*Route, int, error)
	// CarriersByCodes returns one carrier per code, in order, nil where none exists.
	CarriersByCodes(ctx context.Context, codes []string) ([]*Carrier, error)
	// Carriers returns every carrier ordered by code.
	Carriers(ctx context.Context) ([]*Carrier, error)
	// FindSchedule returns one page of schedule legs ordered by carrier, number and sequence, and
	// the number of all matches.
	FindSchedule(ctx context.Context, f ScheduleFilter) ([]*ScheduledLeg, int, error)
	// RoutesByIDs returns one route per id (Route.ID), in order, nil where none exists.
	RoutesByIDs(ctx context.Context, ids []string) ([]*Route, error)
	// AllRoutes returns every route, for reference data.
	AllRoutes(ctx context.Context) ([]*Route, error)
}

// ID names the route: carrier, origin and destination, e.g. XX-AMS-JFK.
func (r *Route) ID() string { return r.CarrierCode + "-" + r.OriginCode + "-" + r.DestinationCode }

// IsEntity marks Route as an Apollo Federation entity.
func (Route) IsEntity() {}

// IsEntity marks Carrier as an Apollo Federation entity.
func (Carrier) IsEntity() {}
