package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// liveMsg is one message of a subscription, whatever the transport: its GraphQL payload (data
// and errors), or for the REST stream its id and data.
type liveMsg struct {
	ID      string
	Event   string
	Payload gqlResponse
	Data    json.RawMessage
}

// code is the first error's code of the message, "" for none.
func (m liveMsg) code() string {
	if len(m.Payload.Errors) > 0 {
		if c, _ := m.Payload.Errors[0].Extensions["code"].(string); c != "" {
			return c
		}
	}
	var body struct{ Errors []struct{ Code string } }
	if (m.Event == "error" || m.Event == "") && json.Unmarshal(m.Data, &body) == nil && len(body.Errors) > 0 {
		return body.Errors[0].Code
	}
	return ""
}

// liveEvent is what the tests select of an event.
type liveEvent struct {
	Position string
	Kind     string
	Flight   struct {
		ID     string
		Status string
		Legs   []struct{ Departure struct{ Gate *string } }
	}
}

const liveSelection = `{ position kind flight { id status legs { departure { gate } } } }`

// event decodes the event of a GraphQL message's one root field.
func (m liveMsg) event(t testing.TB) liveEvent {
	t.Helper()
	var data map[string]liveEvent
	if err := json.Unmarshal(m.Payload.Data, &data); err != nil || len(data) != 1 {
		t.Fatalf("message %+v: %v", m, err)
	}
	for _, e := range data {
		return e
	}
	return liveEvent{}
}

// subscription is an open subscription: its messages, until the stream ends (then closed).
type subscription struct {
	msgs  chan liveMsg
	close func()
}

// next returns the next message within d, or fails.
func (s *subscription) next(t testing.TB, d time.Duration) liveMsg {
	t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			t.Fatal("the stream ended")
		}
		return m
	case <-time.After(d):
		t.Fatalf("no message in %v", d)
	}
	return liveMsg{}
}

// subscribeWS opens a graphql-transport-ws subscription at base with headers on the upgrade.
func subscribeWS(t testing.TB, base string, headers map[string]string, query string, vars map[string]any) *subscription {
	t.Helper()
	return subscribeWSInit(t, base, headers, nil, query, vars)
}

