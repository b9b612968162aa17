package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// BenchmarkDeparturesQueries runs the SQL of one Departures query (50 flights) without GraphQL.
func BenchmarkDeparturesQueries(b *testing.B) {
	db := storetest.SeededWindow(b, store.SQLite, os.Getenv, dataset.DaysBack, dataset.DaysAhead)
	ctx := context.Background()
	flights, places, aircraft := store.NewFlightStore(db), store.NewPlaceStore(db), store.NewAircraftStore(db)
	f := flightgraph.FlightFilter{Origin: storetest.Place(b, db, "AMS"), Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 50}}
	b.Run("FindFlights", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := flights.FindFlights(ctx, f); err != nil {
				b.Fatal(err)
			}
		}
	})
	page, _, _ := flights.FindFlights(ctx, f)
	ids := make([]string, len(page))
	for i, fl := range page {
		ids[i] = fl.ID
	}
	b.Run("Legs", func(b *testing.B) {
		for b.Loop() {
			if _, err := flights.LegsByFlightIDs(ctx, ids); err != nil {
				b.Fatal(err)
			}
		}
	})
	legs, _ := flights.LegsByFlightIDs(ctx, ids)
	var codes, configs []string
	for _, l := range legs {
		codes = append(codes, l[0].OriginCode, l[0].DestinationCode)
		configs = append(configs, l[0].ConfigurationCode)
	}
	b.Run("Airports", func(b *testing.B) {
		for b.Loop() {
			if _, err := places.AirportsByCodes(ctx, codes); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Aircraft", func(b *testing.B) {
		for b.Loop() {
			if _, err := aircraft.AircraftByConfigurations(ctx, configs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFlightByID reads a flight and its legs, as REST's flight status does: apart
// (FlightsByIDs and LegsByFlightIDs, two statements) and joined (FlightsWithLegs, one), on each
// store.
func BenchmarkFlightByID(b *testing.B) {
	storetest.ForEachDialect(b, func(b *testing.B, dialect string) {
		db := storetest.Seeded(b, dialect, os.Getenv)
		ctx := context.Background()
		flights := store.NewFlightStore(db)
		page, _, err := flights.FindFlights(ctx, flightgraph.FlightFilter{Origin: storetest.Place(b, db, "AMS"), Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 1}})
		if err != nil || len(page) == 0 {
			b.Fatal(err)
		}
		ids := []string{page[0].ID}
		b.Run("apart", func(b *testing.B) {
			for b.Loop() {
				if _, err := flights.FlightsByIDs(ctx, ids); err != nil {
					b.Fatal(err)
				}
				if _, err := flights.LegsByFlightIDs(ctx, ids); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("joined", func(b *testing.B) {
			for b.Loop() {
				if _, _, err := flights.FlightsWithLegs(ctx, ids); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
