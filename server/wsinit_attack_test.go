package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// initWS opens a graphql-transport-ws connection with headers on its upgrade, sends init (a
// connection_init message, as raw JSON) and returns the connection and what the server answered:
// the first message, or the close frame (its code and reason) when it closed the connection.
func initWS(t testing.TB, base string, headers http.Header, init string) (*websocket.Conn, string, *websocket.CloseError) {
	t.Helper()
	c, answer, closed, status := tryInitWS(t, base, headers, init)
	if c == nil {
		t.Fatalf("dial: %d", status)
	}
	return c, answer, closed
}

// tryInitWS is initWS whose upgrade may be refused: then it returns no connection, and the
// refusal's status and code (as the close frame's reason would name it).
func tryInitWS(t testing.TB, base string, headers http.Header, init string) (*websocket.Conn, string, *websocket.CloseError, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql", &websocket.DialOptions{HTTPHeader: headers, Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		var r gqlResponse
		json.NewDecoder(resp.Body).Decode(&r)
		return nil, "", &websocket.CloseError{Reason: firstCode(r) + ": " + resp.Status}, resp.StatusCode
	}
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(1 << 20)
	if err := c.Write(ctx, websocket.MessageText, []byte(init)); err != nil {
		return c, "", &websocket.CloseError{Code: websocket.CloseStatus(err), Reason: err.Error()}, http.StatusSwitchingProtocols
	}
	_, b, err := c.Read(ctx)
	if err != nil {
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return c, "", &ce, http.StatusSwitchingProtocols
		}
		t.Fatalf("init %.80s: neither answered nor closed: %v", init, err)
	}
	return c, string(b), nil, http.StatusSwitchingProtocols
}

// refusedOperation sends op on conn, whose connection_init was answered answer (which must be
// its acknowledgement), and returns the code of the error it is answered, and the close frame
// that follows.
func refusedOperation(t testing.TB, conn *websocket.Conn, answer, op string) (string, *websocket.CloseError) {
	t.Helper()
	if !strings.Contains(answer, "connection_ack") {
		t.Fatalf("connection_init answered %s, want connection_ack", answer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn.Write(ctx, websocket.MessageText, []byte(op))
	code := ""
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return code, &ce
			}
			return code, nil
		}
		var m struct {
			Type    string
			Payload struct{ Data json.RawMessage }
		}
		json.Unmarshal(b, &m)
		if m.Type == "next" && string(m.Payload.Data) != "" && string(m.Payload.Data) != "null" {
			t.Errorf("the operation ran: %s", b)
		}
		var r struct{ Payload gqlResponse }
		if json.Unmarshal(b, &r) == nil && code == "" {
			code = firstCode(r.Payload)
		}
	}
}

// payloadInit is a connection_init message whose payload is v.
func payloadInit(v any) string {
	b, _ := json.Marshal(map[string]any{"type": "connection_init", "payload": v})
	return string(b)
}