// subscribeWSInit is subscribeWS whose connection_init carries payload (none when nil). A
// connection the server closes with a code of its own (4000 and up, see graph's initFunc) ends
// the subscription with a message whose error is the close frame's: its reason's code, and the
// close code in extensions.closeCode.
func subscribeWSInit(t testing.TB, base string, headers map[string]string, payload any, query string, vars map[string]any) *subscription {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql", &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		cancel()
		if resp != nil {
			body, _ := io.ReadAll(resp.Body)
			t.Fatalf("dial: %v: %d %s", err, resp.StatusCode, body)
		}
		t.Fatalf("dial: %v", err)
	}
	c.SetReadLimit(1 << 20)
	write := func(v any) {
		b, _ := json.Marshal(v)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Errorf("write: %v", err)
		}
	}
	if payload != nil {
		write(map[string]any{"type": "connection_init", "payload": payload})
	} else {
		write(map[string]any{"type": "connection_init"})
	}
	write(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
	s := &subscription{msgs: make(chan liveMsg, 1000), close: func() { cancel(); c.CloseNow() }}
	go func() {
		defer close(s.msgs)
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				if m, ok := closeMsg(err); ok {
					s.msgs <- m
				}
				return
			}
			var m struct {
				Type    string
				Payload json.RawMessage
			}
			json.Unmarshal(b, &m)
			switch m.Type {
			case "next":
				var msg liveMsg
				json.Unmarshal(m.Payload, &msg.Payload)
				s.msgs <- msg
			case "error":
				var msg liveMsg
				json.Unmarshal(m.Payload, &msg.Payload.Errors)
				s.msgs <- msg
				return
			case "complete":
				return
			case "ping":
				write(map[string]any{"type": "pong"})
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

// closeMsg is the message of a close frame the server sent with a code of its own (4000 and
// up): its reason is "CODE: message".
func closeMsg(err error) (liveMsg, bool) {
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code < 4000 {
		return liveMsg{}, false
	}
	code, msg, _ := strings.Cut(ce.Reason, ": ")
	b, _ := json.Marshal([]map[string]any{{"message": msg, "extensions": map[string]any{"code": code, "closeCode": int(ce.Code)}}})
	var m liveMsg
	m.Event = "close"
	json.Unmarshal(b, &m.Payload.Errors)
	return m, true
}

// subscribeSSE opens a stream of server-sent events: a graphql-sse subscription (query set: a
// POST to /graphql, or, when path is /graphql, the GET of graphql-sse's distinct connections mode
// with the operation in the query string) or the REST stream (path set).
func subscribeSSE(t testing.TB, base string, headers map[string]string, path, query string, vars map[string]any) (*subscription, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var req *http.Request
	if query != "" && path == "/graphql" {
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/graphql?"+sseGET(query, vars).Encode(), nil)
	} else if query != "" {
		b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &subscription{msgs: make(chan liveMsg, 1000), close: func() { cancel(); resp.Body.Close() }}
	t.Cleanup(s.close)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		var m liveMsg
		m.Event, m.Data = "error", body
		json.Unmarshal(body, &m.Payload)
		s.msgs <- m
		close(s.msgs)
		return s, resp.StatusCode
	}
	go func() {
		defer close(s.msgs)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var m liveMsg
		for sc.Scan() {
			line := sc.Text()
			switch k, v, _ := strings.Cut(line, ": "); {
			case line == "":
				if m.Event == "complete" {
					return
				}
				if m.Data != nil {
					json.Unmarshal(m.Data, &m.Payload)
					s.msgs <- m
				}
				m = liveMsg{}
			case k == "id":
				m.ID = v
			case k == "event":
				m.Event = v
			case k == "data":
				m.Data = json.RawMessage(v)
			}
		}
	}()
	return s, resp.StatusCode
}

// sseGET returns the query string of a graphql-sse GET: the operation and its variables.
func sseGET(query string, vars map[string]any) url.Values {
	q := url.Values{"query": {query}}
	if vars != nil {
		b, _ := json.Marshal(vars)
		q.Set("variables", string(b))
	}
	return q
}

// staffOps returns the api-key headers of a staff account's key of the Flight Operations API.
func staffOps(t testing.TB, s *testServer, op *portal) map[string]string {
	t.Helper()
	const email = "ops@staff.example"
	s.signUp(t, email, developerPassword, "Ops Control")
	op.setRole(t, email, "STAFF")
	sam := s.signIn(t, email, developerPassword)
	return map[string]string{"api-key": sam.newKey(t, op, "flightops").id}
}

const recordOp = `mutation($in: FlightOperationInput!) { recordFlightOperation(input: $in) { position kind status } }`

// record records an operation through the GraphQL API and returns its position.
func record(t testing.TB, s *testServer, ops map[string]string, in map[string]any) string {
	t.Helper()
	r := s.queryAs(t, ops, recordOp, map[string]any{"in": in})
	var out struct{ RecordFlightOperation struct{ Position string } }
	if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil || out.RecordFlightOperation.Position == "" {
		t.Fatalf("recordFlightOperation: %+v", r)
	}
	return out.RecordFlightOperation.Position
}

// TestLiveFlightStatus: the internal operations API records changes (developers are answered as
// for a path that does not exist); subscribers hear them over WebSocket, graphql-sse and the REST
// stream with the flight as it is now; a resumed stream replays what it missed; a subscription
// takes the Flight Status API's credential (none: AUTH_401.000; a key of another API:
// AUTH_403.000); the cap on a client's open subscriptions holds (STREAM_429.000); a revoked key's
// subscriptions end within a second (STREAM_403.000).
func TestLiveFlightStatus(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	op := s.oaOperator(t)
	ops := staffOps(t, s, op)
	demo := map[string]string{"api-key": s.demo.APIKey}
	fs, _, err := store.NewFlightStore(s.db).FindFlights(context.Background(), flightgraph.FlightFilter{Origin: storetest.Place(t, s.db, "AMS"),
		Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 1}})
	if err != nil || len(fs) == 0 {
		t.Fatal(err)
	}
	id := fs[0].ID

	// A developer's view of the schema has no operations API at all.
	if r := s.query(t, recordOp, map[string]any{"in": map[string]any{"flightId": id, "kind": "DELAY", "delayMinutes": 30}}); len(r.Errors) == 0 ||
		r.Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
		t.Fatalf("a developer's operation: %+v, want the field unknown", r)
	}
	byID := `subscription($ids: [ID!]!, $after: String) { flightStatusChanged(ids: $ids, after: $after) ` + liveSelection + ` }`
	board := `subscription { departures(airport: "ams") ` + liveSelection + ` }`
	if m := subscribeWS(t, s.URL, nil, byID, map[string]any{"ids": []string{id}}).next(t, 5*time.Second); m.code() != flightgraph.ECodeMissingCredentials {
		t.Fatalf("no credential over WebSocket: %+v", m)
	}
	if sub, _ := subscribeSSE(t, s.URL, ops, "", byID, map[string]any{"ids": []string{id}}); sub.next(t, 5*time.Second).code() != flightgraph.ECodeNotApproved {
		t.Fatal("a key of another API over SSE was not refused AUTH_403.000")

	}
	if _, status := subscribeSSE(t, s.URL, nil, "/opendata/flightstatus/events?flightIds="+strings.ReplaceAll(id, "+", "%2B"), "", nil); status != http.StatusUnauthorized {
		t.Fatalf("no credential on the REST stream: %d", status)
	}

	ws := subscribeWS(t, s.URL, demo, byID, map[string]any{"ids": []string{id}})
	sse, _ := subscribeSSE(t, s.URL, demo, "", board, nil)
	sseByGET, status := subscribeSSE(t, s.URL, demo, "/graphql", board, nil)
	if status != http.StatusOK {
		t.Fatalf("graphql-sse by GET: %d %+v", status, sseByGET.next(t, time.Second))
	}
	restPath := "/opendata/flightstatus/events?flightIds=" + strings.ReplaceAll(id, "+", "%2B")
	rest, _ := subscribeSSE(t, s.URL, demo, restPath, "", nil)
	// The subscriptions are open once the hub has them: wait until it counts four.
	for deadline := time.Now().Add(5 * time.Second); s.srv.Live.Hub.Open() < 4; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions open", s.srv.Live.Hub.Open())
		}
	}
	p1 := record(t, s, ops, map[string]any{"flightId": id, "kind": "DELAY", "delayMinutes": 30})
	p2 := record(t, s, ops, map[string]any{"flightId": id, "kind": "GATE", "gate": "D7"})
	for name, sub := range map[string]*subscription{"WebSocket": ws, "graphql-sse": sse, "graphql-sse by GET": sseByGET} {
		e1, e2 := sub.next(t, 5*time.Second).event(t), sub.next(t, 5*time.Second).event(t)
		if e1.Position != p1 || e1.Kind != "DELAY" || e1.Flight.ID != id || e2.Position != p2 || e2.Kind != "GATE" ||
			e2.Flight.Legs[0].Departure.Gate == nil || *e2.Flight.Legs[0].Departure.Gate != "D7" {
			t.Fatalf("%s: %+v then %+v, want DELAY at %s then GATE D7 at %s", name, e1, e2, p1, p2)
		}
	}
	if m := rest.next(t, 5*time.Second); m.ID != p1 || m.Event != "flightStatus" {
		t.Fatalf("REST stream: %+v", m)
	}
	// Resumed after the first: the second is replayed, then the live stream follows.
	resumed, _ := subscribeSSE(t, s.URL, map[string]string{"api-key": s.demo.APIKey, "Last-Event-ID": p1}, restPath, "", nil)
	if m := resumed.next(t, 5*time.Second); m.ID != p2 {
		t.Fatalf("resumed after %s: %+v, want %s", p1, m, p2)
	}
	resumedWS := subscribeWS(t, s.URL, demo, byID, map[string]any{"ids": []string{id}, "after": p1})
	if e := resumedWS.next(t, 5*time.Second).event(t); e.Position != p2 {
		t.Fatalf("resumed over WebSocket after %s: %+v", p1, e)
	}
	if m := subscribeWS(t, s.URL, demo, byID, map[string]any{"ids": []string{id}, "after": "x1"}).next(t, 5*time.Second); m.code() != flightgraph.ECodeBadFormat {
		t.Fatalf("a malformed position: %+v", m)
	}

	// The cap per client address.
	s.srv.Live.SetPerAddress(s.srv.Live.Hub.Open())
	if m := subscribeWS(t, s.URL, demo, board, nil).next(t, 5*time.Second); m.code() != flightgraph.ECodeTooManyStreams {
		t.Fatalf("over the cap: %+v", m)
	}
	s.srv.Live.SetPerAddress(0)

	// A revoked key's subscriptions end within a second.
	dev := s.signUp(t, "rita@example.com", developerPassword, "Rita")
	k := dev.newKey(t, op, "flightstatus")
	revoked := subscribeWS(t, s.URL, map[string]string{"api-key": k.id}, board, nil)
	revokedREST, _ := subscribeSSE(t, s.URL, map[string]string{"api-key": k.id}, restPath, "", nil)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	dev.revokeKey(t, k.keyID)
	for name, sub := range map[string]*subscription{"WebSocket": revoked, "REST": revokedREST} {
		if m := sub.next(t, 2*time.Second); m.code() != flightgraph.ECodeSubscriptionRevoked {
			t.Fatalf("%s: %+v, want %s", name, m, flightgraph.ECodeSubscriptionRevoked)
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("%s: the revoked key's subscription ended after %v", name, took)
		}
	}
	t.Logf("a revoked key's subscriptions ended %v after the revocation", time.Since(start))
}

