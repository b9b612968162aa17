package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/rest"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// openAPI is the REST document loaded once: kin-openapi's loader, its validation and a router.
var openAPI struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// loadOpenAPI returns the OpenAPI document rest.OpenAPI gives operators, who see every API,
// loaded, validated and routed: every answer of the server, to any caller, must fit it.
func loadOpenAPI(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	openAPI.once.Do(func() {
		raw, err := rest.OpenAPI(flightgraph.RoleOperator)
		if err != nil {
			openAPI.err = err
			return
		}
		doc, err := parseOpenAPI(raw)
		if err != nil {
			openAPI.err = err
			return
		}
		router, err := gorillamux.NewRouter(doc)
		if err != nil {
			openAPI.err = fmt.Errorf("router: %w", err)
			return
		}
		openAPI.doc, openAPI.router = doc, router
	})
	if openAPI.err != nil {
		t.Fatalf("the OpenAPI document (rest/openapi.yaml): %v", openAPI.err)
	}
	return openAPI.doc, openAPI.router
}

// parseOpenAPI loads and validates an OpenAPI document with kin-openapi.
func parseOpenAPI(raw []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	return doc, nil
}

// validateREST validates a REST answer against the OpenAPI document, for any request whose path
// starts with /opendata (others are left alone): the status must be documented for the
// operation, the headers the document requires present and well-formed, the content type one the
// operation answers with (and, for a success, one the request accepts), the body valid against
// its schema with no field the schema does not name. A path no operation matches must answer the
// INSP_404.000 error body.
func validateREST(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/opendata") && req.URL.Path != "/oauthcust/oauth/token" {
		return
	}
	validateOpenAPI(t, req, status, header, body)
}

// validateOpenAPI is validateREST for any path of the document (the token endpoint included).
func validateOpenAPI(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if req.Method == http.MethodHead {
		return
	}
	doc, router := loadOpenAPI(t)
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.RequestURI(), status)
	route, params, err := router.FindRoute(req)
	if errors.Is(err, routers.ErrPathNotFound) || errors.Is(err, routers.ErrMethodNotAllowed) {
		// No operation: the server's catch-all answers INSP_404.000 in the REST error shape, or,
		// guarded as the routes are, the refusals window's 429.
		want := map[int]string{http.StatusNotFound: flightgraph.ECodeUnknownPath, http.StatusTooManyRequests: flightgraph.ECodePerSecondLimit}[status]
		if errors.Is(err, routers.ErrMethodNotAllowed) && status == http.StatusMethodNotAllowed {
			// A documented path under another method: 405 with the methods it takes.
			want = flightgraph.ECodeMethodNotAllowed
			if header.Get("Allow") == "" {
				t.Errorf("OpenAPI: %s: 405 without Allow", what)
			}
		}
		if want == "" {
			t.Errorf("OpenAPI: %s: no operation of the document matches (%v), yet the status is neither 404 nor 429\nbody: %s", what, err, clipBody(body))
			return
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("OpenAPI: %s: the body is not JSON: %v\nbody: %s", what, err, clipBody(body))
			return
		}
		if ct := baseMediaType(header.Get("Content-Type")); ct != "application/json" {
			t.Errorf("OpenAPI: %s: error content type %q, want application/json", what, ct)
		}
		if err := doc.Components.Schemas["ErrorBody"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse()); err != nil {
			t.Errorf("OpenAPI: %s: the body is not an ErrorBody: %v\nbody: %s", what, err, clipBody(body))
		}
		if code := firstErrorCode(v); code != want {
			t.Errorf("OpenAPI: %s: an unknown path answered %s, want %s", what, code, want)
		}
		return
	} else if err != nil {
		t.Errorf("OpenAPI: %s: finding the operation: %v", what, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("OpenAPI: %s (operation %s): %v\nbody: %s", what, route.Operation.OperationID, err, clipBody(body))
		return
	}
	ct := header.Get("Content-Type")
	if status >= 200 && status < 300 && !acceptsMediaType(req.Header.Values("Accept"), ct) {
		t.Errorf("OpenAPI: %s: answered %q, which the request's Accept %q does not accept", what, ct, req.Header.Values("Accept"))
	}
	// Fields the schema does not name: the document allows them (fields may be added), but a
	// field the service sends must be documented.
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil || len(resp.Value.Content) == 0 {
		return
	}
	mt := resp.Value.Content.Get(ct)
	if mt == nil || mt.Schema == nil {
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return // ValidateResponse has judged the body already
	}
	var extra []string
	undocumentedFields("$", v, mt.Schema.Value, &extra)
	if len(extra) > 0 {
		t.Errorf("OpenAPI: %s (operation %s): fields the document does not name: %s", what, route.Operation.OperationID, strings.Join(extra, ", "))
	}
}

// undocumentedFields lists the object members of v, at path, that schema s (with its allOf and
// the branch of its oneOf or anyOf that v matches) does not name. Objects whose schema names no
// property at all are free-form.
func undocumentedFields(path string, v any, s *openapi3.Schema, out *[]string) {
	if s == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		props := map[string]*openapi3.Schema{}
		schemaProperties(x, s, props)
		if len(props) == 0 {
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ps, ok := props[k]
			if !ok {
				*out = append(*out, path+"."+k)
				continue
			}
			undocumentedFields(path+"."+k, x[k], ps, out)
		}
	case []any:
		items := schemaItems(s)
		for i, e := range x {
			undocumentedFields(fmt.Sprintf("%s[%d]", path, i), e, items, out)
		}
	}
}

