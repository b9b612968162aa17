package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestStreamHostileShapes attacks the live status streams with shapes no client needs:
//
//   - a subscription by ids with more flights than the REST stream takes (100): over WebSocket
//     and graphql-sse it is refused INSP_400.001, as REST's is, instead of making the hub match
//     every event against some 13,000 ids (the body bound's worth) under its lock;
//   - a graphql-sse POST whose body is over the GraphQL body bound: refused REQ_413.000, as the
//     HTTP transport refuses it, where gqlgen's SSE transport read any size into memory;
//   - a graphql-sse POST whose body is not JSON: refused REQ_400.000 in the catalogue's shape,
//     where gqlgen's answered its own error and logged the body (a sign-in's password with it).
func TestStreamHostileShapes(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	demo := map[string]string{"api-key": s.demo.APIKey}
	date := strings.ReplaceAll(storetest.Now.Format(flightgraph.DateLayout), "-", "")
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s+XX+%d", date, 1000+i)
	}
	byID := `subscription($ids: [ID!]!) { flightStatusChanged(ids: $ids) { position } }`
	if m := subscribeWS(t, s.URL, demo, byID, map[string]any{"ids": ids}).next(t, 3*time.Second); m.code() != flightgraph.ECodeInvalidParameter {
		t.Errorf("101 ids over WebSocket: %+v, want %s", m, flightgraph.ECodeInvalidParameter)
	}
	if sub, _ := subscribeSSE(t, s.URL, demo, "", byID, map[string]any{"ids": ids}); sub.next(t, 3*time.Second).code() != flightgraph.ECodeInvalidParameter {
		t.Errorf("101 ids over graphql-sse were not refused %s", flightgraph.ECodeInvalidParameter)
	}
	escaped := strings.ReplaceAll(strings.Join(ids, ","), "+", "%2B")
	if sub, status := subscribeSSE(t, s.URL, demo, "/opendata/flightstatus/events?flightIds="+escaped, "", nil); status != http.StatusBadRequest ||
		sub.next(t, time.Second).code() != flightgraph.ECodeInvalidParameter {
		t.Errorf("101 ids on the REST stream: %d", status)
	}
	// 100 are taken.
	subscribeWS(t, s.URL, demo, byID, map[string]any{"ids": ids[:100]})
	for deadline := time.Now().Add(3 * time.Second); s.srv.Live.Hub.Open() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("100 ids: the subscription did not open")
		}
	}

	sse := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("api-key", s.demo.APIKey)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var r gqlResponse
		json.Unmarshal(b, &r)
		code := ""
		if len(r.Errors) > 0 {
			code, _ = r.Errors[0].Extensions["code"].(string)
		}
		return resp.StatusCode, code
	}
	pad := strings.Repeat("x", 300<<10)
	if status, code := sse(`{"query":"{ __typename }","variables":{"pad":"` + pad + `"}}`); status != http.StatusRequestEntityTooLarge || code != flightgraph.ECodeBodyTooLarge {
		t.Errorf("a 300 KiB graphql-sse body: %d %s, want 413 %s", status, code, flightgraph.ECodeBodyTooLarge)
	}
	if status, code := sse(`{"query":"mutation { x }", "password": "hunter2"`); status != http.StatusBadRequest || code != flightgraph.ECodeBadBody {
		t.Errorf("a graphql-sse body cut short: %d %s, want 400 %s", status, code, flightgraph.ECodeBadBody)
	}
}
