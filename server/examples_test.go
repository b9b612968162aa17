package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// examplesWindow is the days of flights the examples' tests seed ahead of storetest.Now: the
// examples depart a week ahead and return a fortnight ahead (rest/examples.go).
const examplesWindow = 15

// exampleRequest is the request an operation's examples in the OpenAPI document make.
type exampleRequest struct {
	method, path, operationID, product string
	query                              url.Values
	headers                            map[string]string
	body                               string
	// missing are the required parameters that have no example.
	missing []string
}

// exampleRequests reads, from a served OpenAPI document, the example request of every operation
// of the given products (all when products is nil), as Try it makes it: each parameter with an
// example sent (path, query and header), the JSON body's example as the body.
func exampleRequests(t *testing.T, doc *openapi3.T, products []string) []exampleRequest {
	t.Helper()
	var out []exampleRequest
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			product, _ := op.Extensions["x-flightgraph-product"].(string)
			if product == "" || products != nil && !slices.Contains(products, product) {
				continue
			}
			r := exampleRequest{method: method, path: path, operationID: op.OperationID, product: product, query: url.Values{}, headers: map[string]string{}}
			for _, ref := range op.Parameters {
				p := ref.Value
				if p.Example == nil {
					if p.Required {
						r.missing = append(r.missing, p.Name)
					}
					continue
				}
				v := fmt.Sprint(p.Example)
				switch p.In {
				case openapi3.ParameterInPath:
					r.path = strings.ReplaceAll(r.path, "{"+p.Name+"}", url.PathEscape(v))
				case openapi3.ParameterInQuery:
					r.query.Set(p.Name, v)
				case openapi3.ParameterInHeader:
					r.headers[p.Name] = v
				}
			}
			if op.RequestBody != nil {
				if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil {
					if mt.Example == nil {
						r.missing = append(r.missing, "the body")
					} else {
						b, err := json.Marshal(mt.Example)
						if err != nil {
							t.Fatal(err)
						}
						r.body = string(b)
					}
				}
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b exampleRequest) int { return strings.Compare(a.method+" "+a.path, b.method+" "+b.path) })
	return out
}

// TestOpenAPIExamples: every example of the served OpenAPI document is valid against its schema
// (kin-openapi), every required parameter and JSON body has one, and the example request of every
// operation of every API the demo developer holds, sent with the demo key (or its client
// credentials token, for OAuth APIs), answers 2xx, and an answer the document describes. The
// examples' dates are the server's clock's (storetest.Now), whatever day the test runs on.
func TestOpenAPIExamples(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.SeededWindow(t, dialect, os.Getenv, 1, examplesWindow))
		key := map[string]string{"api-key": s.demo.APIKey}
		start := time.Now()
		resp, err := http.Get(s.URL + "/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("the first /openapi.json, with its examples made: %v", time.Since(start).Round(time.Millisecond))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /openapi.json: %d %s", resp.StatusCode, raw)
		}
		doc, err := parseOpenAPI(raw) // validates the examples against their schemas too
		if err != nil {
			t.Fatalf("the served document: %v", err)
		}
		if !strings.Contains(string(raw), storetest.Now.AddDate(0, 0, 7).Format(flightgraph.DateLayout)) {
			t.Errorf("the served document has no date a week after the server's clock (%s)", storetest.Now.Format(flightgraph.DateLayout))
		}
		validateExamples(t, doc)

		var public []string
		for _, p := range access.Products {
			if p.Visibility == flightgraph.VisibilityPublic {
				public = append(public, p.Slug)
			}
		}
		token := s.bearerToken(t, "")
		ok, n := 0, 0
		for _, r := range exampleRequests(t, doc, public) {
			n++
			if len(r.missing) > 0 {
				t.Errorf("%s %s (%s): no example for %v", r.method, r.path, r.operationID, r.missing)
				continue
			}
			headers := map[string]string{}
			for k, v := range r.headers {
				headers[k] = v
			}
			if p := productOf(r.product); p != nil && p.Auth == flightgraph.AuthOAuth {
				headers["Authorization"] = "Bearer " + token
			} else {
				headers["api-key"] = key["api-key"]
			}
			target := r.path
			if len(r.query) > 0 {
				target += "?" + r.query.Encode()
			}
			if r.operationID == "streamFlightStatusEvents" {
				// A stream never ends: its answer starts (status and type), then the client leaves.
				if status, ctype := openStream(t, s.URL+target, headers); status != http.StatusOK || !strings.HasPrefix(ctype, "text/event-stream") {
					t.Errorf("%s %s with its examples: %d %q", r.method, target, status, ctype)
					continue
				}
				ok++
				continue
			}
			status, _, body := s.call(t, r.method, target, headers, r.body)
			if status < 200 || status > 299 {
				t.Errorf("%s %s (%s) with its examples: %d %.400s\nbody sent: %s", r.method, target, r.operationID, status, body, r.body)
				continue
			}
			ok++
		}
		t.Logf("%d of %d operations of the public APIs answer 2xx on their examples", ok, n)
		if n == 0 {
			t.Fatal("no operations")
		}

		// The operators' document, which has every API: its examples are valid too, and complete.
		op := s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword)
		code, _, all := s.call(t, http.MethodGet, "/openapi.json", map[string]string{"Authorization": "Bearer " + op.token}, "")
		if code != http.StatusOK {
			t.Fatalf("the operators' /openapi.json: %d", code)
		}
		doc, err = parseOpenAPI([]byte(all))
		if err != nil {
			t.Fatalf("the operators' document: %v", err)
		}
		validateExamples(t, doc)
		for _, r := range exampleRequests(t, doc, nil) {
			if len(r.missing) > 0 && !slices.Contains(public, r.product) {
				t.Errorf("the operators' document: %s %s (%s): no example for %v", r.method, r.path, r.operationID, r.missing)
			}
		}
	})
}