func schemaProperties(v map[string]any, s *openapi3.Schema, props map[string]*openapi3.Schema) {
	for k, p := range s.Properties {
		if p != nil && p.Value != nil {
			if prev, ok := props[k]; !ok || len(prev.Properties) == 0 && prev.Items == nil {
				props[k] = p.Value
			}
		}
	}
	for _, sub := range s.AllOf {
		if sub != nil && sub.Value != nil {
			schemaProperties(v, sub.Value, props)
		}
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for _, sub := range alts {
			if sub != nil && sub.Value != nil && sub.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse()) == nil {
				schemaProperties(v, sub.Value, props)
				break
			}
		}
	}
}

func schemaItems(s *openapi3.Schema) *openapi3.Schema {
	if s.Items != nil && s.Items.Value != nil {
		return s.Items.Value
	}
	for _, sub := range s.AllOf {
		if sub != nil && sub.Value != nil {
			if it := schemaItems(sub.Value); it != nil {
				return it
			}
		}
	}
	return nil
}

// acceptsMediaType reports whether a response of content type ct satisfies the Accept header
// values (none accepts anything).
func acceptsMediaType(accept []string, ct string) bool {
	got := baseMediaType(ct)
	ranges := 0
	for _, a := range accept {
		for _, part := range strings.Split(a, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			ranges++
			if params["q"] == "0" {
				continue
			}
			typ, _, _ := strings.Cut(mt, "/")
			if mt == "*/*" || mt == got || mt == typ+"/*" && strings.HasPrefix(got, typ+"/") {
				return true
			}
		}
	}
	return ranges == 0
}

func baseMediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

