package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// board is the front-end team's board: today's departures and the offers to one destination,
// in one document that calls an API-key API (Flight Status) and an OAuth API (Offers).
const board = `query Board($date: Date!, $s: OfferSearchInput!) {
  flights(origin: "AMS", date: $date, first: 5) { edges { node { id status } } }
  availableOffers(search: $s, first: 3) { id price { total { amount currency } } }
}`

// pairedAnswer is what a test reads of an answer to board.
type pairedAnswer struct {
	status int
	header http.Header
	Data   *struct {
		Flights struct {
			Edges []struct{ Node struct{ ID, Status string } }
		}
		AvailableOffers []struct{ ID string }
	}
	Errors []struct {
		Message    string
		Extensions map[string]any
	}
	Extensions struct {
		Cost struct{ Calls map[string]int }
		// Limits are by API: the day's calls left tell what the call was charged.
		Limits map[string]struct{ Day struct{ Remaining int64 } }
	}
}

func (s *testServer) pairedCall(t *testing.T, headers map[string]string, q string) pairedAnswer {
	t.Helper()
	body := jsonOf(map[string]any{"query": q, "variables": map[string]any{
		"date": storetest.Now.Format(flightgraph.DateLayout), "s": gqlSearch("AMS", "LHR", "ADT")}})
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range headers {
		h[k] = v
	}
	code, header, raw := s.call(t, http.MethodPost, "/graphql", h, body)
	a := pairedAnswer{status: code, header: header}
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		t.Fatalf("%d %s: %v", code, raw, err)
	}
	return a
}

func (a pairedAnswer) code() string {
	if len(a.Errors) == 0 {
		return ""
	}
	c, _ := a.Errors[0].Extensions["code"].(string)
	return c
}

