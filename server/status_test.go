package server_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestOneFlightOneStatus asks REST and GraphQL for the status of the same flights at the same
// instants, from two weeks before departure to after arrival: both must name the same status for
// the flight and for each of its legs (a flight two weeks out was ON_TIME on REST and SCHEDULED
// on GraphQL).
func TestOneFlightOneStatus(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.SeededWindow(t, dialect, os.Getenv, 0, 15)
		var clock atomic.Int64
		clock.Store(storetest.Now.UnixNano())
		s := newServerWith(t, db, func(c *serverConfig) {
			c.Now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
		})
		// Flights from Amsterdam and Paris on days 0 to 14 ahead, a few a day.
		var flights []*flightgraph.Flight
		for _, days := range []int{0, 1, 2, 7, 14} {
			date := storetest.Now.AddDate(0, 0, days).Format(flightgraph.DateLayout)
			for _, origin := range []string{"AMS", "CDG"} {
				found, _, err := store.NewFlightStore(db).FindFlights(context.Background(), flightgraph.FlightFilter{
					Origin: storetest.Place(t, db, origin), Date: date, DepartureFrom: storetest.Now.Add(time.Hour), Page: flightgraph.Page{Limit: 3}})
				if err != nil {
					t.Fatal(err)
				}
				flights = append(flights, found...)
			}
		}
		if len(flights) < 20 {
			t.Fatalf("only %d flights to ask about", len(flights))
		}
		key := map[string]string{"api-key": s.demo.APIKey, "Accept": "application/hal+json;charset=utf8"}
		seen := map[string]int{}
		// The clock only moves forward, so the instants of all the flights are visited in order.
		type ask struct {
			at time.Time
			f  *flightgraph.Flight
		}
		var asks []ask
		for _, f := range flights {
			for _, d := range []time.Duration{-15 * 24 * time.Hour, -14 * 24 * time.Hour, -7 * 24 * time.Hour, -25 * time.Hour, -23 * time.Hour,
				-3 * time.Hour, -30 * time.Minute, 10 * time.Minute} {
				if at := f.DepartureUTC.Add(d); !at.Before(storetest.Now) {
					asks = append(asks, ask{at, f})
				}
			}
			asks = append(asks, ask{f.ArrivalUTC.Add(3 * time.Hour), f})
		}
		for i := 1; i < len(asks); i++ { // insertion sort by instant: a few hundred asks
			for j := i; j > 0 && asks[j].at.Before(asks[j-1].at); j-- {
				asks[j], asks[j-1] = asks[j-1], asks[j]
			}
		}
		for _, a := range asks {
			clock.Store(a.at.UnixNano())
			code, _, body := s.call(t, "GET", "/opendata/flightstatus/"+url.PathEscape(a.f.ID), key, "")
			if code != 200 {
				t.Fatalf("REST %s at %s: %d %s", a.f.ID, a.at, code, body)
			}
			var rest struct {
				FlightStatusPublic string
				FlightLegs         []struct{ LegStatusPublic string }
			}
			json.Unmarshal([]byte(body), &rest)
			resp := s.query(t, `query($id: ID!) { flight(id: $id) { status legs { status } } }`, map[string]any{"id": a.f.ID})
			var g struct {
				Flight struct {
					Status string
					Legs   []struct{ Status string }
				}
			}
			if err := json.Unmarshal(resp.Data, &g); err != nil || len(resp.Errors) > 0 {
				t.Fatalf("GraphQL %s: %v %v", a.f.ID, err, resp.Errors)
			}
			until := a.f.DepartureUTC.Sub(a.at).Round(time.Minute)
			if rest.FlightStatusPublic != g.Flight.Status || rest.FlightStatusPublic == "" {
				t.Errorf("%s %v before departure: REST %q, GraphQL %q", a.f.ID, until, rest.FlightStatusPublic, g.Flight.Status)
			}
			if len(rest.FlightLegs) != len(g.Flight.Legs) {
				t.Fatalf("%s: REST %d legs, GraphQL %d", a.f.ID, len(rest.FlightLegs), len(g.Flight.Legs))
			}
			for i, l := range rest.FlightLegs {
				if l.LegStatusPublic != g.Flight.Legs[i].Status {
					t.Errorf("%s leg %d %v before departure: REST %q, GraphQL %q", a.f.ID, i+1, until, l.LegStatusPublic, g.Flight.Legs[i].Status)
				}
			}
			seen[g.Flight.Status]++
		}
		t.Logf("%d flights, %d instants, statuses %v", len(flights), len(asks), seen)
		for _, st := range []flightgraph.FlightStatus{flightgraph.StatusScheduled, flightgraph.StatusOnTime, flightgraph.StatusBoarding,
			flightgraph.StatusDeparted, flightgraph.StatusArrived} {
			if seen[string(st)] == 0 {
				t.Errorf("no flight was %s at any instant asked", st)
			}
		}
	})
}
