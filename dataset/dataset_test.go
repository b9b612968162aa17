package dataset_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/dataset"
)

var today = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

func MustMaterialiser(t testing.TB, opts dataset.Options) (*flightgraph.Dataset, *dataset.Materialiser) {
	t.Helper()
	ref, err := dataset.Generate(opts, today)
	if err != nil {
		t.Fatal(err)
	}
	zones := map[string]string{}
	for _, a := range ref.Airports {
		zones[a.Code] = a.TimeZone
	}
	m, err := dataset.NewMaterialiser(opts.Seed, ref.Schedule, zones)
	if err != nil {
		t.Fatal(err)
	}
	return ref, m
}

func TestDeterministic(t *testing.T) {
	opts := dataset.Options{Seed: 7, Scale: 1}
	r1, m1 := MustMaterialiser(t, opts)
	r2, m2 := MustMaterialiser(t, opts)
	if !reflect.DeepEqual(r1, r2) {
		t.Fatal("same seed gave different reference data")
	}
	f1, l1, _ := m1.Flights("2026-11-23")
	f2, l2, _ := m2.Flights("2026-11-23")
	if !reflect.DeepEqual(f1, f2) || !reflect.DeepEqual(l1, l2) {
		t.Fatal("same seed gave different flights")
	}
	_, m3 := MustMaterialiser(t, dataset.Options{Seed: 8, Scale: 1})
	f3, l3, _ := m3.Flights("2026-11-23")
	if reflect.DeepEqual(l1, l3) && reflect.DeepEqual(f1, f3) {
		t.Fatal("another seed gave the same flights")
	}
}

func TestNetworkShape(t *testing.T) {
	ref, m := MustMaterialiser(t, dataset.Options{Seed: dataset.DefaultSeed, Scale: 1})
	total, multi := 0, 0
	statuses := map[flightgraph.FlightStatus]int{}
	for _, d := range dataset.Window(today) {
		flights, legs, err := m.Flights(d)
		if err != nil {
			t.Fatal(err)
		}
		total += len(flights)
		if len(legs) > len(flights) {
			multi++
		}
		for _, l := range legs {
			statuses[l.StatusAt(today)]++
			if !l.ScheduledArr.After(l.ScheduledDep) {
				t.Fatalf("leg %s/%d arrives before it leaves", l.FlightID, l.Sequence)
			}
		}
	}
	t.Logf("airports %d, schedule legs %d, routes %d, flights in window %d, statuses %v", len(ref.Airports), len(ref.Schedule), len(ref.Routes), total, statuses)
	if total < 100_000 {
		t.Errorf("window holds %d flights, want at least 100,000 so that scale 10 gives a million", total)
	}
	if multi == 0 {
		t.Error("no multi-leg flights")
	}
	for _, s := range []flightgraph.FlightStatus{flightgraph.StatusScheduled, flightgraph.StatusOnTime, flightgraph.StatusArrived, flightgraph.StatusCancelled, flightgraph.StatusDelayed, flightgraph.StatusDeparted, flightgraph.StatusBoarding} {
		if statuses[s] == 0 {
			t.Errorf("no leg is %s at %v", s, today)
		}
	}
}