// TestWebsocketInitCredentials attacks the credential a browser's graphql-ws client sends in
// connection_init's payload (connectionParams), which the guard authenticates by the code that
// authenticates headers (Guard.Connect):
//
//   - no credential anywhere (payload absent, empty, or null): acknowledged, its first operation
//     (here a subscription) is answered AUTH_401.000 before it is read, and the connection is
//     closed 4401 AUTH_401.000; without the check it stayed open for more;
//   - a malformed or unknown key, a token that is not one: 4401 with the catalogue's codes;
//   - a payload that is not an object (a string, an array, a number): closed 4400 REQ_400.000,
//     where gqlgen left the connection open without a word; members of the wrong type, or two
//     spellings with different values: 4400 REQ_400.000; a payload over the message bound:
//     closed, "message too big";
//   - a credential in the headers and another in the payload: 4403 AUTH_403.001, whichever is
//     the good one (a bad header key cannot be traded for a good payload key, nor the other way);
//     the same credential in both is one;
//   - a key of another API, a token on the API-key Flight Status API: the subscription is refused
//     as over HTTP (AUTH_403.000, AUTH_403.001): the payload's caller is the credential's;
//   - a good key under each spelling opens a subscription that hears a recorded change.
//
// In none of the refused cases does a subscription open (the hub counts none).
func TestWebsocketInitCredentials(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		ops := staffOps(t, s, op)
		board := `subscription { departures(airport: "AMS") ` + liveSelection + ` }`
		subscribe := `{"id":"1","type":"subscribe","payload":{"query":"subscription { departures(airport: \"AMS\") { position } }"}}`
		unknownKey := access.NewCredential(access.KindAPIKey)

		refused := []struct {
			name    string
			headers http.Header
			init    string
			close   websocket.StatusCode
			code    string
		}{
			{"no payload", nil, `{"type":"connection_init"}`, 4401, flightgraph.ECodeMissingCredentials},
			{"an empty payload", nil, payloadInit(map[string]any{}), 4401, flightgraph.ECodeMissingCredentials},
			{"a null payload", nil, `{"type":"connection_init","payload":null}`, 4401, flightgraph.ECodeMissingCredentials},
			{"empty values", nil, payloadInit(map[string]any{"api-key": "", "Authorization": ""}), 4401, flightgraph.ECodeMissingCredentials},
			{"other members only", nil, payloadInit(map[string]any{"headers": map[string]any{"api-key": s.demo.APIKey}}), 4401, flightgraph.ECodeMissingCredentials},
			{"a malformed key", nil, payloadInit(map[string]any{"api-key": "fgk_nope"}), 4401, flightgraph.ECodeInvalidKey},
			{"an unknown key", nil, payloadInit(map[string]any{"apiKey": unknownKey}), 4401, flightgraph.ECodeInvalidKey},
			{"a key as a bearer token", nil, payloadInit(map[string]any{"Authorization": "Bearer " + s.demo.APIKey}), 4401, flightgraph.ECodeInvalidToken},
			{"another scheme", nil, payloadInit(map[string]any{"authorization": "Basic " + s.demo.APIKey}), 4401, flightgraph.ECodeInvalidToken},
			{"a string payload", nil, payloadInit(s.demo.APIKey), 4400, flightgraph.ECodeBadBody},
			{"an array payload", nil, payloadInit([]string{s.demo.APIKey}), 4400, flightgraph.ECodeBadBody},
			{"a number payload", nil, `{"type":"connection_init","payload":42}`, 4400, flightgraph.ECodeBadBody},
			{"a key that is a number", nil, payloadInit(map[string]any{"api-key": 42}), 4400, flightgraph.ECodeBadBody},
			{"a key that is an object", nil, payloadInit(map[string]any{"apiKey": map[string]any{"value": s.demo.APIKey}}), 4400, flightgraph.ECodeBadBody},
			{"a key that is a list", nil, payloadInit(map[string]any{"api-key": []string{s.demo.APIKey}}), 4400, flightgraph.ECodeBadBody},
			{"two spellings that differ", nil, payloadInit(map[string]any{"api-key": s.demo.APIKey, "apiKey": ops["api-key"]}), 4400, flightgraph.ECodeBadBody},
			{"headers and payload that differ", http.Header{"Api-Key": {ops["api-key"]}}, payloadInit(map[string]any{"api-key": s.demo.APIKey}), 4403, flightgraph.ECodeWrongCredential},
			{"a bad header key and a good payload key", http.Header{"Api-Key": {unknownKey}}, payloadInit(map[string]any{"api-key": s.demo.APIKey}), 4403, flightgraph.ECodeWrongCredential},
			{"a good header key and a bad payload key", http.Header{"Api-Key": {s.demo.APIKey}}, payloadInit(map[string]any{"apiKey": unknownKey}), 4403, flightgraph.ECodeWrongCredential},
			{"a header key and a payload token", http.Header{"Api-Key": {s.demo.APIKey}}, payloadInit(map[string]any{"Authorization": "Bearer " + s.bearerToken(t, "")}), 4403, flightgraph.ECodeWrongCredential},
		}
		for _, c := range refused {
			conn, answer, closed := initWS(t, s.URL, c.headers, c.init)
			if c.code == flightgraph.ECodeMissingCredentials {
				// Acknowledged, so that its first operation is told why; then closed.
				if code, closed := refusedOperation(t, conn, answer, subscribe); code != c.code || closed == nil || closed.Code != c.close ||
					!strings.HasPrefix(closed.Reason, c.code+": ") {
					t.Errorf("%s: the operation refused %q, then closed %+v, want %s and %d", c.name, code, closed, c.code, c.close)
				}
				continue
			}
			if closed == nil {
				// Acknowledged: nothing may run on it all the same.
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				conn.Write(ctx, websocket.MessageText, []byte(subscribe))
				_, b, _ := conn.Read(ctx)
				cancel()
				t.Errorf("%s: answered %s (then %s), want closed %d %s", c.name, answer, b, c.close, c.code)
				continue
			}
			if closed.Code != c.close || !strings.HasPrefix(closed.Reason, c.code+": ") {
				t.Errorf("%s: closed %d %q, want %d %s", c.name, closed.Code, closed.Reason, c.close, c.code)
			}
		}
		// Over the message bound: closed before it is read.
		if _, answer, closed := initWS(t, s.URL, nil, payloadInit(map[string]any{"api-key": s.demo.APIKey, "pad": strings.Repeat("x", 300<<10)})); closed == nil {
			t.Errorf("a 300 KiB payload: answered %s", answer)
		} else if closed.Code != websocket.StatusMessageTooBig {
			t.Errorf("a 300 KiB payload: closed %d %q, want %d", closed.Code, closed.Reason, websocket.StatusMessageTooBig)
		}
		if n := s.srv.Live.Hub.Open(); n != 0 {
			t.Fatalf("%d subscriptions open after the refused connections", n)
		}

		// A subscription refused as over HTTP: the payload's caller is the credential's.
		if m := subscribeWSInit(t, s.URL, nil, map[string]any{"api-key": ops["api-key"]}, board, nil).next(t, 5*time.Second); m.code() != flightgraph.ECodeNotApproved {
			t.Errorf("a key of another API in the payload: %+v, want %s", m, flightgraph.ECodeNotApproved)
		}
		if m := subscribeWSInit(t, s.URL, nil, map[string]any{"Authorization": "Bearer " + s.bearerToken(t, "")}, board, nil).next(t, 5*time.Second); m.code() != flightgraph.ECodeWrongCredential {
			t.Errorf("a token on the API-key API in the payload: %+v, want %s", m, flightgraph.ECodeWrongCredential)
		}

		// Each spelling opens the subscription; the headers' credential repeated in the payload is one.
		subs := map[string]*subscription{
			"api-key":          subscribeWSInit(t, s.URL, nil, map[string]any{"api-key": s.demo.APIKey}, board, nil),
			"apiKey":           subscribeWSInit(t, s.URL, nil, map[string]any{"apiKey": s.demo.APIKey, "other": 1}, board, nil),
			"headers and same": subscribeWSInit(t, s.URL, map[string]string{"api-key": s.demo.APIKey}, map[string]any{"api-key": s.demo.APIKey}, board, nil),
			"headers alone":    subscribeWSInit(t, s.URL, map[string]string{"api-key": s.demo.APIKey}, map[string]any{"unrelated": true}, board, nil),
		}
		for deadline := time.Now().Add(5 * time.Second); s.srv.Live.Hub.Open() < len(subs); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d subscriptions open, want %d", s.srv.Live.Hub.Open(), len(subs))
			}
		}
		id := amsFlightQueried(t, s)
		p := record(t, s, ops, map[string]any{"flightId": id, "kind": "GATE", "gate": "E9"})
		for name, sub := range subs {
			if e := sub.next(t, 5*time.Second).event(t); e.Position != p || e.Flight.ID != id {
				t.Errorf("%s: %+v, want the change at %s", name, e, p)
			}
		}
	})
}

