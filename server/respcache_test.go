package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// withResponseCache turns the response cache on (--response-cache-mb) with bytes, or off with 0.
func withResponseCache(bytes int) func(*serverConfig) {
	return func(c *serverConfig) { c.Config.ResponseCacheBytes = bytes }
}

// answer is one answer of the response cache's tests: its status, headers and, for GraphQL, its
// data apart from the per-call extensions.
type answer struct {
	code   int
	header http.Header
	body   string
	data   string
}

func (a answer) kept() bool { return a.header.Get("Age") != "" }

// graphQLAnswer posts query with vars and headers.
func (s *testServer) graphQLAnswer(t *testing.T, headers map[string]string, query string, vars map[string]any) answer {
	t.Helper()
	code, h, body := s.call(t, http.MethodPost, "/graphql", headers, jsonBody(query, vars))
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("%d %.300s", code, body)
	}
	return answer{code: code, header: h, body: body, data: string(r.Data)}
}

// restAnswer gets path with headers.
func (s *testServer) restAnswer(t *testing.T, headers map[string]string, path string) answer {
	t.Helper()
	code, h, body := s.call(t, http.MethodGet, path, headers, "")
	return answer{code: code, header: h, body: body, data: body}
}

// settle starts the status hub of srv, as Server.Run does, and waits until it has read its
// position: until then the response cache keeps nothing, since it could not tell what changed.
func settle(t testing.TB, srv *server.Server) {
	t.Helper()
	srv.Live.Hub.Start(t.Context())
	for deadline := time.Now().Add(5 * time.Second); !srv.Live.Hub.Settled(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the status hub did not start in 5 s")
		}
	}
}

// amsFlight is the first flight leaving AMS today.
func amsFlight(t *testing.T, db *store.DB) string {
	t.Helper()
	fs, _, err := store.NewFlightStore(db).FindFlights(context.Background(), flightgraph.FlightFilter{Origin: storetest.Place(t, db, "AMS"),
		Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 1}})
	if err != nil || len(fs) == 0 {
		t.Fatal(err)
	}
	return fs[0].ID
}

