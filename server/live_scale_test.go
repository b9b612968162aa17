package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestLiveStatementsPerEvent: the SQL statements one event costs the replica that fans it out
// (the hub's read, the subscribers' flights) do not grow with the number of subscribers: for 1,
// 10 and 100 WebSocket subscribers of one flight, each event costs the same.
func TestLiveStatementsPerEvent(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	var stmts atomic.Int64
	db.OnQuery = func() { stmts.Add(1) }
	s := newServer(t, db)
	s.srv.Live.SetPerAddress(1000)
	ops := staffOps(t, s, s.oaOperator(t))
	fs, _, err := store.NewFlightStore(s.db).FindFlights(context.Background(), flightgraph.FlightFilter{Origin: storetest.Place(t, s.db, "AMS"),
		Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 1}})
	if err != nil || len(fs) == 0 {
		t.Fatal(err)
	}
	id := fs[0].ID
	byID := `subscription($ids: [ID!]!) { flightStatusChanged(ids: $ids) ` + liveSelection + ` }`
	demo := map[string]string{"api-key": s.demo.APIKey}
	var subs []*subscription
	per := map[int]int64{}
	for _, n := range []int{1, 10, 100} {
		for len(subs) < n {
			subs = append(subs, subscribeWS(t, s.URL, demo, byID, map[string]any{"ids": []string{id}}))
		}
		for deadline := time.Now().Add(10 * time.Second); s.srv.Live.Hub.Open() < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d subscriptions open, want %d", s.srv.Live.Hub.Open(), n)
			}
		}
		var counts []int64
		for i := range 5 {
			before := stmts.Load()
			p := record(t, s, ops, map[string]any{"flightId": id, "kind": "DELAY", "delayMinutes": n + i})
			mutation := s.queries.Load()
			for j, sub := range subs {
				if e := sub.next(t, 10*time.Second).event(t); e.Position != p || e.Flight.ID != id {
					t.Fatalf("subscriber %d of %d: %+v, want position %s", j, n, e, p)
				}
			}
			counts = append(counts, stmts.Load()-before-mutation)
		}
		slices.Sort(counts)
		per[n] = counts[len(counts)/2]
		t.Logf("%3d subscribers: SQL statements per event (beyond the mutation's own) over 5 events %v, median %d", n, counts, per[n])
	}
	if per[100] > per[1]+2 {
		t.Errorf("statements per event grow with the subscribers: %s", fmt.Sprint(per))
	}

	// Subscribers of one event with other selections are served what theirs asks: the flight
	// alone, or its legs and airports (the event's reads are shared per selection, not per event).
	bare := subscribeWS(t, s.URL, demo, `subscription($ids: [ID!]!) { flightStatusChanged(ids: $ids) { position flight { id } } }`, map[string]any{"ids": []string{id}})
	deep := subscribeWS(t, s.URL, demo, `subscription($ids: [ID!]!) { flightStatusChanged(ids: $ids) { position flight { id origin { code }
		legs { origin { code } departure { gate } } } } }`, map[string]any{"ids": []string{id}})
	for deadline := time.Now().Add(10 * time.Second); s.srv.Live.Hub.Open() < len(subs)+2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions open", s.srv.Live.Hub.Open())
		}
	}
	p := record(t, s, ops, map[string]any{"flightId": id, "kind": "GATE", "gate": "E9"})
	if m := bare.next(t, 10*time.Second); len(m.Payload.Errors) > 0 || !strings.Contains(string(m.Payload.Data), id) {
		t.Fatalf("the flight alone: %+v", m)
	}
	var got struct {
		FlightStatusChanged struct {
			Position string
			Flight   struct {
				Origin struct{ Code string }
				Legs   []struct {
					Origin    struct{ Code string }
					Departure struct{ Gate string }
				}
			}
		}
	}
	m := deep.next(t, 10*time.Second)
	if err := json.Unmarshal(m.Payload.Data, &got); err != nil || len(m.Payload.Errors) > 0 {
		t.Fatalf("the flight with its legs: %+v %v", m, err)
	}
	if f := got.FlightStatusChanged; f.Position != p || f.Flight.Origin.Code != "AMS" || len(f.Flight.Legs) == 0 || f.Flight.Legs[0].Origin.Code != "AMS" ||
		f.Flight.Legs[0].Departure.Gate != "E9" {
		t.Fatalf("the flight with its legs: %+v, want position %s, from AMS, gate E9", f, p)
	}
}
