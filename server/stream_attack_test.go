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

	"github.com/coder/websocket"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
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
//     where gqlgen's answered its own error and logged the body (a sign-in's password with it);
//   - graphql-sse's GET form (the operation in the query string), read as the HTTP transport
//     reads a GET: 101 ids refused as by POST; no credential refused AUTH_401.000 and a document
//     that does not parse refused, each in an event, nothing subscribed; no query, or variables
//     that are not JSON, refused 400 before any stream; a query string past the header bound
//     (100 KiB) refused 431 by the server before any handler; a mutation refused 405 with Allow:
//     POST before any stream (a GET changes nothing); a query answered as one event, then
//     complete.
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
	if sub, status := subscribeSSE(t, s.URL, demo, "/graphql", byID, map[string]any{"ids": ids}); status != http.StatusOK ||
		sub.next(t, 3*time.Second).code() != flightgraph.ECodeInvalidParameter {
		t.Errorf("101 ids over graphql-sse by GET were not refused %s: %d", flightgraph.ECodeInvalidParameter, status)
	}
	if sub, status := subscribeSSE(t, s.URL, nil, "/graphql", byID, map[string]any{"ids": ids[:1]}); status != http.StatusOK ||
		sub.next(t, 3*time.Second).code() != flightgraph.ECodeMissingCredentials {
		t.Errorf("no credential over graphql-sse by GET was not refused %s: %d", flightgraph.ECodeMissingCredentials, status)
	}
	if sub, status := subscribeSSE(t, s.URL, demo, "/graphql", `subscription { departures(airport: `, nil); status != http.StatusOK ||
		len(sub.next(t, 3*time.Second).Payload.Errors) == 0 {
		t.Errorf("a document cut short over graphql-sse by GET was not refused: %d", status)
	}
	get := func(q string) (*http.Response, gqlResponse, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/graphql?"+q, nil)
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
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			json.Unmarshal(b, &r)
			return resp, r, ""
		}
		_, data, _ := strings.Cut(string(b), "data: ")
		data, _, _ = strings.Cut(data, "\n")
		json.Unmarshal([]byte(data), &r)
		return resp, r, string(b)
	}
	for _, c := range []struct {
		name, query string
		status      int
		code        string
	}{
		{"no query", "variables=%7B%7D", http.StatusBadRequest, flightgraph.ECodeMissingParameter},
		{"variables not JSON", sseGET(byID, nil).Encode() + "&variables=%7Bids", http.StatusBadRequest, flightgraph.ECodeBadBody},
		{"a mutation", sseGET(`mutation { __typename }`, nil).Encode(), http.StatusMethodNotAllowed, flightgraph.ECodeMethodNotAllowed},
		{"a 100 KiB query string", sseGET("{ __typename }", map[string]any{"pad": strings.Repeat("x", 100<<10)}).Encode(), http.StatusRequestHeaderFieldsTooLarge, ""},
	} {
		resp, r, _ := get(c.query)
		if resp.StatusCode != c.status || firstCode(r) != c.code {
			t.Errorf("%s over graphql-sse by GET: %d %s, want %d %s", c.name, resp.StatusCode, firstCode(r), c.status, c.code)
		}
		if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("%s over graphql-sse by GET opened a stream", c.name)
		}
		if c.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s over graphql-sse by GET: Allow %q, want POST", c.name, resp.Header.Get("Allow"))
		}
	}
	if resp, r, stream := get(sseGET(`{ airports(first: 1) { edges { node { code } } } }`, nil).Encode()); resp.StatusCode != http.StatusOK ||
		len(r.Errors) > 0 || !strings.Contains(string(r.Data), "code") || strings.Count(stream, "event: next") != 1 || !strings.HasSuffix(stream, "event: complete\n\n") {
		t.Errorf("a query over graphql-sse by GET: %d %s %+v %q", resp.StatusCode, r.Data, r.Errors, stream)
	}
	if n := s.srv.Live.Hub.Open(); n != 0 {
		t.Errorf("%d subscriptions open after the refusals", n)
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

// TestWebsocketMessageBound: a graphql-transport-ws message is held to the GraphQL body bound
// (256 KiB), as a POST is, where gqlgen's default took 1 MiB: the connection is closed with
// "message too big" and nothing is subscribed.
func TestWebsocketMessageBound(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", &websocket.DialOptions{
		HTTPHeader: http.Header{"Api-Key": {s.demo.APIKey}}, Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_init"}`))
	if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), "connection_ack") {
		t.Fatalf("init: %s %v", b, err)
	}
	big, _ := json.Marshal(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query": `subscription { departures(airport: "AMS") { position } }`, "variables": map[string]any{"pad": strings.Repeat("x", 300<<10)}}})
	c.Write(ctx, websocket.MessageText, big)
	rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
	defer rcancel()
	_, b, err := c.Read(rctx)
	if err == nil {
		t.Fatalf("a 300 KiB message was read: %s", b)
	}
	if st := websocket.CloseStatus(err); st == -1 {
		t.Errorf("the connection was not closed: %v", err)
	} else {
		t.Logf("closed with %v", st)
	}
	if n := s.srv.Live.Hub.Open(); n != 0 {
		t.Errorf("%d subscriptions open", n)
	}
}