// TestResponseCache, with the response cache and the flight cache on (as served by default),
// both off, and the flight cache alone: a departures board by POST and GET GraphQL and a flight's
// status on REST are answered again from memory (Age, the same data, the route's public
// Cache-Control) when the response cache is on and never when off; an internal caller's answer
// is not a developer's, nor one point of sale's another's; a change written through the
// operations API shows in the very next read of the board and of the flight, whichever cache is
// on.
func TestResponseCache(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		for _, mode := range []struct {
			name        string
			on, flights bool
		}{{"on", true, true}, {"off", false, false}, {"flights only", false, true}} {
			on := mode.on
			t.Run(mode.name, func(t *testing.T) {
				db := storetest.Seeded(t, dialect, os.Getenv)
				s := newServerWith(t, db, func(c *serverConfig) {
					c.Config.ResponseCacheBytes = map[bool]int{true: 8 << 20}[on]
					c.Config.FlightCacheBytes = map[bool]int{true: 1 << 20}[mode.flights]
				})
				dev := map[string]string{"api-key": s.demo.APIKey}
				id := amsFlight(t, db)
				statusPath := "/opendata/flightstatus/" + id
				vars := departuresVars(20)
				check := func(what string, a answer, wantKept bool) {
					t.Helper()
					if a.code != http.StatusOK || a.kept() != (wantKept && on) {
						t.Fatalf("%s: %d, Age %q (want kept: %v): %.200s", what, a.code, a.header.Get("Age"), wantKept && on, a.body)
					}
					if cc := a.header.Get("Cache-Control"); cc != "public, max-age=15" {
						t.Errorf("%s: Cache-Control %q", what, cc)
					}
				}

				settle(t, s.srv)
				board := s.graphQLAnswer(t, dev, departures, vars)
				check("the board", board, false)
				again := s.graphQLAnswer(t, dev, departures, vars)
				check("the board again", again, true)
				if again.data != board.data {
					t.Errorf("the kept board differs:\n%.300s\n%.300s", again.data, board.data)
				}
				var cost struct{ Extensions map[string]json.RawMessage }
				if json.Unmarshal([]byte(again.body), &cost); cost.Extensions["cost"] == nil || cost.Extensions["limits"] == nil || cost.Extensions["cacheControl"] == nil {
					t.Errorf("the kept board's extensions: %s", again.body)
				}
				code, h, body := s.getGraphQL(t, departures, vars, dev)
				check("the board by GET", answer{code: code, header: h, body: body}, true)

				status := s.restAnswer(t, dev, statusPath)
				check("the flight's status", status, false)
				statusAgain := s.restAnswer(t, dev, statusPath)
				check("the flight's status again", statusAgain, true)
				if statusAgain.body != status.body || statusAgain.header.Get("Content-Type") != status.header.Get("Content-Type") {
					t.Errorf("the kept status differs:\n%.300s\n%.300s", statusAgain.body, status.body)
				}

				// An internal caller's answers are its audience's alone, and a point of sale's its own.
				op := s.oaOperator(t)
				ops := staffOps(t, s, op)
				s.signUp(t, "ida@staff.example", developerPassword, "Ida")
				op.setRole(t, "ida@staff.example", "STAFF")
				staff := map[string]string{"api-key": s.signIn(t, "ida@staff.example", developerPassword).newKey(t, op, "flightstatus").id}
				five := departuresVars(5)
				check("staff's board", s.graphQLAnswer(t, staff, departures, five), false)
				check("staff's board again", s.graphQLAnswer(t, staff, departures, five), true)
				check("a developer's board after staff's", s.graphQLAnswer(t, dev, departures, five), false)
				check("staff's status", s.restAnswer(t, staff, statusPath), false)
				check("staff's status again", s.restAnswer(t, staff, statusPath), true)
				nl := map[string]string{"api-key": s.demo.APIKey, "svc-travel-country": "NL"}
				check("the board sold in NL", s.graphQLAnswer(t, nl, departures, vars), false)
				check("the board sold in NL again", s.graphQLAnswer(t, nl, departures, vars), true)
				check("the status sold in NL", s.restAnswer(t, nl, statusPath), false)

				// A change shows in the next read.
				for i, delay := range []int{37, 52} {
					record(t, s, ops, map[string]any{"flightId": id, "kind": "DELAY", "delayMinutes": delay})
					changed := s.graphQLAnswer(t, dev, departures, vars)
					check(fmt.Sprintf("the board after change %d", i), changed, false)
					if changed.data == board.data {
						t.Fatalf("change %d: the board shows the flight as it was", i)
					}
					board = changed
					// An answer made before the hub has read the change is not kept: once it has,
					// the board is kept again.
					settle(t, s.srv)
					s.graphQLAnswer(t, dev, departures, vars)
					check(fmt.Sprintf("the board after change %d again", i), s.graphQLAnswer(t, dev, departures, vars), true)
					changedStatus := s.restAnswer(t, dev, statusPath)
					check(fmt.Sprintf("the status after change %d", i), changedStatus, false)
					if changedStatus.body == status.body {
						t.Fatalf("change %d: the status shows the flight as it was", i)
					}
					status = changedStatus
				}
				for name, c := range map[string]struct {
					cache *live.Cache
					on    bool
				}{"response cache": {s.srv.Answers, on}, "flight cache": {s.srv.Flights, mode.flights}} {
					if !c.on {
						if c.cache != nil {
							t.Errorf("the %s is on with 0 bytes", name)
						}
						continue
					}
					st := c.cache.Stats()
					t.Logf("%s: %+v", name, st)
					if st.Hits == 0 || st.Entries == 0 || st.Bytes > st.MaxBytes {
						t.Errorf("%s: stats %+v", name, st)
					}
				}
			})
		}
	})
}