// seededDSN returns a PostgreSQL schema holding the demo data set, for replicas to open.
func seededDSN(t *testing.T) string {
	t.Helper()
	dsn := storetest.DSN(t, store.Postgres, os.Getenv)
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	opts := dataset.Options{Seed: dataset.DefaultSeed, Scale: 1, DaysBack: 1, DaysAhead: 1}
	if _, err := dataset.Seed(context.Background(), store.NewDatasetStore(db), opts, storetest.Now, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// TestLiveAcrossReplicas runs two replicas on one PostgreSQL database: 100 changes written
// through replica A reach subscribers on replica B over WebSocket and over graphql-sse, each
// once and in order (the latency's p99 is logged; the bar is 1 s); a revoked key's subscriptions
// on both replicas end within a second.
func TestLiveAcrossReplicas(t *testing.T) {
	storetest.DatabaseURL(t)
	dsn := seededDSN(t)
	name := fmt.Sprintf("fgtest-live-%d", time.Now().UnixNano()%1e6)
	a, b := startReplicaPair(t, dsn, name, time.Hour, nil)
	ctx := context.Background()
	op := a.oaOperator(t)
	ops := staffOps(t, a.testServer, op)
	fs, _, err := store.NewFlightStore(a.db).FindFlights(ctx, flightgraph.FlightFilter{Origin: storetest.Place(t, a.db, "AMS"),
		Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 1}})
	if err != nil || len(fs) == 0 {
		t.Fatal(err)
	}
	id := fs[0].ID
	keyB := map[string]string{"api-key": b.demo.APIKey}
	byID := `subscription($ids: [ID!]!) { flightStatusChanged(ids: $ids) ` + liveSelection + ` }`
	ws := subscribeWS(t, b.URL, keyB, byID, map[string]any{"ids": []string{id}})
	sse, _ := subscribeSSE(t, b.URL, keyB, "", byID, map[string]any{"ids": []string{id}})
	for deadline := time.Now().Add(5 * time.Second); b.srv.Live.Hub.Open() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions open on B", b.srv.Live.Hub.Open())
		}
	}
	const changes = 100
	lat := map[string][]time.Duration{}
	for i := range changes {
		start := time.Now()
		p := record(t, a.testServer, ops, map[string]any{"flightId": id, "kind": "DELAY", "delayMinutes": i})
		for name, sub := range map[string]*subscription{"WebSocket": ws, "graphql-sse": sse} {
			if e := sub.next(t, 5*time.Second).event(t); e.Position != p {
				t.Fatalf("%s: change %d arrived as %+v, want position %s", name, i, e, p)
			}
			lat[name] = append(lat[name], time.Since(start))
		}
	}
	for name, ds := range lat {
		slices.Sort(ds)
		p99 := ds[len(ds)*99/100-1]
		t.Logf("%s on replica B: %d changes written through A, p50 %v, p99 %v", name, len(ds), ds[len(ds)/2], p99)
		if p99 > time.Second {
			t.Errorf("%s: p99 %v over the 1 s bar", name, p99)
		}
	}

	dev := a.signUp(t, "rita@example.com", developerPassword, "Rita")
	k := dev.newKey(t, op, "flightstatus")
	board := `subscription { departures(airport: "AMS") ` + liveSelection + ` }`
	onA := subscribeWS(t, a.URL, map[string]string{"api-key": k.id}, board, nil)
	onB := subscribeWS(t, b.URL, map[string]string{"api-key": k.id}, board, nil)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	dev.revokeKey(t, k.keyID)
	for name, sub := range map[string]*subscription{"A": onA, "B": onB} {
		if m := sub.next(t, 2*time.Second); m.code() != flightgraph.ECodeSubscriptionRevoked {
			t.Fatalf("replica %s: %+v", name, m)
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("replica %s closed the revoked key's subscription after %v", name, took)
		}
	}
	t.Logf("a key revoked through A: its subscriptions on A and B ended within %v", time.Since(start))
}

