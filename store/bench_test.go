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