// TestResponseCacheChargesEveryCall: an answer from memory is a call like any other: counted
// against the plan's second, and refused with 429 past it, kept or not.
func TestResponseCacheChargesEveryCall(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	s := newServerWith(t, db, func(c *serverConfig) {
		c.DefaultPlans = true
		c.Config.ResponseCacheBytes = 8 << 20
	})
	dev := map[string]string{"api-key": s.demo.APIKey}
	path := "/opendata/flightstatus/" + amsFlight(t, db)
	settle(t, s.srv)
	perSecond := flightgraph.DefaultLimits.PerSecond
	for i := range perSecond {
		if a := s.restAnswer(t, dev, path); a.code != http.StatusOK || a.kept() != (i > 0) {
			t.Fatalf("call %d: %d, Age %q", i+1, a.code, a.header.Get("Age"))
		}
	}
	// The clock is frozen: the second never ends.
	a := s.restAnswer(t, dev, path)
	if a.code != http.StatusTooManyRequests || a.kept() || a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("call %d in the second: %d, Age %q, Cache-Control %q", perSecond+1, a.code, a.header.Get("Age"), a.header.Get("Cache-Control"))
	}
	code, _, body := s.call(t, http.MethodPost, "/graphql", dev, jsonBody(departures, departuresVars(20)))
	if code != http.StatusTooManyRequests {
		t.Fatalf("a GraphQL call past the second: %d %.200s", code, body)
	}
}

// TestResponseCacheAcrossReplicas: two replicas on one PostgreSQL database, each with its
// response cache and flight cache, as served by default; a change written through A shows in A's
// next read of the board and the flight, and in B's within a second, though B had them kept (the
// answers and, under them, the flights).
func TestResponseCacheAcrossReplicas(t *testing.T) {
	storetest.DatabaseURL(t)
	dsn := seededDSN(t)
	name := fmt.Sprintf("fgtest-cache-%d", time.Now().UnixNano()%1e6)
	on := func(c *serverConfig) {
		c.Config.ResponseCacheBytes = 8 << 20
		c.Config.FlightCacheBytes = 1 << 20
	}
	a, b := startReplicaPair(t, dsn, name, 0, on)
	ops := staffOps(t, a.testServer, a.oaOperator(t))
	id := amsFlight(t, a.db)
	settle(t, a.srv)
	settle(t, b.srv)
	dev := map[string]string{"api-key": a.demo.APIKey}
	path := "/opendata/flightstatus/" + id
	vars := departuresVars(20)
	read := func(r *feedReplica) (answer, answer) {
		t.Helper()
		return r.graphQLAnswer(t, dev, departures, vars), r.restAnswer(t, dev, path)
	}
	var worst time.Duration
	for i := range 5 {
		// Both replicas keep the board and the status (the status clock's own events may evict
		// them meanwhile: read again until both come from memory).
		for _, r := range []*feedReplica{a, b} {
			for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if board, status := read(r); board.kept() && status.kept() {
					break
				} else if time.Now().After(deadline) {
					t.Fatalf("replica %s, round %d: nothing kept in 2 s (Age %q, %q)", r.name, i, board.header.Get("Age"), status.header.Get("Age"))
				}
			}
		}
		boardB, statusB := read(b)
		start := time.Now()
		record(t, a.testServer, ops, map[string]any{"flightId": id, "kind": "DELAY", "delayMinutes": 20 + i})
		if board, status := read(a); board.kept() || status.kept() || board.data == boardB.data || status.body == statusB.body {
			t.Fatalf("round %d: replica A's next read shows the flight as it was (Age %q, %q; board changed %v, status changed %v)", i,
				board.header.Get("Age"), status.header.Get("Age"), board.data != boardB.data, status.body != statusB.body)
		}
		for {
			board, status := read(b)
			if board.data != boardB.data && status.body != statusB.body {
				break
			}
			if time.Since(start) > time.Second {
				t.Fatalf("round %d: replica B still shows the flight as it was after %v (Age %q, %q)", i, time.Since(start), board.header.Get("Age"), status.header.Get("Age"))
			}
			time.Sleep(5 * time.Millisecond)
		}
		worst = max(worst, time.Since(start))
	}
	if st := b.srv.Flights.Stats(); st.Hits == 0 || st.Entries == 0 {
		t.Errorf("replica B's flight cache served nothing: %+v", st)
	}
	t.Logf("a change written through A showed on B within %v at worst", worst)
}