func firstErrorCode(v any) string {
	m, _ := v.(map[string]any)
	errs, _ := m["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func clipBody(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// routeKey is "METHOD /path".
func openapiRouteKey(method, path string) string { return method + " " + path }

// TestOpenAPIDocument holds rest/openapi.yaml to the code: it loads and validates as OpenAPI
// 3.1, describes exactly the routes of rest.Routes under /opendata, with each route's product's
// security, and every error code it lists is in the catalogue with the status it is listed under.
func TestOpenAPIDocument(t *testing.T) {
	doc, _ := loadOpenAPI(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi: %q, want 3.1.0", doc.OpenAPI)
	}

	// The same (method, path) set in both directions.
	inCode := map[string]rest.Route{}
	for _, rt := range rest.Routes {
		method, path, ok := strings.Cut(rt.Pattern, " ")
		if !ok {
			t.Fatalf("route pattern %q has no method", rt.Pattern)
		}
		inCode[openapiRouteKey(method, path)] = rt
	}
	inDoc := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/opendata") {
			continue
		}
		for method, op := range item.Operations() {
			inDoc[openapiRouteKey(method, path)] = op
		}
	}
	var missing, extra []string
	for k := range inCode {
		if inDoc[k] == nil {
			missing = append(missing, k)
		}
	}
	for k := range inDoc {
		if _, ok := inCode[k]; !ok {
			extra = append(extra, k)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("rest.Routes and the OpenAPI document differ:\n  in rest.Routes, not in the document: %v\n  in the document, not in rest.Routes: %v", missing, extra)
	}
	if doc.Paths.Value("/oauthcust/oauth/token") == nil || doc.Paths.Value("/oauthcust/oauth/token").Post == nil {
		t.Error("the document lacks POST /oauthcust/oauth/token")
	}

	// Each operation: its product, its security, its shared headers and its error answers.
	products := map[string]*flightgraph.Product{}
	for _, p := range access.Products {
		products[p.Slug] = p
	}
	for key, rt := range inCode {
		op := inDoc[key]
		if op == nil {
			continue
		}
		got, _ := op.Extensions["x-flightgraph-product"].(string)
		if got != rt.Product {
			t.Errorf("%s: x-flightgraph-product %q, want the route's product %q", key, got, rt.Product)
		}
		var schemes []string
		if op.Security != nil {
			for _, req := range *op.Security {
				for name := range req {
					schemes = append(schemes, name)
				}
			}
		}
		slices.Sort(schemes)
		want := []string{"apiKey", "oauth2"} // the generic ping: either, by its {api}
		if rt.Product != "" {
			p := products[rt.Product]
			if p == nil {
				t.Errorf("%s: product %q is not in the catalogue", key, rt.Product)
				continue
			}
			want = []string{"apiKey"}
			if p.Auth == flightgraph.AuthOAuth {
				want = []string{"oauth2"}
			}
		}
		if !slices.Equal(schemes, want) {
			t.Errorf("%s: security %v, want %v", key, schemes, want)
		}
		var params []string
		for _, p := range op.Parameters {
			if p.Value != nil && p.Value.In == openapi3.ParameterInHeader {
				params = append(params, p.Value.Name)
			}
		}
		for _, h := range []string{"Accept", "Accept-Language", "svc-travel-country", "svc-travel-host"} {
			if !slices.Contains(params, h) {
				t.Errorf("%s: the header parameter %s is not documented", key, h)
			}
		}
		// The success: 200, 201 for what a POST creates (a shopping cart), 202 for what it queues
		// (mail-my-search).
		ok200 := op.Responses.Status(200)
		for _, status := range []int{201, 202} {
			if ok200 == nil {
				ok200 = op.Responses.Status(status)
			}
		}
		if ok200 == nil {
			t.Errorf("%s: no 200, 201 or 202 answer documented", key)
		}
		for _, status := range []int{400, 401, 403, 406, 429, 500, 502} {
			if op.Responses.Status(status) == nil {
				t.Errorf("%s: no %d answer documented", key, status)
			}
		}
		for _, h := range []string{"RateLimit-Policy", "RateLimit", "X-Packagekey-Qps-Allotted", "X-Packagekey-Qps-Current",
			"X-Packagekey-Quota-Allotted", "X-Packagekey-Quota-Current", "X-Plan-Quota-Reset", "X-Request-Id"} {
			if ok200 == nil || ok200.Value.Headers[h] == nil {
				t.Errorf("%s: the success answer does not document %s", key, h)
			}
		}
		if r := op.Responses.Status(429); r == nil || r.Value.Headers["Retry-After"] == nil || !r.Value.Headers["Retry-After"].Value.Required {
			t.Errorf("%s: the 429 answer does not require Retry-After", key)
		}
	}

	// Every error code the document lists under a status is the catalogue's, with that status.
	errorBody := doc.Components.Schemas["ErrorBody"]
	for key, op := range inDoc {
		for status := range 600 {
			if status < 400 {
				continue
			}
			r := op.Responses.Status(status)
			if r == nil {
				continue
			}
			mt := r.Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || len(r.Value.Content) != 1 {
				t.Errorf("%s: the %d answer must be application/json only", key, status)
				continue
			}
			s := mt.Schema.Value
			if len(s.AllOf) != 2 || s.AllOf[0].Value != errorBody.Value {
				t.Errorf("%s: the %d answer's schema is not ErrorBody narrowed to its codes", key, status)
				continue
			}
			code := s.AllOf[1].Value.Properties["errors"].Value.Items.Value.Properties["code"].Value
			var codes []string
			for _, c := range code.Enum {
				codes = append(codes, c.(string))
			}
			if c, ok := code.Const.(string); ok {
				codes = append(codes, c)
			}
			if code.Pattern != "" { // INSP_500.000 to INSP_500.008
				for i := 0; i <= 8; i++ {
					codes = append(codes, fmt.Sprintf("INSP_500.%03d", i))
				}
			}
			if len(codes) == 0 {
				t.Errorf("%s: the %d answer lists no codes", key, status)
			}
			for _, c := range codes {
				if e := flightgraph.Lookup(c); e.Code != c || e.Status != status {
					t.Errorf("%s: the %d answer lists %s, which the catalogue has as %q with status %d", key, status, c, e.Code, e.Status)
				}
			}
		}
	}

	// The validator itself: it must refuse what the document does not allow.
	t.Run("validateREST refuses", func(t *testing.T) {
		limited := func(extra ...string) http.Header {
			h := http.Header{}
			for k, v := range map[string]string{"Content-Type": "application/json", "X-Request-Id": "rid",
				"RateLimit-Policy": `"second";q=5;w=1, "day";q=5000;w=86400`, "RateLimit": `"second";r=4;t=1, "day";r=4999;t=52200`,
				"X-Packagekey-Qps-Allotted": "5", "X-Packagekey-Qps-Current": "1", "X-Packagekey-Quota-Allotted": "5000",
				"X-Packagekey-Quota-Current": "1", "X-Plan-Quota-Reset": "Monday, November 23, 2026 12:00:00 AM GMT"} {
				h.Set(k, v)
			}
			for i := 0; i+1 < len(extra); i += 2 {
				if extra[i+1] == "" {
					h.Del(extra[i])
				} else {
					h.Set(extra[i], extra[i+1])
				}
			}
			return h
		}
		errBody := func(code string) string {
			return `{"errors":[{"code":"` + code + `","name":"X","description":"d","severity":"ERROR"}]}`
		}
		const ping = `{"buildTimestamp":"2026-11-22T09:00:00Z","timestamp":"2026-11-22T09:30:00Z","version":"1","response":"pong","language":"en","country":""}`
		for _, c := range []struct {
			name, path string
			accept     string
			status     int
			header     http.Header
			body       string
			ok         bool
		}{
			{"a valid 406", "/opendata/schedule/v1/routes", "", 406, limited(), errBody("INSP_406.000"), true},
			{"a valid ping", "/opendata/flightstatus/v1/ping", "", 200, limited("Content-Type", "application/hal+json"), ping, true},
			{"a valid unknown path", "/opendata/nothing/here", "", 404, limited(), errBody("INSP_404.000"), true},
			{"a required header missing", "/opendata/schedule/v1/routes", "", 406, limited("X-Plan-Quota-Reset", ""), errBody("INSP_406.000"), false},
			{"a code of another status", "/opendata/schedule/v1/routes", "", 400, limited(), errBody("INSP_404.000"), false},
			{"an undocumented status", "/opendata/schedule/v1/routes", "", 418, limited(), errBody("INSP_400.000"), false},
			{"429 without Retry-After", "/opendata/schedule/v1/routes", "", 429, limited(), errBody("LIMIT_429.000"), false},
			{"an empty errors list", "/opendata/schedule/v1/routes", "", 400, limited(), `{"errors":[]}`, false},
			{"a field missing", "/opendata/flightstatus/v1/ping", "", 200, limited(), strings.Replace(ping, `"version":"1",`, "", 1), false},
			{"a const broken", "/opendata/flightstatus/v1/ping", "", 200, limited(), strings.Replace(ping, `"pong"`, `"pang"`, 1), false},
			{"an enum broken", "/opendata/flightstatus/v1/ping", "", 200, limited(), strings.Replace(ping, `"en"`, `"de"`, 1), false},
			{"a header malformed", "/opendata/flightstatus/v1/ping", "", 200, limited("X-Packagekey-Qps-Allotted", "five"), ping, false},
			{"an undocumented field", "/opendata/flightstatus/v1/ping", "", 200, limited(), strings.Replace(ping, `{`, `{"extra":1,`, 1), false},
			{"an undocumented content type", "/opendata/flightstatus/v1/ping", "", 200, limited("Content-Type", "text/html"), ping, false},
			{"a content type the request refused", "/opendata/flightstatus/v1/ping", "application/json", 200, limited("Content-Type", "application/hal+json"), ping, false},
			{"an unknown path answered 200", "/opendata/nothing/here", "", 200, limited(), ping, false},
		} {
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			rec := &tbRecorder{TB: t}
			validateREST(rec, req, c.status, c.header, []byte(c.body))
			if c.ok && len(rec.errors) > 0 {
				t.Errorf("%s: refused: %v", c.name, rec.errors)
			} else if !c.ok && len(rec.errors) == 0 {
				t.Errorf("%s: not refused", c.name)
			}
		}
	})

	t.Run("served", func(t *testing.T) {
		want, err := rest.OpenAPI("")
		if err != nil {
			t.Fatal(err)
		}
		again, _ := rest.OpenAPI(flightgraph.RoleDeveloper) // developers see what anonymous callers see
		if &want[0] != &again[0] {
			t.Error("rest.OpenAPI converts the document on every call; it should convert it once")
		}
		if !json.Valid(want) {
			t.Fatal("rest.OpenAPI is not JSON")
		}
		s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
		resp, err := http.Get(s.URL + "/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The served document is rest.OpenAPI's with the server's examples in it (rest/examples.go).
		if resp.StatusCode != 200 || baseMediaType(resp.Header.Get("Content-Type")) != "application/json" || !sameButExamples(t, got, want) {
			t.Fatalf("GET /openapi.json: %d %s, %d bytes; want 200 application/json with rest.OpenAPI(\"\") and examples", resp.StatusCode, resp.Header.Get("Content-Type"), len(got))
		}
		if code, _, _ := s.call(t, http.MethodPost, "/openapi.json", nil, ""); code != http.StatusMethodNotAllowed {
			t.Errorf("POST /openapi.json: %d, want 405", code)
		}
	})
}

// sameButExamples reports whether two OpenAPI documents are the same but for the examples of
// their operations' parameters and request bodies.
func sameButExamples(t *testing.T, a, b []byte) bool {
	t.Helper()
	var da, db map[string]any
	if err := json.Unmarshal(a, &da); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &db); err != nil {
		t.Fatal(err)
	}
	for _, d := range []map[string]any{da, db} {
		paths, _ := d["paths"].(map[string]any)
		for _, item := range paths {
			ops, _ := item.(map[string]any)
			for _, op := range ops {
				op, _ := op.(map[string]any)
				params, _ := op["parameters"].([]any)
				for _, p := range params {
					if p, ok := p.(map[string]any); ok {
						delete(p, "example")
						delete(p, "examples")
					}
				}
				rb, _ := op["requestBody"].(map[string]any)
				content, _ := rb["content"].(map[string]any)
				if mt, ok := content["application/json"].(map[string]any); ok {
					delete(mt, "example")
				}
			}
		}
	}
	return reflect.DeepEqual(da, db)
}

// tbRecorder records the errors of a check instead of failing the test.
type tbRecorder struct {
	testing.TB
	errors []string
}

func (r *tbRecorder) Helper() {}

func (r *tbRecorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// apiOK is call for a GET that must answer 200; it decodes the body into into.
func (s *testServer) apiOK(t *testing.T, path string, headers map[string]string, into any) http.Header {
	t.Helper()
	status, h, body := s.call(t, http.MethodGet, path, headers, "")
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, body)
	}
	if into != nil {
		if err := json.Unmarshal([]byte(body), into); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return h
}

// apiFails is call for a GET that must fail with code and status.
func (s *testServer) apiFails(t *testing.T, path string, headers map[string]string, status int, code string) http.Header {
	t.Helper()
	got, h, body := s.call(t, http.MethodGet, path, headers, "")
	if got != status || restCode(t, body) != code {
		t.Fatalf("GET %s: %d %s, want %d %s", path, got, body, status, code)
	}
	return h
}

// bearerToken gets a client-credentials token for the demo key, validating the token endpoint's
// answer against the document.
func (s *testServer) bearerToken(t testing.TB, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	code, _, body := s.call(t, http.MethodPost, "/oauthcust/oauth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded",
		"Authorization": oaBasic(s.demo.APIKey, s.demo.ClientSecret)}, form.Encode())
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("client credentials: %d %s", code, body)
	}
	return tok.AccessToken
}

