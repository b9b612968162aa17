package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/flightgraph/flightgraph"
)

// DatasetStore implements flightgraph.DatasetStore.
type DatasetStore struct{ db *DB }

var _ flightgraph.DatasetStore = (*DatasetStore)(nil)

// NewDatasetStore returns the data set writer of db.
func NewDatasetStore(db *DB) *DatasetStore { return &DatasetStore{db: db} }

// DatasetState implements flightgraph.DatasetStore.
func (s *DatasetStore) DatasetState(ctx context.Context) (*flightgraph.DatasetState, error) {
	var st flightgraph.DatasetState
	err := s.db.get(ctx, s.db.db, &st, `SELECT seed, scale FROM dataset_state WHERE id = 1`)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return &st, err
}

// referenceTables lists the reference tables children first, the order to empty them in.
var referenceTables = []string{"flight_legs", "flights", "materialised_dates", "routes", "schedule_legs",
	"amenities", "cabins", "cabin_products", "aircraft", "aircraft_types", "carriers", "airports", "cities", "countries", "dataset_state"}

// LoadDataset implements flightgraph.DatasetStore.
func (s *DatasetStore) LoadDataset(ctx context.Context, ref *flightgraph.Dataset, st flightgraph.DatasetState) error {
	return s.db.inTx(ctx, func(tx *sqlx.Tx) error {
		for _, t := range referenceTables {
			if _, err := s.db.exec(ctx, tx, `DELETE FROM `+t); err != nil {
				return err
			}
		}
		ins := func(table string, cols []string, n int, row func(i int) []any) error {
			rows := make([][]any, n)
			for i := range rows {
				rows[i] = row(i)
			}
			return s.db.insertRows(ctx, tx, table, cols, rows)
		}
		if err := ins("countries", []string{"code", "name", "label_en", "label_fr", "label_nl", "area_code", "currency", "euro", "eu", "schengen"}, len(ref.Countries), func(i int) []any {
			c := ref.Countries[i]
			return []any{c.Code, c.Name, c.LabelEN, c.LabelFR, c.LabelNL, c.AreaCode, c.Currency, c.Euro, c.EU, c.Schengen}
		}); err != nil {
			return err
		}
		if err := ins("cities", []string{"code", "name", "label_en", "label_fr", "label_nl", "country_code"}, len(ref.Cities), func(i int) []any {
			c := ref.Cities[i]
			return []any{c.Code, c.Name, c.LabelEN, c.LabelFR, c.LabelNL, c.CountryCode}
		}); err != nil {
			return err
		}
		if err := ins("airports", []string{"code", "name", "city_code", "country_code", "latitude", "longitude", "time_zone", "hub"}, len(ref.Airports), func(i int) []any {
			a := ref.Airports[i]
			return []any{a.Code, a.Name, a.CityCode, a.CountryCode, a.Latitude, a.Longitude, a.TimeZone, a.Hub}
		}); err != nil {
			return err
		}
		if err := ins("carriers", []string{"code", "name", "hub"}, len(ref.Carriers), func(i int) []any {
			c := ref.Carriers[i]
			return []any{c.Code, c.Name, c.HubCode}
		}); err != nil {
			return err
		}
		if err := ins("aircraft_types", []string{"code", "icao", "name", "haul"}, len(ref.AircraftTypes), func(i int) []any {
			t := ref.AircraftTypes[i]
			return []any{t.Code, t.ICAO, t.Name, t.Haul}
		}); err != nil {
			return err
		}
		if err := ins("aircraft", []string{"code", "type_code", "carrier", "name", "wifi", "layout"}, len(ref.Aircraft), func(i int) []any {
			a := ref.Aircraft[i]
			return []any{a.Configuration, a.TypeCode, a.CarrierCode, a.Name, a.Wifi, a.Layout}
		}); err != nil {
			return err
		}
		products := map[string]string{}
		var productRows [][]any
		for _, c := range ref.Cabins {
			if _, ok := products[c.Product]; !ok {
				products[c.Product] = string(c.CabinClass)
				productRows = append(productRows, []any{c.Product, string(c.CabinClass)})
			}
		}
		if err := s.db.insertRows(ctx, tx, "cabin_products", []string{"code", "class"}, productRows); err != nil {
			return err
		}
		if err := ins("cabins", []string{"configuration", "class", "position", "seats", "product"}, len(ref.Cabins), func(i int) []any {
			c := ref.Cabins[i]
			return []any{c.Configuration, string(c.CabinClass), i, c.Seats, c.Product}
		}); err != nil {
			return err
		}
		if err := ins("amenities", []string{"product", "position", "category", "feature", "name", "description", "weight"}, len(ref.Amenities), func(i int) []any {
			a := ref.Amenities[i]
			return []any{a.Product, i, string(a.Category), a.Feature, a.Name, a.Description, a.Weight}
		}); err != nil {
			return err
		}
		if err := ins("schedule_legs", []string{"carrier", "number", "seq", "period_from", "period_to", "days", "origin", "destination",
			"departure_local", "arrival_local", "departure_day_offset", "arrival_day_offset", "configuration", "service_type", "distance_km", "block_minutes"},
			len(ref.Schedule), func(i int) []any {
				l := ref.Schedule[i]
				return []any{l.CarrierCode, l.FlightNumber, l.Sequence, l.PeriodFrom, l.PeriodTo, l.Days, l.OriginCode, l.DestinationCode,
					l.DepartureLocal, l.ArrivalLocal, l.DepartureDayShift, l.ArrivalDayOffset, l.Configuration, l.ServiceType, l.DistanceKm, l.BlockMinutes}
			}); err != nil {
			return err
		}
		if err := ins("routes", []string{"carrier", "origin", "destination", "distance_km", "block_minutes", "haul", "weekly_flights"}, len(ref.Routes), func(i int) []any {
			r := ref.Routes[i]
			return []any{r.CarrierCode, r.OriginCode, r.DestinationCode, r.DistanceKm, r.BlockMinutes, r.Haul, r.WeeklyFlights}
		}); err != nil {
			return err
		}
		_, err := s.db.exec(ctx, tx, `INSERT INTO dataset_state (id, seed, scale) VALUES (1, ?, ?)`, st.Seed, st.Scale)
		return err
	})
}

