package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestHeavyCallsAreShedUncharged: a heavy call (here an inspiration, declared 5 calls) that
// cannot get a heavy-work slot within the queue wait is refused at once, before it is charged:
// 503 WS_503.000 when the replica's slots are busy, 429 LIMIT_429.002 while the key's own heavy
// call runs, both with Retry-After, on both edges. With a slot free it runs and is charged its
// declared calls, which the GraphQL answer tells in extensions.cost.
func TestHeavyCallsAreShedUncharged(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.SnapshotTTL = time.Hour
		c.HeavyConcurrency = 1
		c.QueueWait = 20 * time.Millisecond
	})
	key := map[string]string{"api-key": s.demo.APIKey}
	heavy := inspirationPath + "?origin=BCN&limit=5&month=" + inspirationMonth
	// used is the inspire API's calls of the day, as a light call of it reads them (and counts one).
	used := func() int {
		t.Helper()
		code, h, body := s.call(t, http.MethodGet, "/opendata/inspire/v2/amenities?aircraftConfiguration=E90", key, "")
		n, err := strconv.Atoi(h.Get("X-Packagekey-Quota-Current"))
		if code != http.StatusOK || err != nil {
			t.Fatalf("amenities: %d %s %v", code, body, err)
		}
		return n
	}

	before := used()
	if code, _, body := s.call(t, http.MethodGet, heavy, key, ""); code != http.StatusOK {
		t.Fatalf("an inspiration with a slot free: %d %s", code, body)
	}
	if n := used(); n != before+5+1 {
		t.Errorf("an inspiration was charged %d calls, want 5 (declared in rest/routes.go)", n-before-1)
	}

	refused := func(name string, status int, code string) {
		t.Helper()
		before := used()
		start := time.Now()
		st, h, body := s.call(t, http.MethodGet, heavy, key, "")
		took := time.Since(start)
		var e struct{ Errors []struct{ Code string } }
		json.Unmarshal([]byte(body), &e)
		if st != status || len(e.Errors) == 0 || e.Errors[0].Code != code {
			t.Errorf("%s: REST %d %s, want %d %s", name, st, body, status, code)
		}
		if ra, err := strconv.Atoi(h.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("%s: REST Retry-After %q", name, h.Get("Retry-After"))
		}
		if took > 5*time.Second {
			t.Errorf("%s: REST refused after %s, want at once", name, took)
		}
		resp := s.query(t, `query($m: String) { destinations(origin: "BCN", month: $m, limit: 5) { code } }`, map[string]any{"m": inspirationMonth})
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != code || string(resp.Data) != "null" && len(resp.Data) != 0 {
			t.Errorf("%s: GraphQL %+v %s, want %s and no data", name, resp.Errors, resp.Data, code)
		}
		if n := used(); n != before+1 {
			t.Errorf("%s: the refused calls were charged %d calls", name, n-before-1)
		}
	}

	// Every slot busy (another caller's inspiration): 503, uncharged.
	leave := s.takeHeavySlot(t, "every slot busy")
	refused("every slot busy", http.StatusServiceUnavailable, flightgraph.ECodeShed)
	leave()

	// The key's own heavy call still running: 429, uncharged.
	s.heavySlotsFree(t, "the key's own heavy call running")
	leave, err := s.srv.Guard.Heavy.Enter(context.Background(), s.raiseLimitsKeyID)
	if err != nil {
		t.Fatal(err)
	}
	refused("the key's own heavy call running", http.StatusTooManyRequests, flightgraph.ECodeHeavyTurn)
	leave()
	s.heavySlotsFree(t, "after the refusals")

	// GraphQL: two aliased calendars cost their declared calls each; the answer says so.
	bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
	today, tomorrow := storetest.Now.Format(flightgraph.DateLayout), storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout)
	code, _, raw := s.call(t, http.MethodPost, "/graphql", bearer, jsonBody(`query($s: OfferSearchInput!, $d: String) {
		a: lowestFares(search: $s, dateInterval: $d) { period } b: lowestFares(search: $s, dateInterval: $d, type: OVERALL) { period }
		offersReferenceData { currencies { code } } }`, map[string]any{"s": gqlSearch("AMS", "NYC", "ADT"), "d": today + "/" + tomorrow}))
	var out struct {
		Errors     []any
		Extensions struct {
			Cost struct {
				Requested int
				Bounds    flightgraph.QueryLimits
				Calls     map[string]int
			}
			Limits map[string]struct {
				Second, Day struct{ Limit, Remaining, Reset int64 }
			}
		}
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil || code != http.StatusOK || len(out.Errors) != 0 {
		t.Fatalf("two calendars: %d %s", code, raw)
	}
	ext := out.Extensions
	if got := ext.Cost.Calls["offers"]; got != 4 {
		t.Errorf("two aliased calendars and a light field: extensions.cost.calls.offers = %d, want 4 (%s)", got, raw)
	}
	if ext.Cost.Requested <= 0 || ext.Cost.Bounds.MaxCost < ext.Cost.Requested || ext.Cost.Bounds.MaxDepth == 0 {
		t.Errorf("extensions.cost = %+v: want the operation's cost within the plan's bounds", ext.Cost)
	}
	// The demo key's offers plan (raised for tests): the day's count went up by this call's 4.
	offers, ok := ext.Limits["offers"]
	if !ok || len(ext.Limits) != 1 || offers.Day.Limit != int64(testPlan.PerDay) || offers.Second.Limit != int64(testPlan.PerSecond) ||
		offers.Second.Remaining > offers.Second.Limit-4 || offers.Day.Remaining > offers.Day.Limit-4 || offers.Day.Reset <= 0 {
		t.Errorf("extensions.limits = %+v, want the offers plan's second and day, 4 calls spent at least", ext.Limits)
	}
}

// heavySlotsFree waits (up to 2 s) for every heavy-work slot and turn to be given back: a
// handler gives its slot back as it returns, which may be just after its answer reached the
// client, so a test that checks at once races it.
func (s *testServer) heavySlotsFree(t testing.TB, what string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		slots, callers := s.srv.Guard.Heavy.Taken()
		if slots == 0 && callers == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %d slots, %d turns still taken after 2 s", what, slots, callers)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// takeHeavySlot takes a heavy-work slot for another caller, once the earlier calls have given
// theirs back, and returns the function that gives it back.
func (s *testServer) takeHeavySlot(t testing.TB, what string) (leave func()) {
	t.Helper()
	s.heavySlotsFree(t, what)
	leave, err := s.srv.Guard.Heavy.Enter(context.Background(), "another key")
	if err != nil {
		t.Fatalf("%s: another caller's heavy slot: %v", what, err)
	}
	return leave
}
