package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestAttackHeavyFieldHiddenInTheDocument: however a heavy root field is written (fragments,
// inline fragments, @include/@skip, @defer, aliases, operationName among several operations,
// GET, persisted by hash), it takes a slot (shed while the only slot is taken) and, with the slot
// free, is charged its declared calls each time it runs; no slot or turn is left taken.
func TestAttackHeavyFieldHiddenInTheDocument(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.SnapshotTTL = time.Hour
		c.HeavyConcurrency = 1
		c.QueueWait = 20 * time.Millisecond
	})
	key := map[string]string{"api-key": s.demo.APIKey, "Content-Type": "application/json"}
	d := `destinations(origin: "BCN", month: $m, limit: 2) { code }`
	vars := map[string]any{"m": inspirationMonth}
	type tc struct {
		name  string
		doc   string
		op    string
		vars  map[string]any
		calls int
	}
	cases := []tc{
		{"plain", `query($m: String) { ` + d + ` }`, "", nil, 5},
		{"fragment", `query($m: String) { ...F } fragment F on Query { ` + d + ` }`, "", nil, 5},
		{"nested fragments", `query($m: String) { ...F } fragment F on Query { ...G } fragment G on Query { ` + d + ` }`, "", nil, 5},
		{"inline", `query($m: String) { ... on Query { ` + d + ` } }`, "", nil, 5},
		{"typeless inline", `query($m: String) { ... { ` + d + ` } }`, "", nil, 5},
		{"include var", `query($m: String, $t: Boolean!) { ... @include(if: $t) { ` + d + ` } }`, "", map[string]any{"t": true}, 5},
		{"include default", `query($m: String, $t: Boolean = true) { ... @include(if: $t) { ` + d + ` } }`, "", nil, 5},
		{"skip false", `query($m: String, $f: Boolean!) { x: destinations(origin: "BCN", month: $m, limit: 2) @skip(if: $f) { code } }`, "", map[string]any{"f": false}, 5},
		{"defer", `query($m: String) { ... @defer { ` + d + ` } }`, "", nil, 5},
		{"defer label in fragment", `query($m: String) { ...F @defer(label: "x") } fragment F on Query { ` + d + ` }`, "", nil, 5},
		{"defer if false", `query($m: String) { ... @defer(if: false) { ` + d + ` } }`, "", nil, 5},
		{"nested defer", `query($m: String) { ... @defer { ... @defer { ` + d + ` } } }`, "", nil, 5},
		{"aliases", `query($m: String) { a: ` + d + ` b: ` + d + ` }`, "", nil, -1},
		{"alias in fragment and plain", `query($m: String) { a: ` + d + ` ...F } fragment F on Query { b: ` + d + ` }`, "", nil, -1},
		{"merged same", `query($m: String) { ` + d + ` ` + d + ` }`, "", nil, -1},
		{"second operation", `query A { __typename } query B($m: String) { ` + d + ` }`, "B", nil, 5},
		{"with typename", `query($m: String) { __typename ` + d + ` }`, "", nil, 5},
	}
	run := func(c tc, method string) (int, string) {
		v := map[string]any{}
		for k, x := range vars {
			v[k] = x
		}
		for k, x := range c.vars {
			v[k] = x
		}
		if method == http.MethodGet {
			vj, _ := json.Marshal(v)
			q := url.Values{"query": {c.doc}, "variables": {string(vj)}}
			if c.op != "" {
				q.Set("operationName", c.op)
			}
			code, _, body := s.call(t, method, "/graphql?"+q.Encode(), key, "")
			return code, body
		}
		b := map[string]any{"query": c.doc, "variables": v}
		if c.op != "" {
			b["operationName"] = c.op
		}
		raw, _ := json.Marshal(b)
		code, _, body := s.call(t, method, "/graphql", key, string(raw))
		return code, body
	}
	check := func(name, body string, busy bool, calls int) {
		t.Helper()
		var out struct {
			Data   json.RawMessage
			Errors []struct {
				Extensions map[string]any
			}
			Extensions struct {
				Cost struct{ Calls map[string]int }
			}
		}
		json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(body, "\r\n---"))), &out)
		if calls < 0 { // one inspiration or deals search per operation: refused before the slot
			if len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != flightgraph.ECodeQueryRootFields {
				t.Errorf("%s: %s, want QUERY_400.003", name, body)
			}
			return
		}
		if busy {
			if len(out.Errors) == 0 || out.Errors[0].Extensions["code"] != flightgraph.ECodeShed {
				t.Errorf("%s with every slot busy: %s, want %s", name, body, flightgraph.ECodeShed)
			}
			return
		}
		if len(out.Errors) != 0 || out.Extensions.Cost.Calls["inspire"] != calls {
			t.Errorf("%s: %s, want inspire charged %d", name, body, calls)
		}
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, c := range cases {
			_, body := run(c, method)
			if !strings.Contains(body, "{") {
				t.Errorf("%s %s: %s", method, c.name, body)
				continue
			}
			check(method+" "+c.name, body, false, c.calls)
			leave := s.takeHeavySlot(t, method+" "+c.name)
			_, body = run(c, method)
			check(method+" "+c.name, body, true, c.calls)
			leave()
			s.heavySlotsFree(t, method+" "+c.name)
		}
	}
	// Persisted by hash: registered, then run by hash alone, busy and free.
	doc := `query($m: String) { ... on Query { ` + d + ` } }`
	sum := sha256.Sum256([]byte(doc))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	withText, _ := json.Marshal(map[string]any{"query": doc, "variables": vars, "extensions": ext})
	hashOnly, _ := json.Marshal(map[string]any{"variables": vars, "extensions": ext})
	_, _, body := s.call(t, http.MethodPost, "/graphql", key, string(withText))
	check("persisted register", body, false, 5)
	_, _, body = s.call(t, http.MethodPost, "/graphql", key, string(hashOnly))
	check("persisted by hash", body, false, 5)
	leave := s.takeHeavySlot(t, "persisted by hash")
	_, _, body = s.call(t, http.MethodPost, "/graphql", key, string(hashOnly))
	check("persisted by hash", body, true, 5)
	leave()
	vj, _ := json.Marshal(vars)
	ej, _ := json.Marshal(ext)
	_, _, body = s.call(t, http.MethodGet, "/graphql?"+url.Values{"variables": {string(vj)}, "extensions": {string(ej)}}.Encode(), key, "")
	check("persisted by hash, GET", body, false, 5)
	s.heavySlotsFree(t, "persisted by hash, GET")
}