// setPlanLimits gives the demo key's subscription to product a custom plan with limits, through
// the portal.
func (s *testServer) setPlanLimits(t *testing.T, product string, limits flightgraph.Limits) {
	t.Helper()
	dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	dev.grantLimits(t, s.oaOperator(t), s.demo.APIKey, limits, flightgraph.QueryLimits{}, product)
}

// Views of the answers, as much as the tests read of them.
type (
	flightListView struct {
		OperationalFlights []struct {
			ID                 string `json:"id"`
			FlightNumber       int    `json:"flightNumber"`
			FlightScheduleDate string `json:"flightScheduleDate"`
			Airline            struct{ Code string }
			FlightLegs         []struct {
				Aircraft *struct{ SubFleetCodeID string } `json:"aircraft"`
			} `json:"flightLegs"`
		} `json:"operationalFlights"`
		Page  struct{ PageSize, PageNumber, FullCount, PageCount, TotalPages int }
		Links struct {
			Self, Next, Prev *struct{ Href string }
		} `json:"_links"`
	}
	pingView struct {
		Response, Language, Country, Version string
	}
)

// TestRESTResponsesValidate calls every REST route with answers of 200 and the errors of the
// guard and the header contract, and validates each answer against the OpenAPI document.
func TestRESTResponsesValidate(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		key := map[string]string{"api-key": s.demo.APIKey}
		with := func(h map[string]string) map[string]string {
			out := map[string]string{"api-key": s.demo.APIKey}
			for k, v := range h {
				out[k] = v
			}
			return out
		}
		const list = "/opendata/flightstatus?startRange=2026-11-22T06:00:00Z&endRange=2026-11-22T12:00:00Z&origin=AMS&pageSize=5"

		var flights flightListView
		t.Run("flightstatus list", func(t *testing.T) {
			h := s.apiOK(t, list, key, &flights)
			if len(flights.OperationalFlights) != 5 || flights.Page.FullCount <= 5 || flights.Links.Next == nil || flights.Links.Prev != nil {
				t.Fatalf("first page: %d flights, page %+v, links %+v", len(flights.OperationalFlights), flights.Page, flights.Links)
			}
			if h.Get("X-Packagekey-Qps-Allotted") == "" {
				t.Errorf("no limit headers: %v", h)
			}
			var second flightListView
			s.apiOK(t, list+"&pageNumber=1", key, &second)
			if second.Links.Prev == nil || second.Page.PageNumber != 1 {
				t.Errorf("second page: page %+v, links %+v", second.Page, second.Links)
			}
			s.apiOK(t, list, with(map[string]string{"Accept": "application/json"}), nil)
			s.apiOK(t, list, with(map[string]string{"Accept": "application/hal+json;profile=com.example.flightstatus.v1;charset=utf8"}), nil)
			s.apiOK(t, list, with(map[string]string{"Accept": "*/*", "Accept-Language": "fr-FR", "svc-travel-country": "NL", "svc-travel-host": "XX"}), nil)
			s.apiOK(t, "/opendata/flightstatus?startRange=2026-11-22T08:00&endRange=2026-11-22T14:00&destination=AMS&movementType=A&timeType=L&carrierCode=XX", with(map[string]string{"Accept-Language": "nl"}), nil)
			s.apiOK(t, "/opendata/flightstatus?startRange=2026-11-21&endRange=2026-11-24&origin=PAR&pageSize=100&pageNumber=2", key, nil)
		})
		if len(flights.OperationalFlights) == 0 {
			t.Fatal("no flights to go on with")
		}

		t.Run("flightstatus by id", func(t *testing.T) {
			for _, f := range flights.OperationalFlights[:3] {
				var one struct {
					ID    string
					Links *struct{ Self struct{ Href string } } `json:"_links"`
				}
				s.apiOK(t, "/opendata/flightstatus/"+url.PathEscape(f.ID), key, &one)
				if one.ID != f.ID || one.Links == nil {
					t.Errorf("flight %s: got %+v", f.ID, one)
				}
			}
			s.apiOK(t, "/opendata/flightstatus/"+strings.ReplaceAll(flights.OperationalFlights[0].ID, "+", "%2B"), with(map[string]string{"Accept": "application/json", "Accept-Language": "fr"}), nil)
		})

		t.Run("amenities", func(t *testing.T) {
			var am struct {
				AircraftConfiguration string
				Amenities             []struct{ Category string }
				Flight                *struct{ ID string }
			}
			s.apiOK(t, "/opendata/inspire/v2/amenities?aircraftConfiguration=77W&cabinClass=BUSINESS", key, &am)
			if am.AircraftConfiguration != "77W" || len(am.Amenities) == 0 || am.Flight != nil {
				t.Errorf("77W business: %+v", am)
			}
			s.apiOK(t, "/opendata/inspire/v2/amenities?aircraftConfiguration=77w&category=CONNECTIVITY&limit=2", with(map[string]string{"Accept": "application/json"}), nil)
			var picked bool
			for _, f := range flights.OperationalFlights {
				if f.Airline.Code != "XX" || f.FlightScheduleDate != "2026-11-22" {
					continue
				}
				picked = true
				am.Flight = nil
				s.apiOK(t, fmt.Sprintf("/opendata/inspire/v2/amenities?carrier=XX&flightNumber=%d&departureDate=2026-11-22", f.FlightNumber), key, &am)
				if am.Flight == nil || am.Flight.ID != f.ID {
					t.Errorf("amenities of flight %s: %+v", f.ID, am)
				}
				// The carrier from svc-travel-host.
				s.apiOK(t, fmt.Sprintf("/opendata/inspire/v2/amenities?flightNumber=%d&departureDate=2026-11-22&cabinClass=economy", f.FlightNumber),
					with(map[string]string{"svc-travel-host": "XX"}), nil)
				break
			}
			if !picked {
				t.Error("no XX flight of 2026-11-22 on the first page to ask the amenities of")
			}
		})

		t.Run("schedule", func(t *testing.T) {
			var routes struct {
				Routes []struct{ Origin struct{ Code string } }
			}
			s.apiOK(t, "/opendata/schedule/v1/routes?origin=AMS&pageSize=5", key, &routes)
			if len(routes.Routes) != 5 || routes.Routes[0].Origin.Code != "AMS" {
				t.Errorf("routes: %+v", routes)
			}
			s.apiOK(t, "/opendata/schedule/v1/routes?destination=CDG&carrier=YY&pageNumber=1&pageSize=2", with(map[string]string{"Accept": "application/json"}), nil)
			var sched struct {
				Flights []struct{ FlightNumber int }
			}
			s.apiOK(t, "/opendata/schedule/v1/flights?origin=AMS&date=2026-11-22", key, &sched)
			if len(sched.Flights) == 0 {
				t.Error("no schedule records from AMS on 2026-11-22")
			} else {
				s.apiOK(t, fmt.Sprintf("/opendata/schedule/v1/flights?flightNumber=%d&carrier=XX", sched.Flights[0].FlightNumber), key, nil)
			}
		})

		t.Run("reference data", func(t *testing.T) {
			var ref struct {
				Market  string
				Country []struct{ Code string }
			}
			s.apiOK(t, "/opendata/flightoffers/reference-data", key, &ref)
			if ref.Market != rest.DefaultMarket || len(ref.Country) == 0 {
				t.Errorf("reference data: %+v", ref)
			}
			s.apiOK(t, "/opendata/flightoffers/reference-data", with(map[string]string{"Accept": "application/hal+json;charset=utf8",
				"Accept-Language": "nl-BE", "svc-travel-country": "FR", "svc-travel-host": "YY"}), &ref)
			if ref.Market != "FR" {
				t.Errorf("market with svc-travel-country FR: %s", ref.Market)
			}
		})

		t.Run("pings", func(t *testing.T) {
			var p pingView
			s.apiOK(t, "/opendata/flightstatus/v1/ping", key, &p)
			if p.Response != "pong" || p.Language != "en" {
				t.Errorf("flightstatus ping: %+v", p)
			}
			s.apiOK(t, "/opendata/inspire/v2/ping", with(map[string]string{"Accept-Language": "fr-FR"}), &p)
			if p.Language != "fr" || p.Country != "FR" {
				t.Errorf("inspire ping in fr-FR: %+v", p)
			}
			s.apiOK(t, "/opendata/schedule/v1/ping", key, nil)
			s.apiOK(t, "/opendata/flightoffers/v1/ping", key, nil) // Open Data, as the original names it
			s.apiOK(t, "/opendata/opendata/v1/ping", key, nil)     // and by its slug, as before
			token := s.bearerToken(t, "")
			s.apiOK(t, "/opendata/offers/v1/ping", map[string]string{"Authorization": "Bearer " + token}, &p)
			s.apiOK(t, "/opendata/baggages/v1/ping", map[string]string{"Authorization": "Bearer " + token}, nil)
			s.apiOK(t, "/opendata/baggage/v1/ping", map[string]string{"Authorization": "Bearer " + token}, nil)
		})

		// The ping's language, country and media type are the negotiated ones, as every other
		// route's (rest/contract.go): not the raw headers.
		t.Run("ping follows the negotiated locale and media type", func(t *testing.T) {
			var p pingView
			s.apiOK(t, "/opendata/flightstatus/v1/ping", with(map[string]string{"Accept-Language": "de-DE, fr;q=0.8"}), &p)
			if p.Language != "fr" {
				t.Errorf("ping with Accept-Language \"de-DE, fr;q=0.8\" reports language %q; the contract negotiated fr (labels are in en, fr and nl only)", p.Language)
			}
			s.apiOK(t, "/opendata/flightstatus/v1/ping", with(map[string]string{"svc-travel-country": "nl"}), &p)
			if p.Country != "NL" {
				t.Errorf("ping with svc-travel-country \"nl\" reports country %q; the contract's point of sale is NL", p.Country)
			}
			h := s.apiOK(t, "/opendata/flightstatus/v1/ping", with(map[string]string{"Accept": "application/json"}), nil)
			if ct := baseMediaType(h.Get("Content-Type")); ct != "application/json" {
				t.Errorf("ping with Accept: application/json answers %s; the contract negotiated application/json", ct)
			}
		})

		// A language the client refuses (q=0, RFC 9110 §12.4.2) is not answered in, as the Accept
		// header's q=0 is honoured (rest/contract.go).
		t.Run("Accept-Language q=0 refuses a language", func(t *testing.T) {
			var ref struct {
				Country []struct {
					PassengerTypes []struct{ Code, Label string }
				}
			}
			s.apiOK(t, "/opendata/flightoffers/reference-data", with(map[string]string{"Accept-Language": "fr;q=0, nl"}), &ref)
			if len(ref.Country) == 0 || len(ref.Country[0].PassengerTypes) == 0 {
				t.Fatalf("reference data without passenger types: %+v", ref)
			}
			if got := ref.Country[0].PassengerTypes[0]; got.Label != "Volwassene" {
				t.Errorf("Accept-Language \"fr;q=0, nl\": passenger type %s is labelled %q, want the Dutch \"Volwassene\" (French is refused)", got.Code, got.Label)
			}
		})

		// A 401 must carry a WWW-Authenticate challenge (RFC 9110 §15.5.2), for API-key APIs as
		// for OAuth ones.
		t.Run("401 carries a challenge", func(t *testing.T) {
			for _, c := range []struct {
				name    string
				headers map[string]string
			}{
				{"no credentials", nil},
				{"unknown api-key", map[string]string{"api-key": "fgk_nope"}},
			} {
				status, h, body := s.call(t, http.MethodGet, "/opendata/flightstatus/v1/ping", c.headers, "")
				if status != 401 {
					t.Fatalf("%s: %d %s", c.name, status, body)
				}
				if h.Get("WWW-Authenticate") == "" {
					t.Errorf("%s on an API-key API: 401 %s without WWW-Authenticate (RFC 9110 §15.5.2: a 401 MUST send a challenge, e.g. `ApiKey realm=\"flightgraph\", header=\"api-key\"`)", c.name, restCode(t, string(body)))
				}
			}
		})

		t.Run("errors", func(t *testing.T) {
			// 400 from the handler and from the header contract.
			s.apiFails(t, "/opendata/flightstatus?endRange=2026-11-22T12:00:00Z", key, 400, flightgraph.ECodeMissingParameter)
			s.apiFails(t, "/opendata/schedule/v1/routes?pageSize=0", key, 400, flightgraph.ECodeInvalidParameter)
			s.apiFails(t, "/opendata/flightoffers/reference-data", with(map[string]string{"svc-travel-host": "X-"}), 400, flightgraph.ECodeBadFormat)
			s.apiFails(t, "/opendata/inspire/v2/ping", with(map[string]string{"Accept-Language": "xx-YY-ZZ"}), 400, flightgraph.ECodeBadFormat)
			// 401: no credentials, a bad key, a bad token; 403: an api-key on an OAuth API, which
			// still names the scheme it takes.
			s.apiFails(t, list, nil, 401, flightgraph.ECodeMissingCredentials)
			s.apiFails(t, list, map[string]string{"api-key": "fgk_nope"}, 401, flightgraph.ECodeInvalidKey)
			s.apiFails(t, "/opendata/flightstatus/v1/ping", map[string]string{"Authorization": "Bearer fgat_nope"}, 401, flightgraph.ECodeInvalidToken)
			h := s.apiFails(t, "/opendata/offers/v1/ping", key, 403, flightgraph.ECodeWrongCredential)
			if !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("403 of an api-key on an OAuth API without a challenge: %v", h)
			}
			// 403: a bearer token on an API-key API; a token whose scope lacks the API.
			token := s.bearerToken(t, "offers")
			s.apiFails(t, "/opendata/flightstatus/v1/ping", map[string]string{"Authorization": "Bearer " + token}, 403, flightgraph.ECodeWrongCredential)
			s.apiFails(t, "/opendata/baggage/v1/ping", map[string]string{"Authorization": "Bearer " + token}, 403, flightgraph.ECodeNotApproved)
			// 404: unknown flight, unknown place, invisible API, unknown version, unknown path.
			s.apiFails(t, "/opendata/flightstatus/20261122%2BXX%2B9998", key, 404, flightgraph.ECodeFlightNotFound)
			s.apiFails(t, "/opendata/schedule/v1/flights?origin=QQQ", key, 404, flightgraph.ECodeIATANotFound)
			s.apiFails(t, "/opendata/cargo/v1/ping", key, 404, flightgraph.ECodeUnknownPath)
			s.apiFails(t, "/opendata/flightstatus/version1/ping", key, 404, flightgraph.ECodeUnknownPath)
			s.apiFails(t, "/opendata/nothing/here/123", key, 404, flightgraph.ECodeUnknownPath)
			// 406.
			s.apiFails(t, "/opendata/schedule/v1/routes", with(map[string]string{"Accept": "application/xml"}), 406, flightgraph.ECodeNotAcceptable)
			// 429: a plan of one call per second; the server's clock is frozen, so the second
			// call (at the latest) is over it.
			s.setPlanLimits(t, "inspire", flightgraph.Limits{PerSecond: 1, PerDay: 1000})
			var status int
			var body string
			for range 3 {
				if status, h, body = s.call(t, http.MethodGet, "/opendata/inspire/v2/amenities?aircraftConfiguration=E90", key, ""); status == 429 {
					break
				}
			}
			if status != 429 || restCode(t, body) != flightgraph.ECodePerSecondLimit || h.Get("Retry-After") == "" {
				t.Errorf("over one call per second: %d %v %s", status, h, body)
			}
		})
	})
}