// TestResponseCacheKeepsNoPrivateAnswer: an answer whose policy is private (a market's offers
// reference data) is computed on every call, while a public one (airports) is kept.
func TestResponseCacheKeepsNoPrivateAnswer(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), withResponseCache(8<<20))
	settle(t, s.srv)
	for _, c := range []struct {
		headers             map[string]string
		query, cacheControl string
		kept                bool
	}{
		{oaBearer(s.bearerToken(t, "")), `{ offersReferenceData { market } }`, "private, max-age=86400", false},
		{map[string]string{"api-key": s.demo.APIKey}, `{ airports(first: 3) { totalCount edges { node { code } } } }`, "public, max-age=86400", true},
	} {
		s.graphQLAnswer(t, c.headers, c.query, nil)
		a := s.graphQLAnswer(t, c.headers, c.query, nil)
		if a.kept() != c.kept || a.header.Get("Cache-Control") != c.cacheControl {
			t.Errorf("%s again: Age %q (want kept: %v), Cache-Control %q", c.query, a.header.Get("Age"), c.kept, a.header.Get("Cache-Control"))
		}
	}
}

// TestResponseCacheKeysTheRequestAsSent: a kept REST answer names the request it answers
// (its HAL self link is the request's URI as sent); a request spelled otherwise (its query
// parameters in another order, a value percent-encoded, a pair the query's parsing drops) is
// another request, answered with its own link, not with the first's: else a caller chose what
// everyone's kept answer said.
func TestResponseCacheKeysTheRequestAsSent(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	s := newServerWith(t, db, withResponseCache(8<<20))
	settle(t, s.srv)
	dev := map[string]string{"api-key": s.demo.APIKey}
	base := "/opendata/flightstatus/" + amsFlight(t, db)
	first := s.restAnswer(t, dev, base+"?a=1&b=2")
	if first.code != http.StatusOK {
		t.Fatalf("%d %.300s", first.code, first.body)
	}
	if again := s.restAnswer(t, dev, base+"?a=1&b=2"); !again.kept() {
		t.Fatalf("the same request again is not kept: Age %q", again.header.Get("Age"))
	}
	for _, q := range []string{"?b=2&a=1", "?a=%31&b=2", "?a=1&b=2&x;y=z"} {
		a := s.restAnswer(t, dev, base+q)
		if a.code != http.StatusOK {
			t.Fatalf("%s: %d %.300s", q, a.code, a.body)
		}
		var doc struct {
			Links struct{ Self struct{ Href string } } `json:"_links"`
		}
		if err := json.Unmarshal([]byte(a.body), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Links.Self.Href != base+q {
			t.Errorf("%s: self link %q (kept: %v)", q, doc.Links.Self.Href, a.kept())
		}
	}
}

// TestResponseCacheKeepsQuotesForTheirSecond: a heavy search's answer (all deals by POST,
// destinations inspiration by GET) is made once a second for everyone of an audience and point of
// sale who asks the same: the same bytes again within the second (Age 0), counted as a call each;
// another body, point of sale or audience is another answer (an internal caller's is not a
// developer's); the next second makes its own, quoted
// then (the offers' ids name their second). Off, every call makes its own.
func TestResponseCacheKeepsQuotesForTheirSecond(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[on], func(t *testing.T) {
			var clock atomic.Int64
			clock.Store(storetest.Now.UnixNano())
			s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
				c.Config.ResponseCacheBytes = map[bool]int{true: 8 << 20}[on]
				c.Config.Now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
			})
			settle(t, s.srv)
			bearer := oaBearer(s.bearerToken(t, ""))
			bearer["Content-Type"] = "application/json"
			week := storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout) + "/" + storetest.Now.AddDate(0, 0, 7).Format(flightgraph.DateLayout)
			deals := func(headers map[string]string, limit int) answer {
				t.Helper()
				code, h, body := s.call(t, http.MethodPost, "/opendata/offers/v1/best-fare-offers/all-deals", headers,
					jsonOf(map[string]any{"origin": map[string]any{"airport": map[string]any{"code": "BCN"}}, "dateInterval": week, "limit": limit}))
				if code != http.StatusOK {
					t.Fatalf("all deals: %d %.300s", code, body)
				}
				return answer{code: code, header: h, body: body}
			}
			check := func(what string, a answer, wantKept bool) {
				t.Helper()
				if a.kept() != (wantKept && on) || a.kept() && a.header.Get("Age") != "0" {
					t.Errorf("%s: Age %q (want kept: %v)", what, a.header.Get("Age"), wantKept && on)
				}
			}
			used := func(a answer) int {
				n, err := strconv.Atoi(a.header.Get("X-Packagekey-Quota-Current"))
				if err != nil {
					t.Fatalf("X-Packagekey-Quota-Current %q", a.header.Get("X-Packagekey-Quota-Current"))
				}
				return n
			}

			first := deals(bearer, 50)
			check("all deals", first, false)
			clock.Add(int64(900 * time.Millisecond)) // the same second still
			again := deals(bearer, 50)
			check("all deals again in the second", again, true)
			if again.body != first.body {
				t.Errorf("the kept deals differ:\n%.300s\n%.300s", again.body, first.body)
			}
			if used(again) != used(first)+5 {
				t.Errorf("the kept answer was not charged its 5 calls: day count %d after %d", used(again), used(first))
			}
			check("all deals of another limit", deals(bearer, 49), false)
			nl := maps.Clone(bearer)
			nl["svc-travel-country"] = "NL"
			check("all deals sold in NL", deals(nl, 50), false)
			// The body's headers as the handler reads them, every value: a gzipped search is kept
			// under its coding, and the same bytes sent as "gzip" and "br" (refused: two codings)
			// or with a second Content-Type (the handler reads the first) are requests of their
			// own, answered on their own, not with the kept answer.
			var zipped bytes.Buffer
			zw := gzip.NewWriter(&zipped)
			zw.Write([]byte(jsonOf(map[string]any{"origin": map[string]any{"airport": map[string]any{"code": "BCN"}}, "dateInterval": week, "limit": 50})))
			zw.Close()
			post := func(header http.Header) *http.Response {
				t.Helper()
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/opendata/offers/v1/best-fare-offers/all-deals", bytes.NewReader(zipped.Bytes()))
				req.Header = header
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				// Read whole: a call whose client went away before its answer was made is not kept.
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp
			}
			gz := http.Header{"Authorization": {bearer["Authorization"]}, "Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}
			post(gz)
			if resp := post(gz); resp.StatusCode != http.StatusOK || (resp.Header.Get("Age") != "") != on {
				t.Errorf("a gzipped search again: %d, Age %q", resp.StatusCode, resp.Header.Get("Age"))
			}
			for h, c := range map[string]struct {
				value string
				want  int
			}{"Content-Encoding": {"br", http.StatusUnsupportedMediaType}, "Content-Type": {"text/plain", http.StatusOK}} {
				header := gz.Clone()
				header.Add(h, c.value)
				if resp := post(header); resp.StatusCode != c.want || resp.Header.Get("Age") != "" {
					t.Errorf("a gzipped search with a second %s: %d, Age %q; want %d, its own answer", h, resp.StatusCode, resp.Header.Get("Age"), c.want)
				}
			}

			clock.Add(int64(100 * time.Millisecond)) // the next second
			next := deals(bearer, 50)
			check("all deals in the next second", next, false)
			if next.body == first.body {
				t.Error("the next second's deals are the last second's: its offers were quoted then")
			}
			check("all deals again in the next second", deals(bearer, 50), true)

			// GraphQL: an operation of heavy fields alone is a quote; one with a light field beside
			// them is the caller's (private), not kept.
			gql := func(query string) answer {
				t.Helper()
				code, h, body := s.call(t, http.MethodPost, "/graphql", bearer, jsonBody(query, map[string]any{"s": map[string]any{"origin": "BCN", "dateInterval": week}}))
				if code != http.StatusOK || !strings.Contains(body, `"data":{`) || strings.Contains(body, `"errors"`) {
					t.Fatalf("%s: %d %.300s", query, code, body)
				}
				return answer{code: code, header: h, body: body}
			}
			quote := `query($s: DealSearchInput!) { allDeals(search: $s, limit: 20) { destination offer { id price { total { amount } } } } }`
			check("GraphQL all deals", gql(quote), false)
			check("GraphQL all deals again in the second", gql(quote), true)
			mixed := `query($s: DealSearchInput!) { allDeals(search: $s, limit: 20) { destination } offersReferenceData { market } }`
			gql(mixed)
			check("GraphQL all deals beside a light field, again", gql(mixed), false)
			clock.Add(int64(time.Second))
			check("GraphQL all deals in the next second", gql(quote), false)

			// A GET quote, and an internal caller's audience.
			path := inspirationPath + "?origin=BCN&limit=20"
			dev := map[string]string{"api-key": s.demo.APIKey}
			check("inspiration", s.restAnswer(t, dev, path), false)
			check("inspiration again", s.restAnswer(t, dev, path), true)
			op := s.oaOperator(t)
			s.signUp(t, "ida@staff.example", developerPassword, "Ida")
			op.setRole(t, "ida@staff.example", "STAFF")
			staff := map[string]string{"api-key": s.signIn(t, "ida@staff.example", developerPassword).newKey(t, op, "inspire").id}
			// (The staff key is on the Default plan: one inspiration fills its second.)
			if a := s.restAnswer(t, staff, path); a.code != http.StatusOK {
				t.Fatalf("staff's inspiration: %d %.300s", a.code, a.body)
			} else {
				check("staff's inspiration after a developer's", a, false)
			}
			check("the developer's inspiration after staff's", s.restAnswer(t, dev, path), true)
		})
	}
}

