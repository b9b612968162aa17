package store_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// forEachDialect runs fn on SQLite, and on PostgreSQL when FLIGHTGRAPH_TEST_DATABASE_URL is set.
func TestMigrateTwice(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Open(t, dialect, os.Getenv)
		if err := db.Migrate(context.Background()); err != nil {
			t.Fatalf("second migrate: %v", err)
		}
		v, err := db.SchemaVersion(context.Background())
		if err != nil || v < 1 {
			t.Fatalf("schema version %d, %v", v, err)
		}
	})
}

// TestBatchLookupsOfNoKeys: a batch lookup of no keys answers nothing, with no round trip.
func TestBatchLookupsOfNoKeys(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Open(t, dialect, os.Getenv)
		ctx := store.WithQueryCounter(context.Background())
		airports, err1 := store.NewPlaceStore(db).AirportsByCodes(ctx, nil)
		cabins, err2 := store.NewAircraftStore(db).CabinsByConfigurations(ctx, []string{})
		legs, err3 := store.NewFlightStore(db).LegsByFlightIDs(ctx, nil)
		if err := errors.Join(err1, err2, err3); err != nil || len(airports)+len(cabins)+len(legs) != 0 {
			t.Fatalf("lookups of no keys: %v %v %v, %v", airports, cabins, legs, err)
		}
		if n := store.QueryCount(ctx); n != 0 {
			t.Errorf("lookups of no keys cost %d round trips", n)
		}
	})
}

func TestBatchLookupsKeepKeyOrder(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		places := store.NewPlaceStore(db)
		keys := []string{"CDG", "ZZZ", "AMS", "CDG", "JFK"}
		got, err := places.AirportsByCodes(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			switch {
			case k == "ZZZ" && got[i] != nil:
				t.Errorf("key %d (ZZZ): got %v, want nil", i, got[i])
			case k != "ZZZ" && (got[i] == nil || got[i].Code != k):
				t.Errorf("key %d: got %+v, want %s", i, got[i], k)
			}
		}
		if !got[0].Hub || got[4].Hub {
			t.Errorf("hub flags: CDG %v, JFK %v", got[0].Hub, got[4].Hub)
		}

		aircraft := store.NewAircraftStore(db)
		cabins, err := aircraft.CabinsByConfigurations(ctx, []string{"77W", "nope", "E90"})
		if err != nil {
			t.Fatal(err)
		}
		if len(cabins[0]) != 4 || cabins[0][0].CabinClass != flightgraph.CabinFirst || len(cabins[1]) != 0 || cabins[2][0].Configuration != "E90" {
			t.Errorf("cabins out of key order or incomplete: %d %d %d", len(cabins[0]), len(cabins[1]), len(cabins[2]))
		}
		ams, err := aircraft.AmenitiesByProducts(ctx, []string{"SH-ECONOMY", "LH-FIRST"})
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range []string{"SH-ECONOMY", "LH-FIRST"} {
			if len(ams[i]) == 0 {
				t.Fatalf("no amenities for %s", p)
			}
			for j, a := range ams[i] {
				if a.Product != p || (j > 0 && a.Weight > ams[i][j-1].Weight) {
					t.Errorf("%s amenity %d: product %s weight %d out of order", p, j, a.Product, a.Weight)
				}
			}
		}
	})
}