// TestLiveBoardsCheckTheirAirport: a departures or arrivals board of an airport that does not
// exist, or of a code that is not one, is refused when it is opened, with the catalogue's code,
// on both edges, instead of a stream that never hears anything.
func TestLiveBoardsCheckTheirAirport(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	demo := map[string]string{"api-key": s.demo.APIKey}
	for airport, want := range map[string]string{"ZZZ": flightgraph.ECodeIATANotFound, "A1": flightgraph.ECodeBadFormat, "AMSX": flightgraph.ECodeBadFormat} {
		q := `subscription($a: String!) { departures(airport: $a) ` + liveSelection + ` }`
		if m := subscribeWS(t, s.URL, demo, q, map[string]any{"a": airport}).next(t, 5*time.Second); m.code() != want {
			t.Errorf("departures(%q) over WebSocket: %+v, want %s", airport, m, want)
		}
		for _, board := range []string{"departures", "arrivals"} {
			sub, status := subscribeSSE(t, s.URL, demo, "/opendata/flightstatus/events?"+board+"="+airport, "", nil)
			if m := sub.next(t, 5*time.Second); m.code() != want || status != flightgraph.Lookup(want).Status {
				t.Errorf("REST %s=%s: %d %+v, want %s", board, airport, status, m, want)
			}
		}
	}
	// A good code in lower case opens the board.
	sub, status := subscribeSSE(t, s.URL, demo, "/opendata/flightstatus/events?arrivals=ams", "", nil)
	if status != http.StatusOK {
		t.Fatalf("arrivals=ams: %d %+v", status, sub.next(t, time.Second))
	}
}