// MaterialisedDates implements flightgraph.DatasetStore.
func (s *DatasetStore) MaterialisedDates(ctx context.Context) ([]string, error) {
	var dates []string
	err := s.db.selectIn(ctx, s.db.db, &dates, `SELECT schedule_date FROM materialised_dates ORDER BY schedule_date`)
	return dates, err
}

// AddFlights implements flightgraph.DatasetStore.
func (s *DatasetStore) AddFlights(ctx context.Context, dates []string, flights []*flightgraph.Flight, legs []*flightgraph.FlightLeg) error {
	return s.db.inTx(ctx, func(tx *sqlx.Tx) error {
		// A flight's estimated times are its legs': the first one's departure, the last one's
		// arrival. They are written for searches by estimate and never read back.
		estDep, estArr := map[string]time.Time{}, map[string]time.Time{}
		for _, l := range legs {
			if t, ok := estDep[l.FlightID]; !ok || l.EstimatedDeparture().Before(t) {
				estDep[l.FlightID] = l.EstimatedDeparture()
			}
			if t, ok := estArr[l.FlightID]; !ok || l.EstimatedArrival().After(t) {
				estArr[l.FlightID] = l.EstimatedArrival()
			}
		}
		frows := make([][]any, len(flights))
		for i, f := range flights {
			dep, arr := cmp.Or(estDep[f.ID], f.DepartureUTC), cmp.Or(estArr[f.ID], f.ArrivalUTC)
			frows[i] = []any{f.ID, f.ScheduleDate, f.CarrierCode, f.FlightNumber, f.Suffix, f.OriginCode, f.DestinationCode, f.DepartureUTC.UTC(), f.ArrivalUTC.UTC(), f.Haul,
				dep.UTC(), arr.UTC(), f.Codeshares, f.OnwardFlightID, f.PreviousFlightID}
		}
		if err := s.db.insertRows(ctx, tx, "flights", []string{"id", "schedule_date", "carrier", "number", "suffix", "origin", "destination", "departure_utc", "arrival_utc", "haul",
			"est_departure_utc", "est_arrival_utc", "codeshares", "onward_flight_id", "previous_flight_id"}, frows); err != nil {
			return err
		}
		lrows := make([][]any, len(legs))
		for i, l := range legs {
			lrows[i] = []any{l.FlightID, l.Sequence, l.OriginCode, l.DestinationCode, l.ScheduledDep.UTC(), l.ScheduledArr.UTC(), l.DepartureOffset, l.ArrivalOffset,
				l.DepartureDelay, l.ArrivalDelay, l.Cancelled, l.DepartureTerminal, l.DepartureGate, l.ArrivalTerminal, l.ArrivalGate, l.ConfigurationCode, l.Registration, l.ServiceType, l.DistanceKm}
		}
		if err := s.db.insertRows(ctx, tx, "flight_legs", []string{"flight_id", "seq", "origin", "destination", "scheduled_departure", "scheduled_arrival",
			"departure_offset", "arrival_offset", "departure_delay", "arrival_delay", "cancelled", "departure_terminal", "departure_gate", "arrival_terminal",
			"arrival_gate", "configuration", "registration", "service_type", "distance_km"}, lrows); err != nil {
			return err
		}
		drows := make([][]any, len(dates))
		for i, d := range dates {
			drows[i] = []any{d}
		}
		return s.db.insertRows(ctx, tx, "materialised_dates", []string{"schedule_date"}, drows)
	})
}