// TestPairedCredentials: one operation calls an API-key API and an OAuth API with the api-key
// and an access token of the same application together: each API is admitted with its own
// credential and charged one call, in no more round trips than the two parts alone. A missing
// credential is named with its API; a token of another application, or a credential of the pair
// that fails, refuses the whole request; a REST path of an OAuth API takes the token of a pair.
func TestPairedCredentials(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) { c.SnapshotTTL = time.Hour })
		key := map[string]string{"api-key": s.demo.APIKey}
		token := s.bearerToken(t, "")
		bearer := map[string]string{"Authorization": "Bearer " + token}
		both := map[string]string{"api-key": s.demo.APIKey, "Authorization": "Bearer " + token}

		// The parts alone, to compare round trips with (the offers snapshot is loaded by the first).
		departuresOnly := `query($date: Date!) { flights(origin: "AMS", date: $date, first: 5) { edges { node { id status } } } }`
		offersOnly := `query($s: OfferSearchInput!) { availableOffers(search: $s, first: 3) { id price { total { amount currency } } } }`
		s.pairedCall(t, bearer, offersOnly)
		if a := s.pairedCall(t, key, departuresOnly); a.status != 200 || a.Data == nil || len(a.Data.Flights.Edges) == 0 {
			t.Fatalf("departures alone: %d %+v", a.status, a.Errors)
		}
		parts := s.queries.Load()
		if a := s.pairedCall(t, bearer, offersOnly); a.status != 200 || a.Data == nil || len(a.Data.AvailableOffers) == 0 {
			t.Fatalf("offers alone: %d %+v", a.status, a.Errors)
		}
		parts += s.queries.Load()

		before := s.pairedCall(t, both, board)
		if before.status != 200 || len(before.Errors) > 0 || before.Data == nil {
			t.Fatalf("the board with both credentials: %d %+v", before.status, before.Errors)
		}
		if len(before.Data.Flights.Edges) == 0 || len(before.Data.AvailableOffers) == 0 {
			t.Fatalf("the board lacks a part: %d departures, %d offers", len(before.Data.Flights.Edges), len(before.Data.AvailableOffers))
		}
		t.Logf("round trips: the board %d, its parts alone %d", s.queries.Load(), parts)
		if n := s.queries.Load(); n > parts {
			t.Errorf("the board took %d round trips, its parts alone %d", n, parts)
		}
		if c := before.Extensions.Cost.Calls; c["flightstatus"] != 1 || c["offers"] != 1 || len(c) != 2 {
			t.Errorf("extensions.cost.calls %v, want one call of flightstatus and one of offers", c)
		}
		after := s.pairedCall(t, both, board)
		for _, api := range []string{"flightstatus", "offers"} {
			if d := before.Extensions.Limits[api].Day.Remaining - after.Extensions.Limits[api].Day.Remaining; d != 1 {
				t.Errorf("%s: the day's calls left went down by %d between two boards, want 1", api, d)
			}
		}

		// One credential short: the refusal names the API and the credential it takes, and
		// nothing runs.
		for _, c := range []struct {
			name     string
			headers  map[string]string
			status   int
			code     string
			mentions []string
		}{
			{"api-key alone", key, 403, flightgraph.ECodeWrongCredential, []string{"Offers", "access token", "together"}},
			{"token alone", bearer, 403, flightgraph.ECodeWrongCredential, []string{"Flight Status", "api-key", "together"}},
		} {
			a := s.pairedCall(t, c.headers, board)
			if a.status != c.status || a.code() != c.code || a.Data != nil {
				t.Errorf("%s: %d %s data %v, want %d %s and no data", c.name, a.status, a.code(), a.Data != nil, c.status, c.code)
				continue
			}
			for _, m := range c.mentions {
				if !strings.Contains(a.Errors[0].Message, m) {
					t.Errorf("%s: %q does not mention %q", c.name, a.Errors[0].Message, m)
				}
			}
		}

		// A token of another application with the demo key: refused whole, whatever the
		// operation calls.
		op := s.oaOperator(t)
		other := s.oaSignUp(t, "other-app@example.com").newKey(t, op, "offers")
		grant := s.oaGrant(t, other.oaClient, url.Values{"grant_type": {"client_credentials"}})
		otherToken, _ := grant["access_token"].(string)
		mixed := map[string]string{"api-key": s.demo.APIKey, "Authorization": "Bearer " + otherToken}
		for _, q := range []string{board, departuresOnly} {
			if a := s.pairedCall(t, mixed, q); a.status != 403 || a.code() != flightgraph.ECodeWrongCredential || a.Data != nil {
				t.Errorf("the demo key with another application's token: %d %s, want 403 %s", a.status, a.code(), flightgraph.ECodeWrongCredential)
			}
		}
		// The other application's key with the demo token: the same.
		if a := s.pairedCall(t, map[string]string{"api-key": other.id, "Authorization": "Bearer " + token}, board); a.status != 403 || a.code() != flightgraph.ECodeWrongCredential {
			t.Errorf("another key with the demo token: %d %s", a.status, a.code())
		}
		// A pair whose token is unknown: the token's error, even for a part that needs only the key.
		bad := map[string]string{"api-key": s.demo.APIKey, "Authorization": "Bearer " + token[:len(token)-2] + "xx"}
		for _, q := range []string{board, departuresOnly} {
			if a := s.pairedCall(t, bad, q); a.status != 401 || a.code() != flightgraph.ECodeInvalidToken {
				t.Errorf("a pair with a bad token: %d %s, want 401 %s", a.status, a.code(), flightgraph.ECodeInvalidToken)
			}
		}
		// A token whose scope leaves Offers out does not admit Offers, though the key is approved for it.
		narrow := map[string]string{"api-key": s.demo.APIKey, "Authorization": "Bearer " + s.bearerToken(t, "baggage")}
		if a := s.pairedCall(t, narrow, board); a.status != 403 || a.code() != flightgraph.ECodeNotApproved {
			t.Errorf("a pair whose token does not cover offers: %d %s, want 403 %s", a.status, a.code(), flightgraph.ECodeNotApproved)
		}

		// REST: an OAuth path with both headers is admitted with the token, an API-key path with the key.
		if code, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/available-offers", both, jsonOf(offerSearch("AMS", "LHR", "ADT"))); code != 200 {
			t.Errorf("REST offers with both headers: %d %s", code, firstLine(raw))
		}
		if code, _, raw := s.call(t, http.MethodGet, "/opendata/flightstatus/v1/ping", both, ""); code != 200 {
			t.Errorf("REST flight status ping with both headers: %d %s", code, firstLine(raw))
		}
	})
}