// wsConn is a graphql-transport-ws connection that runs operations one after another.
type wsConn struct {
	c   *websocket.Conn
	ctx context.Context
	n   int
}

func dialWS(t testing.TB, base string, headers map[string]string) *wsConn {
	t.Helper()
	return dialWSInit(t, base, headers, nil)
}

// dialWSInit is dialWS whose connection_init carries payload (none when nil).
func dialWSInit(t testing.TB, base string, headers map[string]string, payload any) *wsConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql", &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(1 << 20)
	init := map[string]any{"type": "connection_init"}
	if payload != nil {
		init["payload"] = payload
	}
	b, _ := json.Marshal(init)
	c.Write(ctx, websocket.MessageText, b)
	if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), "connection_ack") {
		t.Fatalf("init: %s %v", b, err)
	}
	return &wsConn{c: c, ctx: ctx}
}

// run runs one operation over the connection and returns its first answer.
func (w *wsConn) run(t testing.TB, query string, vars map[string]any) gqlResponse {
	t.Helper()
	w.n++
	id := fmt.Sprint(w.n)
	b, _ := json.Marshal(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
	if err := w.c.Write(w.ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := w.c.Read(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID, Type string
			Payload  json.RawMessage
		}
		json.Unmarshal(b, &m)
		if m.ID != id {
			continue
		}
		var r gqlResponse
		switch m.Type {
		case "next":
			json.Unmarshal(m.Payload, &r)
		case "error":
			json.Unmarshal(m.Payload, &r.Errors)
		default:
			t.Fatalf("message %s", b)
		}
		return r
	}
}

func firstCode(r gqlResponse) string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// TestWebsocketOperationsRecheckTheCredential: a WebSocket connection is authenticated once, at
// its upgrade, and may carry queries and mutations as well as subscriptions for as long as its
// client keeps it. Each operation checks the credential again: after the key is revoked, a query
// on the connection opened before is refused STREAM_403.000 (it was answered, on the caller the
// upgrade had found); after a staff account is demoted, its old connection can no longer record
// flight operations. The portal's API, which has no subscriptions, takes neither WebSocket nor
// graphql-sse: its operations are each authenticated by their own request.
func TestWebsocketOperationsRecheckTheCredential(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		dev := s.signUp(t, "mallory@example.com", developerPassword, "Mallory")
		k := dev.newKey(t, op, "flightstatus")
		const q = `{ flightsByRoute: flights(origin: "AMS", first: 1) { edges { node { id } } } }`
		ws := dialWS(t, s.URL, map[string]string{"api-key": k.id})
		if r := ws.run(t, q, nil); len(r.Errors) > 0 {
			t.Fatalf("before the revocation: %+v", r.Errors)
		}
		dev.revokeKey(t, k.keyID)
		if r := ws.run(t, q, nil); firstCode(r) != flightgraph.ECodeSubscriptionRevoked || string(r.Data) != "" && string(r.Data) != "null" {
			t.Errorf("a query over the connection of a revoked key: %s %+v, want %s", r.Data, r.Errors, flightgraph.ECodeSubscriptionRevoked)
		}

		// A staff account demoted keeps no operations API on its old connection.
		ops := staffOps(t, s, op)
		fs := s.query(t, q, nil)
		var page struct {
			FlightsByRoute struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		if json.Unmarshal(fs.Data, &page) != nil || len(page.FlightsByRoute.Edges) == 0 {
			t.Fatalf("no flight: %+v", fs)
		}
		in := map[string]any{"in": map[string]any{"flightId": page.FlightsByRoute.Edges[0].Node.ID, "kind": "DELAY", "delayMinutes": 10}}
		staff := dialWS(t, s.URL, ops)
		if r := staff.run(t, recordOp, in); len(r.Errors) > 0 {
			t.Fatalf("staff before the demotion: %+v", r.Errors)
		}
		op.setRole(t, "ops@staff.example", "DEVELOPER")
		if r := staff.run(t, recordOp, in); len(r.Errors) == 0 || string(r.Data) != "" && string(r.Data) != "null" {
			t.Errorf("a demoted account recorded an operation over its old connection: %s", r.Data)
		}

		// The portal takes no stream, by POST or by GET.
		post, _ := http.NewRequest(http.MethodPost, s.URL+"/portal/graphql", strings.NewReader(`{"query":"{ apis { slug } }"}`))
		post.Header.Set("Content-Type", "application/json")
		get, _ := http.NewRequest(http.MethodGet, s.URL+"/portal/graphql?query=%7B%20apis%20%7B%20slug%20%7D%20%7D", nil)
		for _, req := range []*http.Request{post, get} {
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Errorf("the portal's API answered graphql-sse by %s: %d %s", req.Method, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
		if c, resp, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(s.URL, "http")+"/portal/graphql",
			&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}}); err == nil {
			c.CloseNow()
			t.Errorf("the portal's API took a WebSocket: %d", resp.StatusCode)
		}
	})
}

