package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/flightgraph/flightgraph/tracing"
)

// otlpReceiver is an OTLP/HTTP receiver in the test's process: it decodes the export requests
// posted to /v1/traces (protobuf, as the SDK's exporter sends them) and keeps their spans and
// their bodies as they came.
type otlpReceiver struct {
	*httptest.Server
	mu        sync.Mutex
	bodies    [][]byte
	spans     []*tracepb.Span
	resources []map[string]string
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	rc := &otlpReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("the receiver was sent %s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
			http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		var req collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(raw, &req)
		}
		if err != nil {
			t.Errorf("the receiver could not decode an export: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, raw)
		for _, rs := range req.ResourceSpans {
			rc.resources = append(rc.resources, attrMap(rs.GetResource().GetAttributes()))
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// trace returns the spans received of trace id.
func (rc *otlpReceiver) trace(id string) []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []*tracepb.Span
	for _, sp := range rc.spans {
		if hex.EncodeToString(sp.TraceId) == id {
			out = append(out, sp)
		}
	}
	return out
}

// attrMap renders attributes as strings: string slices joined by commas.
func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = fmt.Sprint(v.IntValue)
		case *commonpb.AnyValue_BoolValue:
			m[kv.Key] = fmt.Sprint(v.BoolValue)
		case *commonpb.AnyValue_ArrayValue:
			var parts []string
			for _, e := range v.ArrayValue.Values {
				parts = append(parts, e.GetStringValue())
			}
			m[kv.Key] = strings.Join(parts, ",")
		default:
			m[kv.Key] = kv.Value.String()
		}
	}
	return m
}