// TestResponseCacheQuotesTakeNoHeavySlot: a heavy call that a kept quote answers does no heavy
// work, so it takes no heavy-work slot: with every slot busy (another caller's search running), it
// is answered from memory and charged its calls, where a search not kept is shed, uncharged.
//
// The quote is looked up as the call is admitted, and served only if it is still there: a call
// whose second ends while it is admitted (here: inside the limiter) makes its own quote, with its
// slot. A call refused for its credential is not looked up: no point-of-sale read before its 401.
// A call counts one lookup.
func TestResponseCacheQuotesTakeNoHeavySlot(t *testing.T) {
	step := &atomic.Bool{}
	s, _ := oneSlotServer(t, 20*time.Millisecond, secondEnding(step))
	dev := map[string]string{"api-key": s.demo.APIKey}
	kept := inspirationPath + "?origin=BCN&limit=5&month=" + inspirationMonth
	before := s.srv.Answers.Stats()
	if a := s.restAnswer(t, dev, kept); a.code != http.StatusOK || a.kept() {
		t.Fatalf("the first inspiration: %d, Age %q: %.200s", a.code, a.header.Get("Age"), a.body)
	}
	if st := s.srv.Answers.Stats(); st.Misses != before.Misses+1 || st.Hits != before.Hits {
		t.Errorf("one call missed: stats %+v after %+v, want one miss more", st, before)
	}
	step.Store(true)
	if a := s.restAnswer(t, dev, kept); a.code != http.StatusOK || a.kept() {
		t.Fatalf("the inspiration again, its second ending as it is admitted: %d, Age %q; want a quote of its own second", a.code, a.header.Get("Age"))
	}
	s.queries.Store(0)
	anonymous := map[string]string{"svc-travel-country": "NL", "Accept-Language": "nl-NL"}
	if a := s.restAnswer(t, anonymous, kept); a.code != http.StatusUnauthorized || s.queries.Load() != 0 {
		t.Errorf("an anonymous inspiration: %d after %d queries, want 401 after none", a.code, s.queries.Load())
	}
	leave := s.takeHeavySlot(t, "every slot busy")
	defer leave()
	a := s.restAnswer(t, dev, kept)
	if a.code != http.StatusOK || !a.kept() {
		t.Fatalf("the kept inspiration with every slot busy: %d, Age %q: %.200s", a.code, a.header.Get("Age"), a.body)
	}
	if a.header.Get("X-Packagekey-Quota-Current") == "" {
		t.Error("the kept inspiration was not charged (no limit headers)")
	}
	if a := s.restAnswer(t, dev, kept+"&limit=6"); a.code != http.StatusServiceUnavailable {
		t.Errorf("another inspiration with every slot busy: %d, want 503 (shed): %.200s", a.code, a.body)
	}
	if slots, callers := s.srv.Guard.Heavy.Taken(); slots != 1 || callers != 1 {
		t.Errorf("%d slots and %d callers' turns taken, want the other caller's alone", slots, callers)
	}
}

