package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// appOrigin is the origin of the web app of another team that the CORS tests call from.
const appOrigin = "https://app.example.com"

// raw makes one call as a browser would, without the REST answer's check against the OpenAPI
// document (a preflight is no operation of it), and returns status, headers and body.
func (s *testServer) raw(t testing.TB, method, path string, headers map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// preflight is a browser's preflight from appOrigin for method with the request headers named.
func (s *testServer) preflight(t testing.TB, path, method, headers string) (int, http.Header) {
	t.Helper()
	code, h, _ := s.raw(t, http.MethodOptions, path, map[string]string{"Origin": appOrigin,
		"Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers}, "")
	return code, h
}

// noCORS fails when h has any Access-Control-* header.
func noCORS(t *testing.T, what string, h http.Header) {
	t.Helper()
	for name := range h {
		if strings.HasPrefix(name, "Access-Control-") {
			t.Errorf("%s: %s: %q; want no CORS header", what, name, h.Values(name))
		}
	}
}

// exposes fails unless h lets a page of another origin (allowed) read the limit headers.
func exposes(t *testing.T, what string, h http.Header, allowed string) {
	t.Helper()
	if got := h.Get("Access-Control-Allow-Origin"); got != allowed {
		t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", what, got, allowed)
	}
	if h.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("%s: Access-Control-Allow-Credentials %q: credentials are headers, never cookies", what, h.Get("Access-Control-Allow-Credentials"))
	}
	exposed := strings.ToLower(h.Get("Access-Control-Expose-Headers"))
	for _, name := range []string{"RateLimit", "RateLimit-Policy", "Retry-After", "X-Packagekey-Qps-Allotted", "X-Packagekey-Qps-Current",
		"X-Packagekey-Quota-Allotted", "X-Packagekey-Quota-Current", "X-Plan-Quota-Reset", "X-Request-Id", "ETag"} {
		if !strings.Contains(", "+exposed+",", ", "+strings.ToLower(name)+",") {
			t.Errorf("%s: Access-Control-Expose-Headers %q does not name %s", what, h.Get("Access-Control-Expose-Headers"), name)
		}
	}
}

// TestCORSForTheAPIs: with no origins configured, every API edge answers a preflight from any
// origin (its methods, the credential, point-of-sale and GraphQL clients' headers, cached for
// two hours), and lets the page read each
// answer and its limit headers, with "*" and never credentials: /graphql (POST and GET), a REST
// path (with an api-key and with a bearer token), /openapi.json and the token endpoint. None of
// it varies by Origin.
func TestCORSForTheAPIs(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := map[string]string{"api-key": s.demo.APIKey, "Origin": appOrigin}

	for _, c := range []struct{ path, method, methods string }{
		{"/graphql", "POST", "GET, POST, OPTIONS"},
		{"/graphql", "GET", "GET, POST, OPTIONS"},
		{"/opendata/flightstatus/v1/ping", "GET", "GET, POST, OPTIONS"},
		{"/opendata/offers/v1/available-offers", "POST", "GET, POST, OPTIONS"},
		{"/openapi.json", "GET", "GET, OPTIONS"},
		{"/oauthcust/oauth/token", "POST", "POST, OPTIONS"},
	} {
		code, h := s.preflight(t, c.path, c.method, "api-key, authorization, content-type, svc-travel-country, apollographql-client-name")
		if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Methods") != c.methods ||
			h.Get("Allow") != c.methods || h.Get("Access-Control-Max-Age") != "7200" || h.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("preflight of %s %s: %d %v", c.method, c.path, code, h)
		}
		allowed := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
		for _, name := range []string{"api-key", "authorization", "content-type", "accept", "accept-language", "svc-travel-country", "svc-travel-host",
			"x-request-id", "apollographql-client-name", "apollographql-client-version", "apollo-require-preflight"} {
			if !strings.Contains(", "+allowed+",", ", "+name+",") {
				t.Errorf("preflight of %s: Access-Control-Allow-Headers %q does not name %s", c.path, allowed, name)
			}
		}
		if v := h.Values("Vary"); len(v) > 0 {
			t.Errorf("preflight of %s varies by %q: with every origin allowed it depends on none", c.path, v)
		}
	}
	q, _ := json.Marshal(map[string]any{"query": `{ flights(origin: "AMS", date: "` + storetest.Now.Format(flightgraph.DateLayout) + `", first: 1) { totalCount } }`})
	code, h, body := s.raw(t, "POST", "/graphql", map[string]string{"api-key": s.demo.APIKey, "Origin": appOrigin, "Content-Type": "application/json"}, string(q))
	if code != 200 || !strings.Contains(body, "totalCount") || h.Get("RateLimit") == "" {
		t.Fatalf("GraphQL POST: %d %v %s", code, h, body)
	}
	exposes(t, "GraphQL POST", h, "*")
	code, h, body = s.raw(t, "GET", "/graphql?query="+url.QueryEscape(`{ flights(origin: "AMS", date: "`+storetest.Now.Format(flightgraph.DateLayout)+`", first: 1) { totalCount } }`), map[string]string{"api-key": s.demo.APIKey, "Origin": appOrigin, "Accept": "application/json"}, "")
	if code != 200 || !strings.Contains(body, "totalCount") {
		t.Fatalf("GraphQL GET: %d %s", code, body)
	}
	exposes(t, "GraphQL GET", h, "*")
	code, h, body = s.raw(t, "GET", "/opendata/flightstatus/v1/ping", key, "")
	if code != 200 || h.Get("X-Packagekey-Qps-Current") == "" {
		t.Fatalf("REST GET with an api-key: %d %v %s", code, h, body)
	}
	exposes(t, "REST GET", h, "*")
	token := s.bearerToken(t, "")
	code, h, body = s.raw(t, "GET", "/opendata/offers/v1/reference-data", map[string]string{"Authorization": "Bearer " + token, "Origin": appOrigin}, "")
	if code != 200 {
		t.Fatalf("REST GET with a bearer token: %d %s", code, body)
	}
	exposes(t, "REST GET with a bearer token", h, "*")
	// A refusal is readable too: the page shows its code.
	code, h, body = s.raw(t, "GET", "/opendata/flightstatus/v1/ping", map[string]string{"Origin": appOrigin}, "")
	if code != 401 || restCode(t, body) == "" {
		t.Fatalf("REST GET without a credential: %d %s", code, body)
	}
	exposes(t, "REST 401", h, "*")
	code, h, _ = s.raw(t, "GET", "/openapi.json", map[string]string{"Origin": appOrigin}, "")
	if vary := strings.Join(h.Values("Vary"), ", "); code != 200 || !strings.Contains(vary, "api-key, Authorization") || strings.Contains(vary, "Origin") {
		t.Fatalf("/openapi.json: %d %v", code, h)
	}
	exposes(t, "/openapi.json", h, "*")
	form := url.Values{"grant_type": {"client_credentials"}}.Encode()
	code, h, body = s.raw(t, "POST", "/oauthcust/oauth/token", map[string]string{"Origin": appOrigin, "Content-Type": "application/x-www-form-urlencoded",
		"Authorization": oaBasic(s.demo.APIKey, s.demo.ClientSecret)}, form)
	if code != 200 || !strings.Contains(body, "access_token") {
		t.Fatalf("token: %d %s", code, body)
	}
	exposes(t, "token", h, "*")
	code, h, _ = s.raw(t, "POST", "/oauthcust/oauth/token", map[string]string{"Origin": appOrigin, "Content-Type": "application/x-www-form-urlencoded",
		"Authorization": oaBasic(s.demo.APIKey, "wrong")}, form)
	if code != 401 {
		t.Fatalf("token with a wrong secret: %d", code)
	}
	exposes(t, "token refused", h, "*")
}

// TestCORSRefusalIsReadable: a 429 carries Allow-Origin and exposes Retry-After, so that a page of
// another origin waits as long as it is told; and the preflights before it were never charged.
func TestCORSRefusalIsReadable(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.DefaultPlans = true // 5 calls a second, and the test clock's second never ends
		c.Refusals.PerAddress = 2
	})
	key := map[string]string{"api-key": s.demo.APIKey, "Origin": appOrigin}
	// More preflights than the plan's second and the address's refusals: none counts.
	for range 10 {
		if code, _ := s.preflight(t, "/opendata/flightstatus/v1/ping", "GET", "api-key"); code != http.StatusNoContent {
			t.Fatalf("preflight answered %d", code)
		}
	}
	for i := 1; i <= 5; i++ {
		code, h, body := s.raw(t, "GET", "/opendata/flightstatus/v1/ping", key, "")
		if code != 200 || h.Get("X-Packagekey-Qps-Current") != strconv.Itoa(i) {
			t.Fatalf("call %d after the preflights: %d %v %s", i, code, h, body)
		}
	}
	code, h, body := s.raw(t, "GET", "/opendata/flightstatus/v1/ping", key, "")
	if code != 429 || restCode(t, body) != flightgraph.ECodePerSecondLimit || h.Get("Retry-After") == "" {
		t.Fatalf("sixth call in one second: %d %v %s", code, h, body)
	}
	exposes(t, "REST 429", h, "*")
	q, _ := json.Marshal(map[string]any{"query": `{ flights(origin: "AMS", date: "` + storetest.Now.Format(flightgraph.DateLayout) + `", first: 1) { totalCount } }`})
	code, h, body = s.raw(t, "POST", "/graphql", map[string]string{"api-key": s.demo.APIKey, "Origin": appOrigin, "Content-Type": "application/json"}, string(q))
	if code != 429 || gqlCode(t, body) != flightgraph.ECodePerSecondLimit {
		t.Fatalf("GraphQL over the limit: %d %s", code, body)
	}
	exposes(t, "GraphQL 429", h, "*")
}

