package server_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// rawClient sends what it is told and decodes nothing: the bytes on the wire are what it reads.
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// wire sends a request as it is (its Accept-Encoding and Content-Encoding too) and returns the
// answer with its body as sent, still coded.
func (s *testServer) wire(t testing.TB, method, path string, headers map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// decoded returns a body as its Content-Encoding says to read it.
func decoded(t testing.TB, h http.Header, b []byte) []byte {
	t.Helper()
	var r io.Reader
	var err error
	switch ce := h.Get("Content-Encoding"); ce {
	case "":
		return b
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(b))
	case "zstd":
		var d *zstd.Decoder
		d, err = zstd.NewReader(bytes.NewReader(b))
		r = d
	default:
		t.Fatalf("Content-Encoding %q", ce)
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gzipped is b gzipped.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func varyLists(h http.Header, field string) bool {
	for _, line := range h.Values("Vary") {
		for f := range strings.SplitSeq(line, ",") {
			if strings.EqualFold(strings.TrimSpace(f), field) {
				return true
			}
		}
	}
	return false
}

// TestAnswersCompressed: an answer of the API edges of 1 KiB or more is compressed when the
// client accepts it (gzip, or zstd), and sent as is otherwise; a smaller answer is never; every
// answer says Vary: Accept-Encoding. The portal's pages and GraphQL endpoint are never
// compressed (BREACH: they answer secrets beside what a cross-site request sent). The access log
// sees the statuses of compressed answers.
func TestAnswersCompressed(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := map[string]string{"api-key": s.demo.APIKey, "Content-Type": "application/json"}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	board := []byte(jsonBody(departures, departuresVars(50)))
	dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	introspection := []byte(jsonBody(`{ __schema { types { name description fields { name description } } } }`, nil))

	cases := []struct {
		name, method, path string
		headers            map[string]string
		body               []byte
		want               string // the Content-Encoding wanted
	}{
		{"GraphQL, gzip", "POST", "/graphql", with(key, "Accept-Encoding", "gzip"), board, "gzip"},
		{"GraphQL, gzip or zstd", "POST", "/graphql", with(key, "Accept-Encoding", "gzip, deflate, br, zstd"), board, "zstd"},
		{"GraphQL, gzip preferred", "POST", "/graphql", with(key, "Accept-Encoding", "zstd;q=0.5, gzip"), board, "gzip"},
		{"GraphQL, not accepted", "POST", "/graphql", key, board, ""},
		{"GraphQL, gzip refused", "POST", "/graphql", with(key, "Accept-Encoding", "gzip;q=0, identity"), board, ""},
		{"GraphQL, small", "POST", "/graphql", with(key, "Accept-Encoding", "gzip"), []byte(jsonBody(`{ __typename }`, nil)), ""},
		{"REST", "GET", "/opendata/flightstatus?startRange=2026-11-21&endRange=2026-11-24&origin=AMS&pageSize=50", with(key, "Accept-Encoding", "gzip"), nil, "gzip"},
		{"REST error, small", "GET", "/opendata/flightstatus/nope", with(key, "Accept-Encoding", "gzip"), nil, ""},
		{"OpenAPI", "GET", "/openapi.json", map[string]string{"Accept-Encoding": "gzip"}, nil, "gzip"},
		{"static asset", "GET", "/static/graphiql/react-dom.production.min.js", map[string]string{"Accept-Encoding": "gzip"}, nil, "gzip"},
		{"portal page", "GET", "/portal/apis", map[string]string{"Accept-Encoding": "gzip", "Accept": "text/html"}, nil, ""},
		{"portal GraphQL", "POST", "/portal/graphql", map[string]string{"Accept-Encoding": "gzip", "Content-Type": "application/json", "Authorization": "Bearer " + dev.token}, introspection, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, raw := s.wire(t, c.method, c.path, c.headers, c.body)
			body := decoded(t, resp.Header, raw)
			if resp.StatusCode >= 500 || len(body) == 0 {
				t.Fatalf("%d: %.300s", resp.StatusCode, body)
			}
			if ce := resp.Header.Get("Content-Encoding"); ce != c.want {
				t.Errorf("%d bytes (%d sent): Content-Encoding %q, want %q", len(body), len(raw), ce, c.want)
			}
			if c.want != "" && (len(body) < 1024 || len(raw) > len(body)/2) {
				t.Errorf("%d bytes sent as %d", len(body), len(raw))
			}
			if c.want == "" && c.name != "GraphQL, small" && c.name != "REST error, small" && len(body) < 1024 {
				t.Errorf("the uncompressed case is %d bytes: it tests nothing", len(body))
			}
			portal := strings.HasPrefix(c.path, "/portal")
			if varyLists(resp.Header, "Accept-Encoding") == portal {
				t.Errorf("Vary %q", resp.Header.Values("Vary"))
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && !json.Valid(body) {
				t.Errorf("not JSON once decoded: %.200s", body)
			}
		})
	}
	if st := requestLines(s.log.String()); st["200"] < len(cases)-2 {
		t.Errorf("the access log's statuses: %v", st)
	}
}

// TestCompressedETags: a compressed answer's ETag is the identity one's with the coding's
// suffix, another representation's tag; a client holding either tag gets 304 with the tag it
// holds, and HEAD still answers.
func TestCompressedETags(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	resp, raw := s.wire(t, "GET", "/openapi.json", nil, nil)
	identity := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || identity != flightgraph.ETag(raw) {
		t.Fatalf("identity: %d, ETag %q", resp.StatusCode, identity)
	}
	for _, coding := range []string{"gzip", "zstd"} {
		resp, raw := s.wire(t, "GET", "/openapi.json", map[string]string{"Accept-Encoding": coding}, nil)
		tag := resp.Header.Get("ETag")
		if resp.Header.Get("Content-Encoding") != coding || tag != strings.TrimSuffix(identity, `"`)+"-"+coding+`"` || flightgraph.ETag(decoded(t, resp.Header, raw)) != identity {
			t.Fatalf("%s: Content-Encoding %q, ETag %q (identity %q)", coding, resp.Header.Get("Content-Encoding"), tag, identity)
		}
		for _, held := range []string{tag, "W/" + tag, `"other", ` + tag} {
			resp, raw = s.wire(t, "GET", "/openapi.json", map[string]string{"Accept-Encoding": coding, "If-None-Match": held}, nil)
			if resp.StatusCode != http.StatusNotModified || len(raw) != 0 || resp.Header.Get("ETag") != tag {
				t.Errorf("If-None-Match %s: %d with %d bytes, ETag %q; want 304 and %s", held, resp.StatusCode, len(raw), resp.Header.Get("ETag"), tag)
			}
		}
	}
	resp, raw = s.wire(t, "GET", "/openapi.json", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": identity}, nil)
	if resp.StatusCode != http.StatusNotModified || resp.Header.Get("ETag") != identity {
		t.Errorf("the identity tag, from a gzip client: %d, ETag %q", resp.StatusCode, resp.Header.Get("ETag"))
	}
	resp, raw = s.wire(t, "HEAD", "/openapi.json", map[string]string{"Accept-Encoding": "gzip"}, nil)
	if resp.StatusCode != 200 || len(raw) != 0 || resp.Header.Get("ETag") == "" {
		t.Errorf("HEAD: %d with %d bytes, ETag %q", resp.StatusCode, len(raw), resp.Header.Get("ETag"))
	}
	// A schema-only GraphQL answer (introspection) keeps its tags the same way.
	q := "/graphql?query=" + strings.ReplaceAll(`{__schema{types{name}}}`, "{", "%7B")
	q = strings.ReplaceAll(q, "}", "%7D")
	h := map[string]string{"api-key": s.demo.APIKey, "Accept": "application/json", "Accept-Encoding": "gzip"}
	resp, _ = s.wire(t, "GET", q, h, nil)
	tag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasSuffix(tag, `-gzip"`) {
		t.Fatalf("introspection: %d, Content-Encoding %q, ETag %q", resp.StatusCode, resp.Header.Get("Content-Encoding"), tag)
	}
	h["If-None-Match"] = tag
	if resp, _ = s.wire(t, "GET", q, h, nil); resp.StatusCode != http.StatusNotModified || resp.Header.Get("ETag") != tag {
		t.Errorf("introspection with If-None-Match %s: %d, ETag %q", tag, resp.StatusCode, resp.Header.Get("ETag"))
	}
	if st := requestLines(s.log.String()); st["304"] < 7 {
		t.Errorf("the access log's statuses: %v", st)
	}
}

// TestGzipRequestBodies: a request body may be gzip on both edges; it is bounded after decoding,
// so a zip bomb is refused with 413 before any work, and a body that sends much to decode little
// is refused too; a body that is not gzip is 400, and another coding 415.
func TestGzipRequestBodies(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	bearer := "Bearer " + s.bearerToken(t, "")
	edges := []struct {
		name, path string
		headers    map[string]string
		body       []byte
		rest       bool
	}{
		{"GraphQL", "/graphql", map[string]string{"api-key": s.demo.APIKey}, []byte(jsonBody(departures, departuresVars(5))), false},
		{"REST", "/opendata/offers/v1/available-offers", map[string]string{"Authorization": bearer}, []byte(jsonOf(offerSearch("AMS", "NYC", "ADT"))), true},
	}
	// 48 MiB of spaces in about 48 KiB of gzip, and more than the bound of empty members.
	bomb := gzipped(bytes.Repeat([]byte{' '}, 48<<20))
	// (One empty member, repeated: a gzip writer a member made the test take minutes under the
	// race detector.)
	empty := gzipped(nil)
	empties := bytes.Repeat(empty, graph.MaxBodyBytes/len(empty)+1)
	for _, e := range edges {
		t.Run(e.name, func(t *testing.T) {
			send := func(encoding string, body []byte) (int, http.Header, string) {
				t.Helper()
				h := map[string]string{"Content-Type": "application/json", "Content-Encoding": encoding}
				for k, v := range e.headers {
					h[k] = v
				}
				resp, b := s.wire(t, "POST", e.path, h, body)
				return resp.StatusCode, resp.Header, string(b)
			}
			code := func(body string) string {
				if e.rest {
					return restCode(t, body)
				}
				return gqlCode(t, body)
			}
			if status, _, body := send("gzip", gzipped(e.body)); status != 200 || strings.Contains(body, `"errors"`) {
				t.Errorf("gzip: %d %.300s", status, body)
			}
			if status, _, body := send("identity", e.body); status != 200 {
				t.Errorf("identity: %d %.300s", status, body)
			}
			if status, _, body := send("gzip", bomb); status != http.StatusRequestEntityTooLarge || code(body) != flightgraph.ECodeBodyTooLarge {
				t.Errorf("a zip bomb of %d bytes: %d %.300s", len(bomb), status, body)
			}
			if status, _, body := send("gzip", empties); status != http.StatusRequestEntityTooLarge || code(body) != flightgraph.ECodeBodyTooLarge {
				t.Errorf("%d bytes of empty members: %d %.300s", len(empties), status, body)
			}
			if status, _, body := send("gzip", e.body); status != http.StatusBadRequest || code(body) != flightgraph.ECodeBadBody {
				t.Errorf("not gzip: %d %.300s", status, body)
			}
			for _, coding := range []string{"br", "deflate", "gzip, br", "zstd"} {
				if status, h, body := send(coding, e.body); status != http.StatusUnsupportedMediaType || code(body) != flightgraph.ECodeBadMediaType || h.Get("Accept-Encoding") != "gzip" {
					t.Errorf("Content-Encoding %s: %d, Accept-Encoding %q: %.300s", coding, status, h.Get("Accept-Encoding"), body)
				}
			}
		})
	}
	if len(bomb) > graph.MaxBodyBytes {
		t.Fatalf("the bomb is %d bytes: the bound on what is sent refuses it, not the one on what it decodes to", len(bomb))
	}
}