// TestResponseCacheGraphQLQuotesTakeNoHeavySlot: on GraphQL as on REST, a quote (an operation of
// heavy fields alone) that the response cache keeps takes no heavy-work slot: with every slot
// busy it is answered from memory and charged, where a quote not kept is shed 503. A quote whose
// second ends while it is admitted takes its slot before any work: with every slot busy, shed.
func TestResponseCacheGraphQLQuotesTakeNoHeavySlot(t *testing.T) {
	step := &atomic.Bool{}
	s, _ := oneSlotServer(t, 20*time.Millisecond, secondEnding(step))
	dev := map[string]string{"api-key": s.demo.APIKey}
	quote := `query($limit: Int) { destinations(origin: "BCN", month: "` + inspirationMonth + `", limit: $limit) { city { code } } }`
	post := func(limit int) (int, http.Header, string) {
		t.Helper()
		return s.call(t, http.MethodPost, "/graphql", dev, jsonBody(quote, map[string]any{"limit": limit}))
	}
	if code, h, body := post(5); code != http.StatusOK || h.Get("Age") != "" || strings.Contains(body, `"errors"`) {
		t.Fatalf("the first destinations: %d, Age %q: %.300s", code, h.Get("Age"), body)
	}
	leave := s.takeHeavySlot(t, "every slot busy")
	code, h, body := post(5)
	if code != http.StatusOK || h.Get("Age") == "" || strings.Contains(body, `"errors"`) {
		t.Fatalf("the kept destinations with every slot busy: %d, Age %q: %.300s", code, h.Get("Age"), body)
	}
	if !strings.Contains(body, `"cost"`) || h.Get("X-Packagekey-Quota-Current") == "" && h.Get("RateLimit") == "" {
		t.Errorf("the kept destinations were not admitted and charged as ever: %v %.300s", h, body)
	}
	if code, _, body := post(6); code != http.StatusServiceUnavailable || !strings.Contains(body, "This call was not charged") {
		t.Errorf("other destinations with every slot busy: %d, want 503 (shed, not charged): %.300s", code, body)
	}
	// Its second ends inside the limiter: admitted without a slot for a quote that is gone by
	// the time it would be served, it takes its slot first, and there is none.
	step.Store(true)
	// It was charged when admitted: its refusal does not say otherwise.
	if code, h, body := post(5); code != http.StatusServiceUnavailable || h.Get("Age") != "" || !strings.Contains(body, "This call was charged") {
		t.Errorf("the destinations, their second ending as they are admitted, every slot busy: %d, Age %q, want 503 saying it was charged: %.300s", code, h.Get("Age"), body)
	}
	if slots, callers := s.srv.Guard.Heavy.Taken(); slots != 1 || callers != 1 {
		t.Errorf("%d slots and %d callers' turns taken, want the other caller's alone", slots, callers)
	}
	leave()
	if code, h, body := post(5); code != http.StatusOK || h.Get("Age") != "" || strings.Contains(body, `"errors"`) {
		t.Errorf("the destinations in their next second with a slot free: %d, Age %q: %.300s", code, h.Get("Age"), body)
	}
}

