package flightgraph

import "context"

// ScheduledLeg is one leg of an SSIM-like schedule record: a flight number flown on the given days
// of the week within a period, at local times.
type ScheduledLeg struct {
	CarrierCode       string `db:"carrier"`
	FlightNumber      int    `db:"number"`
	Sequence          int    `db:"seq"`
	OriginCode        string `db:"origin"`
	DestinationCode   string `db:"destination"`
	DepartureLocal    string `db:"departure_local"` // "HH:MM" at the origin
	ArrivalLocal      string `db:"arrival_local"`   // "HH:MM" at the destination
	ArrivalDayOffset  int    `db:"arrival_day_offset"`
	DepartureDayShift int    `db:"departure_day_offset"` // days after the schedule date this leg leaves
	Days              string `db:"days"`                 // days of operation, "1234567" style (1 = Monday)
	PeriodFrom        string `db:"period_from"`          // YYYY-MM-DD
	PeriodTo          string `db:"period_to"`
	Configuration     string `db:"configuration"`
	ServiceType       string `db:"service_type"`
	DistanceKm        int    `db:"distance_km"`
	BlockMinutes      int    `db:"block_minutes"`
}

// ScheduleFilter selects schedule legs; Date keeps the legs operating on that date.
type ScheduleFilter struct {
	Origin       *Place
	Destination  *Place
	Carrier      string
	FlightNumber int
	Date         string
	Page
}

// Validate checks the filter; it returns ECodeBadFormat or ECodeInvalidParameter.
func (f *ScheduleFilter) Validate() error {
	if err := normalizeCarrier(&f.Carrier); err != nil {
		return err
	}
	if f.FlightNumber < 0 || f.FlightNumber > 9999 {
		return ParamErrorf(ECodeInvalidParameter, "flightNumber", "flight number must be between 1 and 9999")
	}
	if f.Date != "" {
		if _, err := ParseDate("date", f.Date); err != nil {
			return err
		}
	}
	return f.Page.Validate()
}

// Dataset is what the generator makes (dataset.Generate): the places, carriers, fleet, schedule
// and network that flights are materialised from.
type Dataset struct {
	Countries     []*Country
	Cities        []*City
	Airports      []*Airport
	Carriers      []*Carrier
	AircraftTypes []*AircraftType
	Aircraft      []*Aircraft
	Cabins        []*Cabin
	Amenities     []*Amenity
	Schedule      []*ScheduledLeg
	Routes        []*Route
}

// DatasetState records what a store holds of the demo data set.
type DatasetState struct {
	Seed  int64 `db:"seed"`
	Scale int   `db:"scale"`
}

// DatasetStore writes the demo data set. Every method is all-or-nothing.
type DatasetStore interface {
	// DatasetState returns the seed and scale of the loaded data set, or nil if none is loaded.
	DatasetState(ctx context.Context) (*DatasetState, error)
	// LoadDataset replaces all reference data, drops every flight and records state.
	LoadDataset(ctx context.Context, ref *Dataset, state DatasetState) error
	// MaterialisedDates returns the schedule dates whose flights are loaded, ascending.
	MaterialisedDates(ctx context.Context) ([]string, error)
	// AddFlights loads the flights and legs of the given schedule dates and records the dates as
	// materialised, in one transaction.
	AddFlights(ctx context.Context, dates []string, flights []*Flight, legs []*FlightLeg) error
	// Schedule returns the schedule legs ordered by carrier, number and sequence.
	Schedule(ctx context.Context) ([]*ScheduledLeg, error)
	// AirportZones maps every airport code to its IANA time zone.
	AirportZones(ctx context.Context) (map[string]string, error)
	// DropFlightsBefore deletes flights whose schedule date is before date.
	DropFlightsBefore(ctx context.Context, date string) error
	// Analyze refreshes the query planner's statistics after a bulk load; a no-op where the
	// planner needs none.
	Analyze(ctx context.Context) error
}