// TestOpenAPIPerAccount: /openapi.json describes only the APIs the caller may see. Anonymous
// callers, bad credentials and developers get the public document, with no trace of the partner
// and internal APIs in any byte; a partner's session or key adds the partner API, staff and
// operators see every API. Each variant is a valid OpenAPI document whose {api} parameter lists
// exactly the caller's APIs. Only a request with no credentials at all may be kept by a shared
// cache: whether a credential authenticated is no shared cache's business.
func TestOpenAPIPerAccount(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	ctx := context.Background()
	for email, role := range map[string]flightgraph.Role{"pat@partner.example": flightgraph.RolePartner, "sam@staff.example": flightgraph.RoleStaff} {
		if _, err := s.srv.Access.CreateAccount(ctx, flightgraph.SignUpInput{Email: email, Password: developerPassword, Name: "N"}, role, ""); err != nil {
			t.Fatal(err)
		}
	}
	partner := s.signIn(t, "pat@partner.example", developerPassword)
	var reg struct{ RegisterApplication struct{ ID string } }
	partner.do(t, `mutation { registerApplication(input: {name: "Meta", description: "d"}) { id } }`, nil, &reg)
	var rk struct {
		RequestKey struct {
			Key struct {
				APIKey        string
				Subscriptions []struct{ ID string }
			}
		}
	}
	partner.do(t, `mutation($a: ID!) { requestKey(input: {applicationId: $a, api: "metasearch", plan: "Partner"}) { key { apiKey subscriptions { id } } } }`,
		map[string]any{"a": reg.RegisterApplication.ID}, &rk)
	op := s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword)
	op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": rk.RequestKey.Key.Subscriptions[0].ID}, nil)
	bearer := func(p *portal) map[string]string { return map[string]string{"Authorization": "Bearer " + p.token} }
	hidden := []string{"metasearch", "cargo"}
	for _, c := range []struct {
		name    string
		headers map[string]string
		role    flightgraph.Role
	}{
		{"anonymous", nil, ""},
		{"malformed key", map[string]string{"api-key": "fgk_nope"}, ""},
		{"unknown session", map[string]string{"Authorization": "Bearer " + access.NewCredential(access.KindSession)}, ""},
		{"developer's key", map[string]string{"api-key": s.demo.APIKey}, flightgraph.RoleDeveloper},
		{"developer's session", bearer(s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)), flightgraph.RoleDeveloper},
		{"partner's key", map[string]string{"api-key": rk.RequestKey.Key.APIKey}, flightgraph.RolePartner},
		{"partner's session", bearer(partner), flightgraph.RolePartner},
		{"staff's session", bearer(s.signIn(t, "sam@staff.example", developerPassword)), flightgraph.RoleStaff},
		{"operator's session", bearer(op), flightgraph.RoleOperator},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, h, body := s.call(t, http.MethodGet, "/openapi.json", c.headers, "")
			if code != http.StatusOK {
				t.Fatalf("%d %.200s", code, body)
			}
			var want, apis []any
			for _, p := range access.Products {
				if p.VisibleTo(c.role) {
					want = append(want, p.Slug)
					for _, name := range rest.PingAPIs(p.Slug) {
						apis = append(apis, name)
					}
				}
			}
			lower := strings.ToLower(body)
			for _, slug := range hidden {
				if sees := slices.Contains(want, any(slug)); strings.Contains(lower, slug) != sees {
					t.Errorf("the document names %s: %v, want %v", slug, !sees, sees)
				}
			}
			doc, err := parseOpenAPI([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			var enum []any
			for _, p := range doc.Paths.Value("/opendata/{api}/{version}/ping").Get.Parameters {
				if p.Value.Name == "api" {
					enum = p.Value.Schema.Value.Enum
				}
			}
			if !slices.Equal(enum, apis) {
				t.Errorf("{api} takes %v, want %v", enum, apis)
			}
			// A partner API's operations, and the schemas only they use, are in its viewers' copy.
			sees := slices.Contains(want, any("metasearch"))
			if feed := doc.Paths.Value("/opendata/offers/v1/bestOffers/feed") != nil; feed != sees || (doc.Components.Schemas["BestOffersFeed"] != nil) != sees {
				t.Errorf("the document has the metasearch feed: %v, want %v", feed, sees)
			}
			if doc.Paths.Value("/opendata/offers/v1/best-fare-offers") == nil || doc.Components.Schemas["Deal"] == nil {
				t.Error("the document lacks the public deals, or the schema they share with the feed")
			}
			cc, sent, vary := h.Get("Cache-Control"), c.headers != nil, strings.Join(h.Values("Vary"), ", ")
			if sent && !strings.HasPrefix(cc, "private") || !sent && !strings.HasPrefix(cc, "public") || !strings.Contains(vary, "Authorization") {
				t.Errorf("Cache-Control %q, Vary %q for a caller sending credentials: %v", cc, vary, sent)
			}
		})
	}
}

