package server_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// wsClientLine is one thing test/gateways/graphqlws.mjs reports that graphql-ws's client heard.
type wsClientLine struct {
	Connected bool
	Next      *gqlResponse
	Error     json.RawMessage
	Closed    *struct {
		Code   int
		Reason string
	}
	Complete bool
}

// graphQLWSClient runs graphql-ws's client (test/gateways/graphqlws.mjs) against base as a page
// of origin runs it, with connectionParams params, subscribed to query; it returns what the client
// hears, line by line, until it exits.
func graphQLWSClient(t *testing.T, dir, node, base, origin string, params map[string]any, query string) <-chan wsClientLine {
	t.Helper()
	p, _ := json.Marshal(params)
	cmd := exec.Command(node, filepath.Join(dir, "graphqlws.mjs"), base+"/graphql", origin, string(p), query)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan wsClientLine, 100)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l wsClientLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("graphqlws.mjs: %s", sc.Bytes())
				continue
			}
			lines <- l
		}
		cmd.Wait()
		if s := stderr.String(); s != "" {
			t.Logf("graphqlws.mjs: %s", s)
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	return lines
}

// nextLine returns the client's next line within d, or fails.
func nextLine(t *testing.T, lines <-chan wsClientLine, d time.Duration) wsClientLine {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("the client exited")
		}
		return l
	case <-time.After(d):
		t.Fatalf("the client heard nothing in %v", d)
	}
	return wsClientLine{}
}

// TestGraphQLWSClient: a front-end team's page, on an origin of the CORS allow-list, subscribes
// with graphql-ws's own client (the npm package, pinned in test/gateways), which cannot set a
// WebSocket's headers: its key travels in connectionParams. The client is acknowledged, and hears
// a change recorded by the operations API. Without a key, with an unknown one, or from a page of
// an origin not allowed, it is refused as the page would see it: without a key, its subscription
// is answered AUTH_401.000 and the socket closed 4401; with an unknown key, closed 4401
// AUTH_401.001 at connection_init; from another origin (the upgrade refused), closed 1006
// without ever connecting.
func TestGraphQLWSClient(t *testing.T) {
	dir, node := gatewaysTool(t)
	for _, module := range []string{"graphql-ws", "ws"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", module)); err != nil {
			t.Fatalf("%s=%s has no %s: run npm ci --prefix test/gateways", envGateways, dir, module)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "graphqlws.mjs")); err != nil {
		t.Fatalf("%s=%s has no graphqlws.mjs: point it at this checkout's test/gateways", envGateways, dir)
	}
	const page = "https://board.example"
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.Server.CORSOrigins = []string{page}
	})
	op := s.oaOperator(t)
	ops := staffOps(t, s, op)
	board := `subscription { departures(airport: "AMS") ` + liveSelection + ` }`

	lines := graphQLWSClient(t, dir, node, s.URL, page, map[string]any{"apiKey": s.demo.APIKey}, board)
	if l := nextLine(t, lines, 30*time.Second); !l.Connected {
		t.Fatalf("the client's first line: %+v, want connected", l)
	}
	for deadline := time.Now().Add(10 * time.Second); s.srv.Live.Hub.Open() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the client's subscription did not open")
		}
	}
	id := amsFlightQueried(t, s)
	p := record(t, s, ops, map[string]any{"flightId": id, "kind": "DELAY", "delayMinutes": 25})
	l := nextLine(t, lines, 10*time.Second)
	if l.Next == nil {
		t.Fatalf("the client heard %+v, want the change at %s", l, p)
	}
	if e := (liveMsg{Payload: *l.Next}).event(t); e.Position != p || e.Kind != "DELAY" || e.Flight.ID != id {
		t.Fatalf("the client heard %+v, want the DELAY of %s at %s", e, id, p)
	}

	for _, c := range []struct {
		name, origin string
		params       map[string]any
		close        int
		code         string
	}{
		{"no key", page, map[string]any{}, 4401, flightgraph.ECodeMissingCredentials},
		{"an unknown key", page, map[string]any{"api-key": access.NewCredential(access.KindAPIKey)}, 4401, flightgraph.ECodeInvalidKey},
		{"a page of another origin", "https://evil.example", map[string]any{"apiKey": s.demo.APIKey}, 1006, ""},
	} {
		lines := graphQLWSClient(t, dir, node, s.URL, c.origin, c.params, board)
		var heard []wsClientLine
		told := ""
		for l := range lines {
			heard = append(heard, l)
			if l.Next != nil && (len(l.Next.Errors) == 0 || string(l.Next.Data) != "" && string(l.Next.Data) != "null") {
				t.Errorf("%s: the client heard %+v", c.name, l)
			}
			if l.Next != nil {
				told = firstCode(*l.Next)
			}
			if l.Connected && c.code != flightgraph.ECodeMissingCredentials {
				t.Errorf("%s: the client was acknowledged", c.name)
			}
		}
		if c.code == flightgraph.ECodeMissingCredentials && told != c.code {
			// Acknowledged, so that the subscription is told why (a gateway passes that on).
			t.Errorf("%s: the subscription was told %q, want %s", c.name, told, c.code)
		}
		closed := false
		for _, l := range heard {
			if l.Closed != nil {
				closed = true
				// Told why on its subscription, the client may close first itself (graphql-ws
				// closes a lazy connection, 1000, once its last subscription completes), racing
				// the server's 4401.
				if c.code == flightgraph.ECodeMissingCredentials && told == c.code && l.Closed.Code == 1000 {
					continue
				}
				if l.Closed.Code != c.close || !strings.HasPrefix(l.Closed.Reason, c.code) {
					t.Errorf("%s: closed %d %q, want %d %s", c.name, l.Closed.Code, l.Closed.Reason, c.close, c.code)
				}
			}
		}
		if !closed {
			t.Errorf("%s: the client heard %+v, want the socket closed", c.name, heard)
		}
	}
}