// amsFlightQueried returns the id of a flight leaving AMS today.
func amsFlightQueried(t testing.TB, s *testServer) string {
	t.Helper()
	r := s.query(t, `{ flights(origin: "AMS", first: 1) { edges { node { id } } } }`, nil)
	var page struct {
		Flights struct {
			Edges []struct{ Node struct{ ID string } }
		}
	}
	if json.Unmarshal(r.Data, &page) != nil || len(page.Flights.Edges) == 0 {
		t.Fatalf("no flight: %+v", r)
	}
	return page.Flights.Edges[0].Node.ID
}

// TestWebsocketInitCredentialIsTheCaller: the caller a payload's credential gives a connection is
// held as a header's is. A revoked key's subscription ends STREAM_403.000 within a second (the
// live service's re-check reads the payload's credential) and the connection's next operation is
// refused STREAM_403.000 (the Gate's Recheck); operations over the connection are charged to the
// key's plan as over HTTP: with the Default plan's 5 calls a second (the test clock never moves),
// three queries over the WebSocket and two over HTTP use the second up, and the sixth is refused
// LIMIT_429.000 on either.
func TestWebsocketInitCredentialIsTheCaller(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.oaOperator(t)
		dev := s.signUp(t, "rita@example.com", developerPassword, "Rita")
		const q = `{ flights(origin: "AMS", first: 1) { edges { node { id } } } }`

		k := dev.newKey(t, op, "flightstatus")
		ws := dialWSInit(t, s.URL, nil, map[string]any{"apiKey": k.id})
		for i := range 3 {
			if r := ws.run(t, q, nil); len(r.Errors) > 0 {
				t.Fatalf("query %d over the WebSocket: %+v", i+1, r.Errors)
			}
		}
		for i := range 2 {
			if r := s.queryAs(t, map[string]string{"api-key": k.id}, q, nil); len(r.Errors) > 0 {
				t.Fatalf("query %d over HTTP: %+v", i+1, r.Errors)
			}
		}
		if r := ws.run(t, q, nil); firstCode(r) != flightgraph.ECodePerSecondLimit {
			t.Errorf("the sixth call of the second over the WebSocket: %s %+v, want %s", r.Data, r.Errors, flightgraph.ECodePerSecondLimit)
		}
		if r := s.queryAs(t, map[string]string{"api-key": k.id}, q, nil); firstCode(r) != flightgraph.ECodePerSecondLimit {
			t.Errorf("the seventh over HTTP: %+v, want %s", r.Errors, flightgraph.ECodePerSecondLimit)
		}

		k2 := dev.newKey(t, op, "flightstatus")
		board := `subscription { departures(airport: "AMS") ` + liveSelection + ` }`
		sub := subscribeWSInit(t, s.URL, nil, map[string]any{"api-key": k2.id}, board, nil)
		conn := dialWSInit(t, s.URL, nil, map[string]any{"api-key": k2.id})
		for deadline := time.Now().Add(5 * time.Second); s.srv.Live.Hub.Open() < 1; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the subscription did not open")
			}
		}
		start := time.Now()
		dev.revokeKey(t, k2.keyID)
		if m := sub.next(t, 2*time.Second); m.code() != flightgraph.ECodeSubscriptionRevoked {
			t.Fatalf("the revoked key's subscription: %+v, want %s", m, flightgraph.ECodeSubscriptionRevoked)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("the revoked key's subscription ended %v after the revocation", took)
		}
		if r := conn.run(t, q, nil); firstCode(r) != flightgraph.ECodeSubscriptionRevoked || string(r.Data) != "" && string(r.Data) != "null" {
			t.Errorf("a query over the revoked key's connection: %s %+v, want %s", r.Data, r.Errors, flightgraph.ECodeSubscriptionRevoked)
		}
		// And a new connection with it is refused at once.
		if _, answer, closed := initWS(t, s.URL, nil, payloadInit(map[string]any{"api-key": k2.id})); closed == nil || closed.Code != 4401 ||
			!strings.HasPrefix(closed.Reason, flightgraph.ECodeInvalidKey) {
			t.Errorf("a new connection of the revoked key: %s %+v", answer, closed)
		}
	})
}