// validateExamples checks each parameter's and JSON request body's example against its schema.
func validateExamples(t *testing.T, doc *openapi3.T) {
	t.Helper()
	opts := []openapi3.SchemaValidationOption{openapi3.EnableJSONSchema2020(), openapi3.VisitAsRequest(), openapi3.MultiErrors()}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, ref := range op.Parameters {
				p := ref.Value
				if p.Example == nil || p.Schema == nil {
					continue
				}
				if err := p.Schema.Value.VisitJSON(p.Example, opts...); err != nil {
					t.Errorf("%s %s: the example of %s (%v) does not fit its schema: %v", method, path, p.Name, p.Example, err)
				}
			}
			if op.RequestBody == nil {
				continue
			}
			if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Example != nil {
				if err := mt.Schema.Value.VisitJSON(mt.Example, opts...); err != nil {
					t.Errorf("%s %s: the body's example does not fit its schema: %v", method, path, err)
				}
			}
		}
	}
}

// productOf is the catalogue's product of slug, nil for none.
func productOf(slug string) *flightgraph.Product {
	for _, p := range access.Products {
		if p.Slug == slug {
			return p
		}
	}
	return nil
}

// TestOpenAPIExamplesRemadeInTheBackground: examples older than their ten minutes are made again
// off the request: the document served meanwhile is the old one (its offer ids still good), the
// next is the new one; past twenty minutes, or on first use, the request makes them.
func TestOpenAPIExamplesRemadeInTheBackground(t *testing.T) {
	var now atomic.Int64
	now.Store(storetest.Now.UnixNano())
	s := newServerWith(t, storetest.SeededWindow(t, store.SQLite, os.Getenv, 1, examplesWindow), func(c *serverConfig) {
		c.Config.Now = func() time.Time { return time.Unix(0, now.Load()).UTC() }
	})
	document := func() string {
		t.Helper()
		code, _, raw := s.call(t, http.MethodGet, "/openapi.json", nil, "")
		if code != http.StatusOK {
			t.Fatalf("GET /openapi.json: %d %.300s", code, raw)
		}
		return raw
	}
	first := document()
	now.Add(int64(11 * time.Minute))
	if document() != first {
		t.Fatal("examples eleven minutes old were made again in the request, not in the background")
	}
	deadline := time.Now().Add(30 * time.Second)
	var second string
	for second = document(); second == first && time.Now().Before(deadline); second = document() {
		time.Sleep(20 * time.Millisecond)
	}
	if second == first {
		t.Fatal("examples eleven minutes old were not made again in the background within 30 s")
	}
	now.Add(int64(25 * time.Minute))
	if document() == second {
		t.Error("examples 25 minutes old (offer ids about to expire) were served")
	}
}

// openStream starts a GET of a stream of events and leaves once its answer has started: the
// status and Content-Type, or 0 when it did not start within five seconds.
func openStream(t *testing.T, url string, headers map[string]string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Content-Type")
}