// TestOpenAPIConditional: /openapi.json carries an ETag, and a GET whose If-None-Match names it
// answers 304 with no body, still held to the caller's uncharged budget first (a key nobody
// approved is refused, 403, as for any uncharged call).
func TestOpenAPIConditional(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := map[string]string{"api-key": s.demo.APIKey}
	code, h, body := s.call(t, http.MethodGet, "/openapi.json", key, "")
	etag := h.Get("ETag")
	// The client asked for gzip (Go's transport does, and decodes): the tag is the gzip one's.
	if code != http.StatusOK || etag == "" || etag != strings.TrimSuffix(flightgraph.ETag([]byte(body)), `"`)+`-gzip"` {
		t.Fatalf("GET /openapi.json: %d, ETag %q for %d bytes", code, etag, len(body))
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		code, h, body = s.call(t, http.MethodGet, "/openapi.json", map[string]string{"api-key": s.demo.APIKey, "If-None-Match": inm}, "")
		// "*" names no representation: its 304 may carry the identity one's tag.
		sameTag := h.Get("ETag") == etag || inm == "*" && h.Get("ETag") == strings.Replace(etag, "-gzip", "", 1)
		if code != http.StatusNotModified || body != "" || !sameTag || h.Get("Vary") == "" {
			t.Errorf("If-None-Match %s: %d with %d bytes, ETag %q, Vary %q; want 304, none, the same ETag", inm, code, len(body), h.Get("ETag"), h.Get("Vary"))
		}
	}
	if code, _, body = s.call(t, http.MethodGet, "/openapi.json", map[string]string{"api-key": s.demo.APIKey, "If-None-Match": `"stale"`}, ""); code != http.StatusOK || body == "" {
		t.Errorf("a stale ETag: %d with %d bytes, want 200 and the document", code, len(body))
	}
	pending := map[string]string{"api-key": pendingKey(t, s), "If-None-Match": etag}
	if code, _, body := s.call(t, http.MethodGet, "/openapi.json", pending, ""); code != http.StatusForbidden || restCode(t, body) != flightgraph.ECodeNotApproved {
		t.Errorf("a key nobody approved: %d %.200s, want 403 %s", code, body, flightgraph.ECodeNotApproved)
	}
}