// TestRefusedStreamsAreBounded: an operation refused over graphql-sse (a POST or a GET) is
// answered 200 with an event, as the transport has it; it counts in the refusals' window of its client all the same,
// as a refused POST does, so that the window bounds them (here 3 a second from an address; the
// test clock never moves) instead of letting a client send refused operations without end.
func TestRefusedStreamsAreBounded(t *testing.T) {
	const query = `subscription { departures(airport: "AMS") { position } }`
	for _, method := range []string{http.MethodPost, http.MethodGet} { // graphql-sse's two forms
		s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
			c.Refusals = access.RefusalLimits{PerAddress: 3, PerCredential: 3}
		})
		body, _ := json.Marshal(map[string]string{"query": query})
		statuses := []int{}
		for range 6 {
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			if method == http.MethodGet {
				req, _ = http.NewRequest(http.MethodGet, s.URL+"/graphql?"+sseGET(query, nil).Encode(), nil)
			}
			req.Header.Set("Accept", "text/event-stream")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body) // the refusal's event, then complete
			resp.Body.Close()
			cancel()
			statuses = append(statuses, resp.StatusCode)
		}
		if statuses[0] != http.StatusOK || statuses[len(statuses)-1] != http.StatusTooManyRequests {
			t.Errorf("6 refused graphql-sse requests (%s) from one address answered %v; want the first 200, the last ones 429", method, statuses)
		}
	}
}