// TestWebsocketInitRefusalsAreBounded: a connection refused at connection_init counts in its
// client address's refusals window as a refused request does (here 3 a second; the test clock
// never moves), once per connection: after three connections with unknown keys in their
// payloads, the next upgrade from that address is refused 429 LIMIT_429.000 before any work, as
// any request from it would be, and so is a request over HTTP. Without the count, connections
// could look up unknown keys without end.
func TestWebsocketInitRefusalsAreBounded(t *testing.T) {
	for _, c := range []struct{ name, init string }{
		{"unknown keys", payloadInit(map[string]any{"api-key": access.NewCredential(access.KindAPIKey)})},
		{"no credential", `{"type":"connection_init"}`},
		{"a payload of the wrong type", payloadInit(map[string]any{"api-key": 1})},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
				c.Refusals = access.RefusalLimits{PerAddress: 3, PerCredential: 3}
			})
			var got []string
			for range 4 {
				conn, answer, closed, status := tryInitWS(t, s.URL, nil, c.init)
				if closed == nil {
					// Acknowledged (no credential): its first operation is refused, then it is closed.
					_, closed = refusedOperation(t, conn, answer, `{"id":"1","type":"subscribe","payload":{"query":"{ __typename }"}}`)
					if closed == nil {
						t.Fatalf("not closed after its refused operation")
					}
				}
				code, _, _ := strings.Cut(closed.Reason, ":")
				got = append(got, fmt.Sprintf("%d %d %s", status, closed.Code, code))
			}
			if !strings.HasPrefix(got[3], "429 0 "+flightgraph.ECodePerSecondLimit) || strings.HasPrefix(got[2], "429") {
				t.Errorf("4 refused connections from one address: %v; want the fourth upgrade refused 429 %s", got, flightgraph.ECodePerSecondLimit)
			}
			if r := s.queryAs(t, nil, `{ __typename }`, nil); firstCode(r) != flightgraph.ECodePerSecondLimit {
				t.Errorf("a request from that address after them: %+v, want %s", r.Errors, flightgraph.ECodePerSecondLimit)
			}
		})
	}
}