// TestCORSConfiguredOrigins: with --cors-origins, an origin listed is echoed (its preflight and its
// answers), any other gets no CORS header at all, and every API answer varies by Origin.
func TestCORSConfiguredOrigins(t *testing.T) {
	origins, err := server.ParseOrigins(appOrigin + ", http://127.0.0.1:3000")
	if err != nil {
		t.Fatal(err)
	}
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Server.CORSOrigins = origins })
	for _, c := range []struct {
		origin string
		allow  string
	}{{appOrigin, appOrigin}, {"http://127.0.0.1:3000", "http://127.0.0.1:3000"}, {"https://evil.example.com", ""}, {"https://app.example.com:8443", ""}, {"null", ""}} {
		_, h, _ := s.raw(t, http.MethodOptions, "/graphql", map[string]string{"Origin": c.origin, "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "api-key, content-type"}, "")
		if h.Get("Access-Control-Allow-Origin") != c.allow || h.Get("Vary") != "Origin" || (c.allow == "") != (h.Get("Access-Control-Allow-Headers") == "") {
			t.Errorf("preflight from %s: %v", c.origin, h)
		}
		code, h, body := s.raw(t, "GET", "/opendata/flightstatus/v1/ping", map[string]string{"api-key": s.demo.APIKey, "Origin": c.origin}, "")
		if code != 200 {
			t.Fatalf("REST from %s: %d %s", c.origin, code, body)
		}
		if c.allow == "" {
			noCORS(t, "REST from "+c.origin, h)
		} else {
			exposes(t, "REST from "+c.origin, h, c.allow)
		}
		if h.Get("Vary") != "Origin" {
			t.Errorf("REST from %s: Vary %q, want Origin", c.origin, h.Values("Vary"))
		}
	}
	// /openapi.json varies by the credentials already, and by Origin now.
	_, h, _ := s.raw(t, "GET", "/openapi.json", map[string]string{"Origin": appOrigin}, "")
	// (and by Accept-Encoding, compressed)
	if vary := strings.Join(h.Values("Vary"), ", "); vary != "Origin, Accept-Encoding, api-key, Authorization" {
		t.Errorf("/openapi.json Vary %q", vary)
	}
	exposes(t, "/openapi.json", h, appOrigin)
}

// TestCORSNeverForThePortal: the portal's pages and its GraphQL (whose session is a cookie), the
// playground, the GraphiQL page of a browser's visit to /graphql, web's assets, the probes and
// the bare address send no CORS header, to a preflight or a call from another origin.
func TestCORSNeverForThePortal(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	page := map[string]string{"Origin": appOrigin, "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
	for _, path := range []string{"/portal", "/portal/signin", "/portal/graphql", "/playground", "/portal/playground", "/graphql", "/static/portal.css", "/healthz", "/"} {
		if path != "/graphql" { // whose preflight is the API's: the page is for a GET
			code, h := s.preflight(t, path, "POST", "content-type")
			noCORS(t, "preflight of "+path, h)
			if code == http.StatusNoContent {
				t.Errorf("preflight of %s: answered by CORS", path)
			}
		}
		code, h, _ := s.raw(t, "GET", path, page, "")
		if path == "/graphql" && (code != 200 || h.Get("Content-Type") != "text/html; charset=utf-8") {
			t.Errorf("a browser's visit to /graphql: %d %v", code, h)
		}
		noCORS(t, "GET "+path, h)
	}
	q, _ := json.Marshal(map[string]any{"query": `{ __typename }`})
	code, h, body := s.raw(t, "POST", "/portal/graphql", map[string]string{"Origin": appOrigin, "Content-Type": "application/json"}, string(q))
	if code != 200 {
		t.Fatalf("POST /portal/graphql: %d %s", code, body)
	}
	noCORS(t, "POST /portal/graphql", h)
}

// TestBareAddress: a person's browser at / is sent to the portal; an API client asking for JSON,
// or for nothing in particular, gets the unknown path's 404.
func TestBareAddress(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	code, h, _ := s.raw(t, "GET", "/", map[string]string{"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, "")
	if code != http.StatusSeeOther || h.Get("Location") != "/portal" {
		t.Errorf("a browser at /: %d %v", code, h)
	}
	for _, accept := range []string{"application/json", "", "*/*", "application/json, text/html"} {
		code, _, body := s.raw(t, "GET", "/", map[string]string{"Accept": accept}, "")
		if code != http.StatusNotFound || restCode(t, body) != flightgraph.ECodeUnknownPath {
			t.Errorf("Accept %q at /: %d %s", accept, code, body)
		}
	}
	if code, _, body := s.raw(t, "GET", "/?x=1", map[string]string{"Accept": "text/html"}, ""); code != http.StatusNotFound {
		t.Errorf("a query string at /: %d %s", code, body)
	}
}

// TestParseOrigins: --cors-origins takes origins as a browser names them, and nothing else.
func TestParseOrigins(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "", want: nil},
		{in: "*", want: nil},
		{in: "https://App.example.com, http://127.0.0.1:3000", want: []string{"https://app.example.com", "http://127.0.0.1:3000"}},
		{in: "https://app.example.com/", bad: true},
		{in: "https://app.example.com/path", bad: true},
		{in: "app.example.com", bad: true},
		{in: "ftp://app.example.com", bad: true},
		{in: "https://user@app.example.com", bad: true},
		{in: "https://app.example.com?", bad: true},
		{in: "https://a.example.com,,https://b.example.com", bad: true},
		{in: "https://a.example.com, *", bad: true},
	} {
		got, err := server.ParseOrigins(c.in)
		if (err != nil) != c.bad || strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("ParseOrigins(%q) = %q, %v", c.in, got, err)
		}
	}
}

// corsPage is the page of another team's web app: its script calls the API of the origin in its
// query string with the api-key and the bearer token given there, and reports what it could read.
const corsPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Departures board</title></head><body><script>
const params = new URLSearchParams(location.search);
const api = params.get("api");
async function call(path, init) {
  try {
    const r = await fetch(api + path, init);
    return {status: r.status, body: await r.text(), rateLimit: r.headers.get("RateLimit"), requestId: r.headers.get("X-Request-Id")};
  } catch (e) {
    return {error: String(e)};
  }
}
// stream opens a graphql-sse subscription and reads it until a keep-alive comment, then ends it.
async function stream(body) {
  const abort = new AbortController();
  try {
    const r = await fetch(api + "/graphql", {method: "POST", signal: abort.signal, body: body,
      headers: {"api-key": params.get("key"), "Content-Type": "application/json", "Accept": "text/event-stream"}});
    const reader = r.body.getReader(), text = new TextDecoder();
    let read = "";
    while (!read.includes(": ping")) {
      const {value, done} = await reader.read();
      if (done) break;
      read += text.decode(value);
    }
    abort.abort();
    return {status: r.status, body: read, requestId: r.headers.get("X-Request-Id")};
  } catch (e) {
    return {error: String(e)};
  }
}
window.results = (async () => {
  const query = JSON.stringify({query: params.get("query")});
  return JSON.stringify({
    stream: await stream(JSON.stringify({query: params.get("subscription")})),
    graphql: await call("/graphql", {method: "POST", headers: {"api-key": params.get("key"), "Content-Type": "application/json"}, body: query}),
    rest: await call("/opendata/offers/v1/reference-data", {headers: {"Authorization": "Bearer " + params.get("token"), "Accept-Language": "en-GB"}}),
    portal: await call("/portal/graphql", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({query: "{ __typename }"})}),
  });
})();
</script></body></html>`

// TestCORSInABrowser: in Chromium, a page served from a second origin on loopback calls /graphql
// with an api-key and a REST path with a bearer token (client credentials), and reads both
// answers and their RateLimit and X-Request-Id headers; it opens a graphql-sse subscription and
// reads it as it streams, up to its keep-alive comment; the same page cannot read
// /portal/graphql, whose preflight gets no Access-Control-Allow-Origin.
func TestCORSInABrowser(t *testing.T) {
	tab := browser(t)
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Server.StreamKeepAlive = 200 * time.Millisecond })
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, corsPage)
	}))
	t.Cleanup(app.Close)
	if app.URL == s.URL {
		t.Fatal("one origin for both")
	}
	token := s.bearerToken(t, "")
	q := url.Values{"api": {s.URL}, "key": {s.demo.APIKey}, "token": {token},
		"query":        {`{ flights(origin: "AMS", date: "` + storetest.Now.Format(flightgraph.DateLayout) + `", first: 1) { totalCount } }`},
		"subscription": {`subscription { departures(airport: "AMS") { position } }`}}
	ctx, cancel := tab()
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(app.URL+"/?"+q.Encode())); err != nil {
		t.Fatal(err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.results`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		Status    int
		Body      string
		RateLimit string
		RequestID string
		Error     string
	}
	t.Logf("what the page read: %.600s", out)
	var got struct{ GraphQL, REST, Portal, Stream answer }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if a := got.GraphQL; a.Status != 200 || !strings.Contains(a.Body, `"totalCount"`) || !strings.Contains(a.RateLimit, `"second";r=`) || a.RequestID == "" {
		t.Errorf("/graphql with an api-key, from %s: %+v", app.URL, a)
	}
	if a := got.REST; a.Status != 200 || !json.Valid([]byte(a.Body)) || !strings.Contains(a.RateLimit, `"day";r=`) || a.RequestID == "" {
		t.Errorf("REST with a bearer token, from %s: %+v", app.URL, a)
	}
	if a := got.Stream; a.Status != 200 || !strings.Contains(a.Body, ": ping") || strings.Contains(a.Body, "errors") || a.RequestID == "" {
		t.Errorf("a graphql-sse subscription from %s: %+v", app.URL, a)
	}
	if a := got.Portal; a.Error == "" || a.Status != 0 || a.Body != "" {
		t.Errorf("/portal/graphql from %s was readable: %+v", app.URL, a)
	}
}

// BenchmarkCORS is what the middleware adds to a request, over a handler that does nothing: an
// API call (two headers), a preflight it answers, and a portal page it leaves alone.
//
//	go test ./server -run '^$' -bench CORS
func BenchmarkCORS(b *testing.B) {
	h := server.NewCORS(nil).Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, c := range []struct {
		name, method, path string
		headers            map[string]string
	}{
		{"graphql", "POST", "/graphql", map[string]string{"Origin": appOrigin, "Content-Type": "application/json"}},
		{"rest", "GET", "/opendata/flightstatus/v1/ping", map[string]string{"Origin": appOrigin}},
		{"preflight", "OPTIONS", "/graphql", map[string]string{"Origin": appOrigin, "Access-Control-Request-Method": "POST"}},
		{"portal", "GET", "/portal/signin", map[string]string{"Accept": "text/html"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest(c.method, c.path, nil)
			for k, v := range c.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				clear(w.HeaderMap)
				h.ServeHTTP(w, r)
			}
		})
	}
}