// TestResponseCacheQuoteWaitersLookAgain: calls admitted without a slot for a kept quote whose
// second then ends wait for the slot in turn; the first makes the new second's answer, and the
// others, once they hold the slot, answer with it rather than each running the search again.
func TestResponseCacheQuoteWaitersLookAgain(t *testing.T) {
	hold := &atomic.Bool{}
	gate := &atomic.Pointer[chan struct{}]{}
	s, clock := oneSlotServer(t, 5*time.Second, func(l access.Limiter, _ *atomic.Int64) access.Limiter { return heldLimiter{l, hold, gate} })
	dev := map[string]string{"api-key": s.demo.APIKey}
	s.raiseLimits(t)
	quote := `{ destinations(origin: "BCN", month: "` + inspirationMonth + `", limit: 7) { city { code } } }`
	for _, edge := range []struct {
		name string
		call func() (int, http.Header, string)
	}{
		{"REST", func() (int, http.Header, string) {
			return s.call(t, http.MethodGet, inspirationPath+"?origin=BCN&limit=7&month="+inspirationMonth, dev, "")
		}},
		{"GraphQL", func() (int, http.Header, string) {
			return s.call(t, http.MethodPost, "/graphql", dev, jsonBody(quote, nil))
		}},
	} {
		t.Run(edge.name, func(t *testing.T) {
			clock.Add(int64(time.Minute))
			if code, _, body := edge.call(); code != http.StatusOK {
				t.Fatalf("the first call: %d %.300s", code, body)
			}
			open := make(chan struct{})
			gate.Store(&open)
			hold.Store(true)
			type result struct {
				code int
				age  string
			}
			results := make(chan result, 3)
			for range 3 {
				go func() {
					code, h, _ := edge.call()
					results <- result{code, h.Get("Age")}
				}()
			}
			// All three are past the look-up, held in the limiter; then the second ends.
			time.Sleep(300 * time.Millisecond)
			clock.Add(int64(time.Second))
			hold.Store(false)
			close(open)
			made, kept := 0, 0
			for range 3 {
				r := <-results
				switch {
				case r.code != http.StatusOK:
					t.Errorf("a waiting call: %d", r.code)
				case r.age == "":
					made++
				default:
					kept++
				}
			}
			if made != 1 || kept != 2 {
				t.Errorf("%d calls made the new second's answer and %d answered with it, want 1 and 2", made, kept)
			}
		})
	}
}