// TestWebsocketOrigin: a WebSocket upgrade is held to the CORS allow-list (here
// https://app.example): a page of an allowed origin opens the connection, as does a client that
// names no Origin and the server's own pages; a page of another origin is refused 403
// REQ_403.000 before anything else, a good key's included. Without the check, gqlgen's transport
// refused every other origin, the allowed ones too.
func TestWebsocketOrigin(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.Server.CORSOrigins = []string{"https://app.example"}
	})
	dial := func(origin string) (int, string) {
		t.Helper()
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			if resp == nil {
				t.Fatal(err)
			}
			var r gqlResponse
			json.NewDecoder(resp.Body).Decode(&r)
			return resp.StatusCode, firstCode(r)
		}
		defer c.CloseNow()
		c.Write(ctx, websocket.MessageText, []byte(payloadInit(map[string]any{"api-key": s.demo.APIKey})))
		if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), "connection_ack") {
			t.Fatalf("origin %q: init %s %v", origin, b, err)
		}
		return http.StatusSwitchingProtocols, ""
	}
	for _, c := range []struct {
		origin string
		status int
		code   string
	}{
		{"https://app.example", http.StatusSwitchingProtocols, ""},
		{"HTTPS://APP.EXAMPLE", http.StatusSwitchingProtocols, ""},
		{"", http.StatusSwitchingProtocols, ""},
		{s.URL, http.StatusSwitchingProtocols, ""},
		{"https://evil.example", http.StatusForbidden, flightgraph.ECodeCrossSite},
		{"http://app.example", http.StatusForbidden, flightgraph.ECodeCrossSite},
		{"https://app.example.evil.example", http.StatusForbidden, flightgraph.ECodeCrossSite},
		{"null", http.StatusForbidden, flightgraph.ECodeCrossSite},
	} {
		if status, code := dial(c.origin); status != c.status || code != c.code {
			t.Errorf("Origin %q: %d %s, want %d %s", c.origin, status, code, c.status, c.code)
		}
	}
}