func TestFindFlights(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		flights := store.NewFlightStore(db)
		date := storetest.Now.Format(flightgraph.DateLayout)
		f := flightgraph.FlightFilter{Origin: storetest.Place(t, db, "AMS"), Date: date, Page: flightgraph.Page{Limit: 50}}
		page1, total, err := flights.FindFlights(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page1) != 50 || total < 300 {
			t.Fatalf("got %d flights of %d, want 50 of at least 300", len(page1), total)
		}
		for i, fl := range page1 {
			if fl.OriginCode != "AMS" || fl.ScheduleDate != date {
				t.Errorf("flight %s from %s on %s", fl.ID, fl.OriginCode, fl.ScheduleDate)
			}
			if i > 0 && fl.DepartureUTC.Before(page1[i-1].DepartureUTC) {
				t.Errorf("flight %d leaves before flight %d", i, i-1)
			}
		}
		// The last page and a page past the end keep the total.
		f.Offset = total - 3
		last, total2, err := flights.FindFlights(ctx, f)
		if err != nil || len(last) != 3 || total2 != total {
			t.Fatalf("last page: %d flights of %d (want 3 of %d), %v", len(last), total2, total, err)
		}
		f.Offset = total + 10
		past, total3, err := flights.FindFlights(ctx, f)
		if err != nil || len(past) != 0 || total3 != total {
			t.Fatalf("past the end: %d flights of %d, %v", len(past), total3, err)
		}
		// A city code matches all its airports: PAR is CDG and ORY.
		par, _, err := flights.FindFlights(ctx, flightgraph.FlightFilter{Destination: storetest.Place(t, db, "PAR"), Date: date, Page: flightgraph.Page{Limit: 200}})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, fl := range par {
			seen[fl.DestinationCode] = true
		}
		if !seen["CDG"] || len(seen) > 2 {
			t.Errorf("flights to PAR land at %v", seen)
		}
		// Legs come back grouped per flight, in key order and leg sequence.
		ids := []string{page1[1].ID, "20261122+ZZ+0001", page1[0].ID}
		legs, err := flights.LegsByFlightIDs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(legs[0]) == 0 || legs[0][0].FlightID != ids[0] || len(legs[1]) != 0 || legs[2][0].FlightID != ids[2] {
			t.Fatalf("legs not in key order")
		}
		if _, off := legs[0][0].ScheduledDep.Zone(); off != 0 {
			t.Errorf("times come back with offset %d, want UTC", off)
		}
		if !legs[0][0].ScheduledDep.Equal(page1[1].DepartureUTC) {
			t.Errorf("first leg leaves %v, flight %v", legs[0][0].ScheduledDep, page1[1].DepartureUTC)
		}
	})
}

func TestQueryCounter(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	ctx := store.WithQueryCounter(context.Background())
	places := store.NewPlaceStore(db)
	if _, err := places.AirportsByCodes(ctx, []string{"AMS"}); err != nil {
		t.Fatal(err)
	}
	if _, err := places.CitiesByCodes(ctx, []string{"AMS", "PAR"}); err != nil {
		t.Fatal(err)
	}
	if n := store.QueryCount(ctx); n != 2 {
		t.Fatalf("counted %d round trips, want 2", n)
	}
	if n := store.QueryCount(context.Background()); n != 0 {
		t.Fatalf("a context without a counter counts %d", n)
	}
}

func TestUnavailableDatabase(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Open(t, dialect, os.Getenv)
		db.Close()
		_, err := store.NewPlaceStore(db).AirportsByCodes(context.Background(), []string{"AMS"})
		if code := flightgraph.ErrorCode(err); code != flightgraph.ECodeDatabase {
			t.Fatalf("closed store: code %q (%v), want %s", code, err, flightgraph.ECodeDatabase)
		}
		if err := db.Ping(context.Background()); flightgraph.ErrorCode(err) != flightgraph.ECodeDatabase {
			t.Fatalf("ping of a closed store: %v", err)
		}
	})
}

func TestAddFlightsIsAllOrNothing(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		ds := store.NewDatasetStore(db)
		before, err := ds.MaterialisedDates(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A batch whose second flight repeats an existing id fails on the unique key: nothing of
		// the batch, not even its first flight or its date, may remain.
		dep := storetest.Now.Add(240 * time.Hour)
		fresh := &flightgraph.Flight{ID: "20261202+XX+9001", ScheduleDate: "2026-12-02", CarrierCode: "XX", FlightNumber: 9001,
			OriginCode: "AMS", DestinationCode: "CDG", DepartureUTC: dep, ArrivalUTC: dep.Add(time.Hour), Haul: "SHORT"}
		dup := *fresh
		err = ds.AddFlights(ctx, []string{"2026-12-02"}, []*flightgraph.Flight{fresh, &dup}, nil)
		if err == nil {
			t.Fatal("a duplicate flight id was accepted")
		}
		got, err := store.NewFlightStore(db).FlightsByIDs(ctx, []string{fresh.ID})
		if err != nil || got[0] != nil {
			t.Fatalf("half of a failed batch remains: %v, %v", got[0], err)
		}
		after, err := ds.MaterialisedDates(ctx)
		if err != nil || len(after) != len(before) {
			t.Fatalf("materialised dates changed from %v to %v (%v)", before, after, err)
		}
	})
}

