package server_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestPortalPageRoundTrips: the SQL round trips of each page for the demo accounts (one
// application, one key, six subscriptions), with loaders that wait long enough to batch whatever
// the scheduler does. A page reads the signed-in account with its own query (a second operation
// for the header authenticated the session twice), and a page of subscriptions reads its plans,
// usage and limit requests in one batch each: My Account cost 27 before both. My Account and the
// operators' desk read the access requests (for partner and internal APIs) with one query more,
// and the desk reads the accounts of however many pending requests in one more.
func TestPortalPageRoundTrips(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Server.LoaderWait = 20 * time.Millisecond })
	dev, op := newVisitor(t, s.URL, nil), newVisitor(t, s.URL, nil)
	dev.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	op.signIn(s.demo.OperatorEmail, s.demo.OperatorPassword)
	for _, c := range []struct {
		v    *visitor
		path string
		max  int64
	}{{dev, "/portal", 11}, {dev, "/portal/try", 5}, {dev, "/portal/apis", 3}, {op, "/portal/operators", 9}} {
		status, _ := c.v.get(c.path)
		n := s.queries.Load()
		t.Logf("%s: %d round trips", c.path, n)
		if status != 200 || n > c.max {
			t.Errorf("%s: %d, %d round trips, want 200 and at most %d", c.path, status, n, c.max)
		}
	}
	ask := `mutation($api: String!) { requestApiAccess(input: {api: $api, description: "d", expectedUse: "u"}) { id } }`
	for i := range 4 {
		s.signUp(t, fmt.Sprintf("asks-%d@example.com", i), developerPassword, "Asker").do(t, ask, map[string]any{"api": "metasearch"}, nil)
	}
	status, body := op.get("/portal/operators")
	n := s.queries.Load()
	t.Logf("/portal/operators with 4 pending access requests: %d round trips", n)
	if status != 200 || strings.Count(body, "asks-") < 4 || n > 10 {
		t.Errorf("/portal/operators with 4 pending access requests: %d, %d round trips, want 200, the 4 requesters and at most 10", status, n)
	}
}