// TestWebsocketHeavyOperationsGiveTheirSlotBack: a heavy operation over a WebSocket holds a
// heavy-work slot while it runs and gives it back when it is answered, as over HTTP. On the
// connection's own pass the first one held its slot until the connection closed: the key's heavy
// calls elsewhere were refused LIMIT_429.002 (one at a time per key) for as long as the client
// kept the socket open.
func TestWebsocketHeavyOperationsGiveTheirSlotBack(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	heavy := `{ destinations(origin: "AMS", month: "` + inspirationMonth + `", limit: 1) { __typename } }`
	ws := dialWSInit(t, s.URL, nil, map[string]any{"api-key": s.demo.APIKey})
	for i := range 2 {
		if r := ws.run(t, heavy, nil); len(r.Errors) > 0 {
			t.Fatalf("heavy query %d over the WebSocket: %+v", i+1, r.Errors)
		}
		for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if n, _ := s.srv.Guard.Heavy.Taken(); n == 0 {
				break
			}
			if time.Now().After(deadline) {
				n, _ := s.srv.Guard.Heavy.Taken()
				t.Fatalf("%d heavy-work slots still taken after the query %d over the WebSocket was answered", n, i+1)
			}
		}
	}
	if r := s.query(t, heavy, nil); len(r.Errors) > 0 {
		t.Errorf("the key's heavy query over HTTP while its WebSocket is open: %+v", r.Errors)
	}
}

// TestWebsocketOperationsReadFresh: each operation over a WebSocket reads the store afresh, as
// a request over HTTP does: a gate changed by the operations API between two queries on one
// connection is the new gate in the second. With the connection's loaders, the second was
// answered from what the first had read.
func TestWebsocketOperationsReadFresh(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	ops := staffOps(t, s, s.oaOperator(t))
	id := amsFlightQueried(t, s)
	const q = `query($id: ID!) { flight(id: $id) { legs { departure { gate } } } }`
	ws := dialWSInit(t, s.URL, nil, map[string]any{"apiKey": s.demo.APIKey})
	gate := func() string {
		t.Helper()
		r := ws.run(t, q, map[string]any{"id": id})
		var out struct {
			Flight struct {
				Legs []struct{ Departure struct{ Gate *string } }
			}
		}
		if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil || len(out.Flight.Legs) == 0 {
			t.Fatalf("flight %s: %s %+v", id, r.Data, r.Errors)
		}
		if g := out.Flight.Legs[0].Departure.Gate; g != nil {
			return *g
		}
		return ""
	}
	before := gate()
	record(t, s, ops, map[string]any{"flightId": id, "kind": "GATE", "gate": "Z99"})
	if after := gate(); after != "Z99" {
		t.Errorf("the gate over the same connection after the change: %q (before %q), want Z99", after, before)
	}
}

// TestWebsocketOperationRefusalsAreBounded: each operation over a WebSocket takes a place in the
// refusals' windows as a request over HTTP does (here 3 a second; the test clock never moves),
// kept when it is refused: after three operations that do not validate on one connection, the
// next is refused LIMIT_429.000 before it is read, as the key's next request over HTTP is, and
// so is an operation on another connection of the key. Operations that are admitted give their
// place back: many of them never fill it. Without the place, one connection sent refused
// operations (each read, parsed and validated) without end.
func TestWebsocketOperationRefusalsAreBounded(t *testing.T) {
	for _, c := range []struct {
		name    string
		headers map[string]string
		payload any
	}{
		{"the key in the payload", nil, map[string]any{"api-key": "KEY"}},
		{"the key in the upgrade's headers", map[string]string{"api-key": "KEY"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
				c.Refusals = access.RefusalLimits{PerAddress: 3, PerCredential: 3}
			})
			key := s.demo.APIKey
			headers := map[string]string{}
			for k := range c.headers {
				headers[k] = key
			}
			var payload any
			if c.payload != nil {
				payload = map[string]any{"api-key": key}
			}
			ws := dialWSInit(t, s.URL, headers, payload)
			for i := range 10 {
				if r := ws.run(t, `{ __typename }`, nil); len(r.Errors) > 0 {
					t.Fatalf("admitted operation %d: %+v", i+1, r.Errors)
				}
			}
			var got []string
			for range 4 {
				got = append(got, firstCode(ws.run(t, `{ noSuchField }`, nil)))
			}
			if got[3] != flightgraph.ECodePerSecondLimit || slices.Contains(got[:3], flightgraph.ECodePerSecondLimit) {
				t.Errorf("4 operations that do not validate on one connection: %v; want the fourth refused %s", got, flightgraph.ECodePerSecondLimit)
			}
			if code := firstCode(ws.run(t, `{ __typename }`, nil)); code != flightgraph.ECodePerSecondLimit {
				t.Errorf("an operation after them: %q, want %s", code, flightgraph.ECodePerSecondLimit)
			}
			if r := s.queryAs(t, map[string]string{"api-key": key}, `{ __typename }`, nil); firstCode(r) != flightgraph.ECodePerSecondLimit {
				t.Errorf("the key's request over HTTP after them: %+v, want %s", r.Errors, flightgraph.ECodePerSecondLimit)
			}
		})
	}
}