// TestOpenAPIAudiencesApart, as an attacker: the documents are kept per audience, so whichever
// caller fills the cache first, a developer never gets the partner's document, nor a partner the
// developer's, and a developer holding the partner document's ETag gets its own document, not a
// 304 that would confirm what the partner sees.
func TestOpenAPIAudiencesApart(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	ctx := context.Background()
	if _, err := s.srv.Access.CreateAccount(ctx, flightgraph.SignUpInput{Email: "pat@partner.example", Password: developerPassword, Name: "N"}, flightgraph.RolePartner, ""); err != nil {
		t.Fatal(err)
	}
	partner := map[string]string{"Authorization": "Bearer " + s.signIn(t, "pat@partner.example", developerPassword).token}
	developer := map[string]string{"Authorization": "Bearer " + s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword).token}
	get := func(who map[string]string, inm string) (int, string, string) {
		h := maps.Clone(who)
		if inm != "" {
			h["If-None-Match"] = inm
		}
		code, hdr, body := s.call(t, http.MethodGet, "/openapi.json", h, "")
		return code, hdr.Get("ETag"), body
	}
	for _, order := range [][]map[string]string{{partner, developer}, {developer, partner}} {
		for _, who := range order {
			code, _, body := get(who, "")
			sees := strings.Contains(body, "metasearch")
			if code != http.StatusOK || sees != (who["Authorization"] == partner["Authorization"]) {
				t.Fatalf("%d; the document names metasearch: %v for the partner: %v", code, sees, who["Authorization"] == partner["Authorization"])
			}
		}
	}
	_, partnerTag, _ := get(partner, "")
	_, developerTag, _ := get(developer, "")
	if partnerTag == developerTag {
		t.Fatalf("one ETag for two documents: %s", partnerTag)
	}
	if code, tag, body := get(developer, partnerTag); code != http.StatusOK || tag != developerTag || strings.Contains(body, "metasearch") {
		t.Errorf("a developer with the partner's ETag: %d, ETag %s, names metasearch: %v; want 200 with its own document", code, tag, strings.Contains(body, "metasearch"))
	}
	if code, tag, _ := get(partner, developerTag); code != http.StatusOK || tag != partnerTag {
		t.Errorf("a partner with the developer's ETag: %d, ETag %s; want 200 with its own document", code, tag)
	}
}