// heldLimiter holds every decision while hold is set, until the gate's channel is closed.
type heldLimiter struct {
	access.Limiter
	hold *atomic.Bool
	gate *atomic.Pointer[chan struct{}]
}

func (l heldLimiter) Admit(ctx context.Context, sub string, limits flightgraph.Limits, calls int) (access.Decision, error) {
	if l.hold.Load() {
		<-*l.gate.Load()
	}
	return l.Limiter.Admit(ctx, sub, limits, calls)
}

// oneSlotServer is a settled server of one heavy-work slot with the response cache on, whose heavy
// calls wait queueWait for it, on a clock of the test's (returned), with the in-process limiter
// on that clock as limiter wraps it.
func oneSlotServer(t *testing.T, queueWait time.Duration, limiter func(access.Limiter, *atomic.Int64) access.Limiter) (*testServer, *atomic.Int64) {
	clock := &atomic.Int64{}
	clock.Store(storetest.Now.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.Config.ResponseCacheBytes = 8 << 20
		c.HeavyConcurrency = 1
		c.QueueWait = queueWait
		c.Config.Now = now
		c.Config.NewLimiter = func(u access.DayUsage) access.Limiter { return limiter(access.NewMemoryLimiter(u, now), clock) }
	})
	settle(t, s.srv)
	return s, clock
}

// secondEnding is a oneSlotServer's limiter that ends the clock's second inside the next decision
// after step is set, once.
func secondEnding(step *atomic.Bool) func(access.Limiter, *atomic.Int64) access.Limiter {
	return func(l access.Limiter, clock *atomic.Int64) access.Limiter { return secondEndingLimiter{l, clock, step} }
}

// secondEndingLimiter ends the clock's second inside the next decision after step is set, once.
type secondEndingLimiter struct {
	access.Limiter
	clock *atomic.Int64
	step  *atomic.Bool
}

func (l secondEndingLimiter) Admit(ctx context.Context, sub string, limits flightgraph.Limits, calls int) (access.Decision, error) {
	if l.step.CompareAndSwap(true, false) {
		l.clock.Add(int64(time.Second))
	}
	return l.Limiter.Admit(ctx, sub, limits, calls)
}