// TestWebsocketUnchargedOperationsAreRechecked: an operation that charges no API (an
// introspection) over a connection is held, as every other one, to the connection's credential
// as it is now: once the key is revoked it is refused STREAM_403.000, and once a staff account is
// demoted its connection no longer reads the internal audience's schema. The Gate re-checked
// only the APIs an operation calls, and the uncharged admission read the caller the upgrade
// found: such an operation ran on for as long as the client kept its socket.
func TestWebsocketUnchargedOperationsAreRechecked(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	op := s.oaOperator(t)
	const q = `{ __schema { queryType { name } } }`
	refusedWithin := func(t *testing.T, ws *wsConn, what string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for {
			r := ws.run(t, q, nil)
			if firstCode(r) == flightgraph.ECodeSubscriptionRevoked && (string(r.Data) == "" || string(r.Data) == "null") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("an introspection over the connection of %s: %s %+v, want %s", what, r.Data, r.Errors, flightgraph.ECodeSubscriptionRevoked)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	t.Run("a revoked key", func(t *testing.T) {
		dev := s.signUp(t, "ursula@example.com", developerPassword, "Ursula")
		k := dev.newKey(t, op, "flightstatus")
		ws := dialWSInit(t, s.URL, nil, map[string]any{"api-key": k.id})
		if r := ws.run(t, q, nil); len(r.Errors) > 0 {
			t.Fatalf("an introspection over the key's connection: %+v", r.Errors)
		}
		dev.revokeKey(t, k.keyID)
		refusedWithin(t, ws, "a revoked key")
	})
	t.Run("a demoted staff account", func(t *testing.T) {
		s.signUp(t, "vera@staff.example", developerPassword, "Vera")
		op.setRole(t, "vera@staff.example", "STAFF")
		k := s.signIn(t, "vera@staff.example", developerPassword).newKey(t, op, "flightstatus")
		ws := dialWSInit(t, s.URL, nil, map[string]any{"api-key": k.id})
		if r := ws.run(t, q, nil); len(r.Errors) > 0 {
			t.Fatalf("an introspection over staff's connection: %+v", r.Errors)
		}
		op.setRole(t, "vera@staff.example", "DEVELOPER")
		refusedWithin(t, ws, "a demoted staff account")
	})
}

// TestWebsocketBadHeaderCredentialIsRefusedAtInit: a credential in the upgrade's headers that is
// refused (an unknown key), alone or repeated in the payload, closes the connection at
// connection_init 4401 with its code, as the same credential in the payload alone does. It was
// acknowledged: the connection stayed open on a credential the guard had refused, each of its
// operations refused one by one.
func TestWebsocketBadHeaderCredentialIsRefusedAtInit(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	unknownKey := access.NewCredential(access.KindAPIKey)
	for name, init := range map[string]string{
		"headers alone":           `{"type":"connection_init"}`,
		"repeated in the payload": payloadInit(map[string]any{"api-key": unknownKey}),
	} {
		t.Run(name, func(t *testing.T) {
			_, answer, closed := initWS(t, s.URL, http.Header{"Api-Key": {unknownKey}}, init)
			if closed == nil || closed.Code != 4401 || !strings.HasPrefix(closed.Reason, flightgraph.ECodeInvalidKey) {
				t.Errorf("an unknown key in the upgrade's headers: %s %+v, want closed 4401 %s", answer, closed, flightgraph.ECodeInvalidKey)
			}
		})
	}
}