// DropFlightsBefore implements flightgraph.DatasetStore.
func (s *DatasetStore) DropFlightsBefore(ctx context.Context, date string) error {
	return s.db.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := s.db.exec(ctx, tx, `DELETE FROM flight_legs WHERE flight_id IN (SELECT id FROM flights WHERE schedule_date < ?)`, date); err != nil {
			return err
		}
		if _, err := s.db.exec(ctx, tx, `DELETE FROM flights WHERE schedule_date < ?`, date); err != nil {
			return err
		}
		_, err := s.db.exec(ctx, tx, `DELETE FROM materialised_dates WHERE schedule_date < ?`, date)
		return err
	})
}

// Analyze implements flightgraph.DatasetStore. PostgreSQL plans the batch lookups (legs of 50
// flights: flight_id IN (…)) from table statistics, which a bulk load leaves stale until
// autovacuum catches up; without them that lookup was a sequential scan and a sort, 8 ms instead
// of 0.3. It names the tables a load writes, found on the search path, so it costs a few hundred
// milliseconds whatever else the database holds. SQLite plans these lookups from its indexes.
func (s *DatasetStore) Analyze(ctx context.Context) error {
	if s.db.dialect != Postgres {
		return nil
	}
	_, err := s.db.exec(ctx, s.db.db, `ANALYZE countries, cities, airports, carriers, aircraft_types, aircraft,
		cabin_products, cabins, amenities, schedule_legs, routes, flights, flight_legs, materialised_dates`)
	return err
}

// Schedule implements flightgraph.DatasetStore.
func (s *DatasetStore) Schedule(ctx context.Context) ([]*flightgraph.ScheduledLeg, error) {
	var rows []*flightgraph.ScheduledLeg
	err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT carrier, number, seq, period_from, period_to, days, origin, destination,
		departure_local, arrival_local, departure_day_offset, arrival_day_offset, configuration, service_type, distance_km, block_minutes
		FROM schedule_legs ORDER BY carrier, number, seq`)
	return rows, err
}

// AirportZones implements flightgraph.DatasetStore.
func (s *DatasetStore) AirportZones(ctx context.Context) (map[string]string, error) {
	var rows []struct {
		Code string `db:"code"`
		Zone string `db:"time_zone"`
	}
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT code, time_zone FROM airports`); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Code] = r.Zone
	}
	return out, nil
}
