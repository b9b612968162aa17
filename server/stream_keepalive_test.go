package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestIdleSSESubscriptionPings: a graphql-sse subscription with nothing to say sends its client
// a ping comment every keep-alive interval, as the WebSocket transport and the REST stream do, so
// that proxies keep it open and a client that is gone is found by a write.
func TestIdleSSESubscriptionPings(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	s := newServerWith(t, db, func(c *serverConfig) { c.Server.StreamKeepAlive = 100 * time.Millisecond })
	body, _ := json.Marshal(map[string]any{"query": `subscription($ids: [ID!]!) { flightStatusChanged(ids: $ids) ` + liveSelection + ` }`,
		"variables": map[string]any{"ids": []string{amsFlight(t, db)}}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("api-key", s.demo.APIKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	start := time.Now()
	pings := 0
	for sc := bufio.NewScanner(resp.Body); pings < 3 && sc.Scan(); {
		switch line := sc.Text(); {
		case line == ": ping":
			pings++
		case strings.HasPrefix(line, "data:"):
			t.Fatalf("an event on a stream nothing happened on: %s", line)
		}
	}
	if pings < 3 {
		t.Fatalf("%d pings in %v of an idle subscription with a keep-alive of 100 ms", pings, time.Since(start))
	}
	t.Logf("3 pings in %v", time.Since(start))
}