func TestRollMovesTheWindow(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		ds := store.NewDatasetStore(db)
		// Three days later the window of the seeded store (one day either side) moves by three.
		later := storetest.Now.AddDate(0, 0, 3)
		want := dataset.Dates(later, 1, 1)
		st, err := dataset.Roll(ctx, ds, want, quiet)
		if err != nil {
			t.Fatal(err)
		}
		dates, err := ds.MaterialisedDates(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(dates) != len(want) || dates[0] != want[0] || dates[len(dates)-1] != want[len(want)-1] {
			t.Fatalf("window %v..%v (%d dates), want %v..%v", dates[0], dates[len(dates)-1], len(dates), want[0], want[len(want)-1])
		}
		if st.Flights == 0 {
			t.Fatal("roll materialised no flights")
		}
		// The flights of a date rolled in equal those a fresh seed makes: materialising is
		// deterministic.
		ref, err := dataset.Generate(dataset.Options{Seed: dataset.DefaultSeed, Scale: 1}, storetest.Now)
		if err != nil {
			t.Fatal(err)
		}
		zones := map[string]string{}
		for _, a := range ref.Airports {
			zones[a.Code] = a.TimeZone
		}
		m, err := dataset.NewMaterialiser(dataset.DefaultSeed, ref.Schedule, zones)
		if err != nil {
			t.Fatal(err)
		}
		fresh, _, err := m.Flights(want[len(want)-1])
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(fresh))
		for i, f := range fresh {
			ids[i] = f.ID
		}
		stored, err := store.NewFlightStore(db).FlightsByIDs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range stored {
			if f == nil || !f.DepartureUTC.Equal(fresh[i].DepartureUTC) || f.DestinationCode != fresh[i].DestinationCode {
				t.Fatalf("flight %s rolled in differs from a fresh one: %+v vs %+v", ids[i], f, fresh[i])
			}
		}
		// A second roll on the same day changes nothing.
		if st, err := dataset.Roll(ctx, ds, want, quiet); err != nil || st.Flights != 0 {
			t.Fatalf("second roll: %+v, %v", st, err)
		}
	})
}

// TestSeedRefreshesPlannerStatistics: after a load, PostgreSQL's planner knows the tables' sizes.
// Without statistics it planned the legs of a page of flights as a scan of every leg.
func TestSeedRefreshesPlannerStatistics(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		if dialect != store.Postgres {
			if err := store.NewDatasetStore(db).Analyze(context.Background()); err != nil {
				t.Fatalf("Analyze on %s: %v", dialect, err)
			}
			return
		}
		ctx := context.Background()
		var tuples float64
		if err := storetest.SQL(t, db).QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'flight_legs'::regclass`).Scan(&tuples); err != nil {
			t.Fatal(err)
		}
		if tuples <= 0 {
			t.Fatalf("flight_legs: %v tuples in the planner's statistics after the seed", tuples)
		}
	})
}

// TestExistsSpeaksForNoEdge: a write of something that exists already is the store's ErrExists,
// with the driver's error kept for the log; the store does not choose the portal's code for it
// (access does, where it expects one), so that anywhere else it is masked as a defect.
func TestExistsSpeaksForNoEdge(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Open(t, dialect, os.Getenv)
		ctx := context.Background()
		acc := &flightgraph.Account{ID: "acc-1", Email: "ada@example.com", Name: "Ada", Role: flightgraph.RoleDeveloper, PasswordHash: "x", CreatedAt: storetest.Now}
		create := func(a flightgraph.Account) error {
			return store.NewAccessStore(db).InTx(ctx, func(tx flightgraph.AccessTx) error { return tx.CreateAccount(ctx, &a) })
		}
		if err := create(*acc); err != nil {
			t.Fatal(err)
		}
		twin := *acc
		twin.ID = "acc-2"
		err := create(twin)
		if !errors.Is(err, flightgraph.ErrExists) || flightgraph.ErrorCode(err) != flightgraph.ECodeInternal {
			t.Errorf("the same e-mail again: %v (code %s), want ErrExists and no code of its own", err, flightgraph.ErrorCode(err))
		}
	})
}