// TestLiveClockFeedsTheBoards: the status clock's transitions reach a departures board end to
// end, as the operations API's changes do: a tick over the next two hours records the boarding
// and departures of AMS's flights, and a board subscribed before hears them as STATUS events, each
// with the status the flight changed to, in position order, once each.
func TestLiveClockFeedsTheBoards(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	demo := map[string]string{"api-key": s.demo.APIKey}
	board := subscribeWS(t, s.URL, demo, `subscription { departures(airport: "AMS") { position kind status flight { id } } }`, nil)
	time.Sleep(200 * time.Millisecond) // the subscription is open before the tick records
	// Ticks of a minute, as the clock's own 5 s ticks come: a single tick over two hours would
	// put more of AMS's transitions at once than a subscription's buffer holds (its end, with
	// STREAM_409.000, tells the client to resume, which TestResumeLosesNothing covers).
	var n atomic.Int64
	ticked := make(chan error, 1)
	go func() {
		for from := storetest.Now; from.Before(storetest.Now.Add(2 * time.Hour)); from = from.Add(time.Minute) {
			k, err := s.srv.Clock.Tick(context.Background(), from, from.Add(time.Minute))
			if err != nil {
				ticked <- err
				return
			}
			n.Add(int64(k))
			time.Sleep(10 * time.Millisecond)
		}
		ticked <- nil
	}()
	t.Cleanup(func() { <-ticked })
	seen, last := map[string]bool{}, int64(0)
	statuses := map[string]int{}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		m := board.next(t, 10*time.Second)
		var data struct {
			Departures struct {
				Position, Kind, Status string
				Flight                 struct{ ID string }
			}
		}
		if err := json.Unmarshal(m.Payload.Data, &data); err != nil || m.code() != "" {
			t.Fatalf("board message: %+v (%v)", m, err)
		}
		e := data.Departures
		pos, _ := strconv.ParseInt(e.Position, 10, 64)
		if e.Kind != "STATUS" || pos <= last || seen[e.Flight.ID+e.Status] {
			t.Fatalf("event %+v after position %d: want STATUS events in order, each once", e, last)
		}
		last, seen[e.Flight.ID+e.Status] = pos, true
		statuses[e.Status]++
		if statuses["BOARDING"] > 0 && statuses["DEPARTED"] > 0 {
			t.Logf("the ticks recorded %d transitions so far; the AMS board heard %v", n.Load(), statuses)
			return
		}
	}
	t.Fatalf("the AMS board heard %v, want boardings and departures", statuses)
}