// TestTracing: with a tracer exporting to an OTLP/HTTP receiver in the test's process, a request
// that carries a traceparent is served under a server span that is the caller's span's child, in
// its trace, named by the operation (GraphQL's type and name, REST's route), with the caller's key
// id, the APIs charged, the status and the error codes answered; its SQL statements and its
// offers search are child spans, the statements with their text and never their values; a request
// whose traceparent says not sampled makes no span at all; and no credential, password, session,
// token or a hash of one appears anywhere in what is exported.
func TestTracing(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		rc := newOTLPReceiver(t)
		tr, err := tracing.New(ctx, tracing.Config{Endpoint: rc.URL, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Shutdown(context.Background()) })
		db := storetest.Seeded(t, dialect, os.Getenv)
		db.OnStatement = tr.Statements(dialect)
		s := newServerWith(t, db, func(c *serverConfig) { c.Server.Trace, c.Trace = tr.Handler, tr.Work })
		bearerToken := s.bearerToken(t, "")
		dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		key := map[string]string{"api-key": s.demo.APIKey}

		n := 0
		// traced returns headers with a traceparent of a new trace (sampled or not) beside extra,
		// and the trace's and the caller's span's ids.
		traced := func(sampled bool, extra map[string]string) (h map[string]string, traceID, parentID string) {
			n++
			traceID, parentID = fmt.Sprintf("%032x", 0x5eed0000+n), fmt.Sprintf("%016x", 0xca11e40000+n)
			flags := "01"
			if !sampled {
				flags = "00"
			}
			h = map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-" + flags, "tracestate": "vendor=opaque"}
			for k, v := range extra {
				h[k] = v
			}
			return h, traceID, parentID
		}

		h, departuresTrace, departuresParent := traced(true, key)
		if resp := s.queryAs(t, h, departures, departuresVars(5)); len(resp.Errors) > 0 {
			t.Fatalf("departures: %+v", resp.Errors)
		}
		h, restTrace, restParent := traced(true, key)
		if code, _, body := s.call(t, http.MethodGet, fmt.Sprintf("/opendata/flightstatus/20261122%%2BXX%%2B%04d", unknownFlightNumber), h, ""); code != http.StatusNotFound {
			t.Fatalf("unknown flight: %d %s", code, body)
		}
		h, offersTrace, _ := traced(true, map[string]string{"Authorization": "Bearer " + bearerToken})
		if resp := s.queryAs(t, h, offersQuery, map[string]any{"s": gqlSearch("GOT", "JFK", "ADT")}); len(resp.Errors) > 0 {
			t.Fatalf("availableOffers: %+v", resp.Errors)
		}
		h, signInTrace, _ := traced(true, nil)
		if resp := s.portalAs(t, h, `mutation SignIn($e: String!, $p: String!) { signIn(email: $e, password: $p) { token } }`,
			map[string]any{"e": s.demo.DeveloperEmail, "p": s.demo.DeveloperPassword}); len(resp.Errors) > 0 {
			t.Fatalf("signIn: %+v", resp.Errors)
		}
		h, meTrace, _ := traced(true, map[string]string{"Authorization": "Bearer " + dev.token})
		if resp := s.portalAs(t, h, `query Me { me { account { email } } }`, nil); len(resp.Errors) > 0 {
			t.Fatalf("me: %+v", resp.Errors)
		}
		// A portal page, which runs the portal's operations in-process, signed in with its cookie.
		visitor := newVisitor(t, s.URL, nil)
		visitor.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		siteURL, _ := url.Parse(s.URL)
		var cookies []string
		for _, c := range visitor.c.Jar.Cookies(siteURL) {
			cookies = append(cookies, c.Name+"="+c.Value)
		}
		h, pageTrace, _ := traced(true, map[string]string{"Cookie": strings.Join(cookies, "; "), "Accept": "text/html"})
		if code, _, body := s.call(t, http.MethodGet, "/portal", h, ""); code != http.StatusOK || !strings.Contains(body, s.demo.DeveloperEmail) {
			t.Fatalf("the portal's page: %d %.300s", code, body)
		}
		h, invalidTrace, _ := traced(true, key)
		if resp := s.queryAs(t, h, `query Bad { flights(origin: "AMS") { nonsense } }`, nil); len(resp.Errors) == 0 {
			t.Fatal("a query of an unknown field was answered")
		}
		h, unsampledTrace, _ := traced(false, key)
		if resp := s.queryAs(t, h, departures, departuresVars(5)); len(resp.Errors) > 0 {
			t.Fatalf("departures: %+v", resp.Errors)
		}

		// A server span ends as its answer has gone: wait for the last ones.
		var server map[string]*tracepb.Span
		for deadline := time.Now().Add(10 * time.Second); ; {
			if err := tr.ForceFlush(ctx); err != nil {
				t.Fatal(err)
			}
			server = map[string]*tracepb.Span{}
			for _, id := range []string{departuresTrace, restTrace, offersTrace, signInTrace, meTrace, pageTrace, invalidTrace} {
				for _, sp := range rc.trace(id) {
					if sp.Kind == tracepb.Span_SPAN_KIND_SERVER {
						server[id] = sp
					}
				}
			}
			if len(server) == 7 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		check := func(id, name string, want map[string]string) (*tracepb.Span, map[string]string) {
			t.Helper()
			sp := server[id]
			if sp == nil {
				t.Fatalf("no server span of trace %s (%s)", id, name)
			}
			got := attrMap(sp.Attributes)
			if sp.Name != name {
				t.Errorf("trace %s: server span %q, want %q (%v)", id, sp.Name, name, got)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %s = %q, want %q (%v)", name, k, got[k], v, got)
				}
			}
			return sp, got
		}
		keyID := s.raiseLimitsKeyID
		sp, _ := check(departuresTrace, "query Departures", map[string]string{"http.request.method": "POST", "http.route": "/graphql",
			"http.response.status_code": "200", "graphql.operation.type": "query", "graphql.operation.name": "Departures",
			"flightgraph.caller.kind": "api_key", "flightgraph.key.id": keyID, "flightgraph.apis": "flightstatus", "flightgraph.calls": "1"})
		if hex.EncodeToString(sp.ParentSpanId) != departuresParent || sp.TraceState != "vendor=opaque" {
			t.Errorf("the server span's parent is %x (%q), want the traceparent's %s", sp.ParentSpanId, sp.TraceState, departuresParent)
		}
		statements := 0
		for _, c := range rc.trace(departuresTrace) {
			if c.Kind != tracepb.Span_SPAN_KIND_CLIENT {
				continue
			}
			statements++
			a := attrMap(c.Attributes)
			if !bytes.Equal(c.ParentSpanId, sp.SpanId) || a["db.system.name"] == "" || !strings.HasPrefix(a["db.query.text"], a["db.operation.name"]) ||
				!strings.HasPrefix(c.Name, a["db.operation.name"]) {
				t.Errorf("SQL span %q: parent %x (want %x), %v", c.Name, c.ParentSpanId, sp.SpanId, a)
			}
			if strings.Contains(a["db.query.text"], "AMS") {
				t.Errorf("SQL span %q holds a value of the query: %s", c.Name, a["db.query.text"])
			}
		}
		if statements == 0 {
			t.Error("the departures' SQL statements made no spans")
		}
		t.Logf("departures: %d SQL spans", statements)

		sp, _ = check(restTrace, "GET /opendata/flightstatus/{id}", map[string]string{"http.route": "/opendata/flightstatus/{id}",
			"http.response.status_code": "404", "flightgraph.key.id": keyID, "flightgraph.apis": "flightstatus",
			"error.type": flightgraph.ECodeFlightNotFound, "flightgraph.error.codes": flightgraph.ECodeFlightNotFound})
		if hex.EncodeToString(sp.ParentSpanId) != restParent || sp.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("REST's span: parent %x, want %s; status %v (a 404 is the caller's, not a failure)", sp.ParentSpanId, restParent, sp.Status)
		}

		sp, _ = check(offersTrace, "query", map[string]string{"graphql.operation.type": "query", "flightgraph.caller.kind": "access_token",
			"flightgraph.key.id": keyID, "flightgraph.apis": "offers"})
		var search *tracepb.Span
		for _, c := range rc.trace(offersTrace) {
			if c.Name == "travel.offers" {
				search = c
			}
		}
		if search == nil || !bytes.Equal(search.ParentSpanId, sp.SpanId) {
			t.Fatalf("no travel.offers span under the offers query's (%v)", search)
		}
		under := 0
		for _, c := range rc.trace(offersTrace) {
			if c.Kind == tracepb.Span_SPAN_KIND_CLIENT && bytes.Equal(c.ParentSpanId, search.SpanId) {
				under++
			}
		}
		if under == 0 {
			t.Error("the offers search's statements are not its children")
		}

		check(signInTrace, "mutation SignIn", map[string]string{"http.route": "/portal/graphql", "graphql.operation.type": "mutation",
			"flightgraph.caller.kind": "anonymous"})
		_, me := check(meTrace, "query Me", map[string]string{"flightgraph.caller.kind": "session"})
		if me["flightgraph.account.id"] == "" || me["flightgraph.key.id"] != "" {
			t.Errorf("a portal session's span: %v", me)
		}
		_, page := check(pageTrace, "GET /portal", map[string]string{"http.route": "/portal", "flightgraph.caller.kind": "session"})
		if page["graphql.operation.type"] == "" || page["flightgraph.account.id"] != me["flightgraph.account.id"] {
			t.Errorf("the page's span: %v", page)
		}
		check(invalidTrace, "POST /graphql", map[string]string{"error.type": "GRAPHQL_VALIDATION_FAILED"})

		if got := rc.trace(unsampledTrace); len(got) > 0 {
			t.Errorf("a request its caller did not sample made %d spans, the first %q", len(got), got[0].Name)
		}

		rc.mu.Lock()
		defer rc.mu.Unlock()
		if len(rc.resources) == 0 || rc.resources[0]["service.name"] != "flightgraph" || rc.resources[0]["service.version"] != "test" {
			t.Errorf("the resource: %v", rc.resources)
		}
		all := bytes.Join(rc.bodies, nil)
		if !bytes.Contains(all, []byte(keyID)) {
			t.Fatal("the key id is nowhere in the exports: the search for secrets below would find nothing either")
		}
		secrets := map[string]string{"api-key": s.demo.APIKey, "client secret": s.demo.ClientSecret, "api-key's hash": access.HashCredential(s.demo.APIKey),
			"developer password": s.demo.DeveloperPassword, "operator password": s.demo.OperatorPassword, "customer password": s.demo.CustomerPassword,
			"bearer token": bearerToken, "bearer token's hash": access.HashCredential(bearerToken), "portal session": dev.token,
			"portal session's hash": access.HashCredential(dev.token), "page's cookie": strings.Join(cookies, "; ")}
		for _, c := range cookies {
			_, value, _ := strings.Cut(c, "=")
			secrets["page's session "+c[:min(len(c), 12)]] = value
		}
		for what, secret := range secrets {
			if secret == "" {
				t.Fatalf("no %s to look for", what)
			}
			if bytes.Contains(all, []byte(secret)) {
				t.Errorf("the %s is in an exported span", what)
			}
		}
		names := map[string]int{}
		for _, sp := range rc.spans {
			names[sp.Name]++
		}
		t.Logf("%d spans exported in %d requests: %v", len(rc.spans), len(rc.bodies), slices.Sorted(maps.Keys(names)))
	})
}
