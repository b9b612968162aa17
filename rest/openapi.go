package rest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// openAPIYAML is the OpenAPI 3.1 document of the REST routes (every one of Routes) and of the
// token endpoint, less what depends on the caller: the APIs the {api} path parameter takes and
// the scopes of the OAuth flows are left empty there and filled from the catalogue by OpenAPI.
// A test holds it to Routes and validates real answers against it.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// openAPIDocs caches the document per audience (access.Audience): there are as many as
// visibilities.
var openAPIDocs struct {
	mu   sync.Mutex
	docs map[string]*openAPIDoc
}

// openAPIDoc is one audience's document and its ETag.
type openAPIDoc struct {
	body []byte
	etag string
}

// OpenAPI returns the OpenAPI document, as JSON, that a caller of role may see: it names only the
// APIs of the catalogue visible to the role ("" for anonymous callers: the public ones), so that
// partner and internal APIs leave no trace in anyone else's copy. It has none of the examples
// that /openapi.json carries (Examples: they depend on the server's data and clock). Each variant
// is built once; the caller must not modify the returned bytes.
func OpenAPI(role flightgraph.Role) ([]byte, error) {
	doc, err := openAPIOf(role)
	if err != nil {
		return nil, err
	}
	return doc.body, nil
}

// openAPIOf returns the document of role's audience, built on its first call.
func openAPIOf(role flightgraph.Role) (*openAPIDoc, error) {
	audience := access.Audience(role)
	openAPIDocs.mu.Lock()
	defer openAPIDocs.mu.Unlock()
	if doc, ok := openAPIDocs.docs[audience]; ok {
		return doc, nil
	}
	doc, err := openAPIBuild(role, nil)
	if err != nil {
		return nil, err
	}
	if openAPIDocs.docs == nil {
		openAPIDocs.docs = map[string]*openAPIDoc{}
	}
	openAPIDocs.docs[audience] = doc
	return doc, nil
}

// openAPIServed returns the document of role's audience with the API's current examples.
func (a *API) openAPIServed(ctx context.Context, role flightgraph.Role) (*openAPIDoc, error) {
	audience := access.Audience(role)
	c := &a.exampleCache
	c.mu.Lock()
	defer c.mu.Unlock()
	ex := a.examples(ctx)
	if doc, ok := c.docs[audience]; ok {
		return doc, nil
	}
	doc, err := openAPIBuild(role, ex)
	if err != nil {
		return nil, err
	}
	if c.docs == nil {
		c.docs = map[string]*openAPIDoc{}
	}
	c.docs[audience] = doc
	return doc, nil
}

// openAPIBuild builds the document role may see, with examples ex (none when nil).
func openAPIBuild(role flightgraph.Role, ex *Examples) (*openAPIDoc, error) {
	var visible []*flightgraph.Product
	for _, p := range access.Products {
		if p.VisibleTo(role) {
			visible = append(visible, p)
		}
	}
	body, err := openAPIFor(visible, ex)
	if err != nil {
		return nil, fmt.Errorf("rest: openapi.yaml: %w", err)
	}
	return &openAPIDoc{body: body, etag: flightgraph.ETag(body)}, nil
}

// openAPIFor converts the YAML to indented JSON, in the YAML's order, with the {api} enum and the
// OAuth scopes of the given products, and the examples ex (none when nil).
func openAPIFor(products []*flightgraph.Product, ex *Examples) ([]byte, error) {
	var doc yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(openAPIYAML, &doc, yaml.UseOrderedMap()); err != nil {
		return nil, err
	}
	var slugs, apis []any
	for _, p := range products {
		slugs = append(slugs, p.Slug)
		for _, name := range PingAPIs(p.Slug) {
			apis = append(apis, name)
		}
	}
	if err := baggageOperationsDoc(doc); err != nil {
		return nil, err
	}
	if err := weigh(doc); err != nil {
		return nil, err
	}
	hide(doc, slugs)
	ex.apply(doc)
	params, _ := member(doc, "paths", "/opendata/{api}/{version}/ping", "get", "parameters").([]any)
	found := false
	for _, p := range params {
		if p, ok := p.(yaml.MapSlice); ok && member(p, "name") == "api" {
			found = set(member(p, "schema"), "enum", apis)
		}
	}
	if !found {
		return nil, fmt.Errorf("the ping's {api} parameter has no schema to list the APIs in")
	}
	flows := member(doc, "components", "securitySchemes", "oauth2", "flows")
	for flow, grant := range map[string]flightgraph.Grant{"clientCredentials": flightgraph.GrantClientCredentials, "password": flightgraph.GrantPassword} {
		scopes := yaml.MapSlice{}
		for _, p := range products {
			if p.Auth == flightgraph.AuthOAuth && p.AllowsGrant(grant) {
				scopes = append(scopes, yaml.MapItem{Key: p.Slug, Value: p.Name})
			}
		}
		if !set(member(flows, flow), "scopes", scopes) {
			return nil, fmt.Errorf("the oauth2 security scheme has no %s flow", flow)
		}
	}
	raw, err := yaml.MarshalWithOptions(doc, yaml.JSON())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// weigh writes what each route declares of its weight (Routes) into its operation: the calls one
// call is charged (x-flightgraph-calls) and whether it is heavy work (x-flightgraph-heavy), which
// may then be shed at once with 503 (AtCapacity); and that any request may run out of time (504).
func weigh(doc yaml.MapSlice) error {
	for _, rt := range Routes {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		method = strings.ToLower(method)
		op, ok := member(doc, "paths", path, method).(yaml.MapSlice)
		if !ok {
			return fmt.Errorf("no operation %s", rt.Pattern)
		}
		responses, _ := member(op, "responses").(yaml.MapSlice)
		ref := func(name string) yaml.MapSlice {
			return yaml.MapSlice{{Key: "$ref", Value: "#/components/responses/" + name}}
		}
		responses = append(responses, yaml.MapItem{Key: "504", Value: ref("GatewayTimeout")})
		op = append(op, yaml.MapItem{Key: "x-flightgraph-calls", Value: rt.Charged()})
		if rt.Heavy {
			responses = append(responses, yaml.MapItem{Key: "503", Value: ref("AtCapacity")})
			op = append(op, yaml.MapItem{Key: "x-flightgraph-heavy", Value: true})
		}
		set(op, "responses", responses)
		set(member(doc, "paths", path), method, op)
	}
	return nil
}

// member follows keys down nested mappings; nil when one is missing.
func member(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(yaml.MapSlice)
		if !ok {
			return nil
		}
		v = nil
		for _, item := range m {
			if item.Key == k {
				v = item.Value
				break
			}
		}
	}
	return v
}

// set replaces the value of key in the mapping m, and reports whether m is a mapping with key.
func set(m any, key string, value any) bool {
	ms, ok := m.(yaml.MapSlice)
	if !ok {
		return false
	}
	for i := range ms {
		if ms[i].Key == key {
			ms[i].Value = value
			return true
		}
	}
	return false
}

// OpenAPIHandler serves the OpenAPI document as application/json. Mount it at GET /openapi.json
// (which takes HEAD too), and OpenAPIElse at /openapi.json for the other methods. It needs no
// credentials, but a caller who sends some (a portal session, or a key or token whose account is
// a partner's or staff's) gets the document of what that role may see; credentials that do not
// authenticate count as none, and a key approved for no API is refused (access.NotApprovedForAny).
// It is an uncharged call, behind the guard like any other: held to the caller's uncharged
// budgets before the document is looked at. The document of each audience carries the API's
// examples (Examples), and is built once for each making of them and served from memory with its
// ETag; a GET whose If-None-Match names it answers 304 with no body.
func (a *API) OpenAPIHandler() http.Handler {
	uncharged := func(*http.Request) (access.Charge, error) { return access.Charge{}, nil }
	return a.Guard.Middleware(uncharged, a.Error)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role := flightgraph.CallerFromContext(r.Context()).Role()
		doc, err := a.openAPIServed(r.Context(), role)
		if err != nil {
			a.Log.ErrorContext(r.Context(), "openapi document", "err", err)
			http.Error(w, "the OpenAPI document is not available", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("ETag", doc.etag)
		// The document depends on the credentials: a shared cache keeps the anonymous one only.
		// Added, not set: the coding (Accept-Encoding) is listed already.
		h.Add("Vary", "api-key, Authorization")
		if r.Header.Get("api-key") == "" && r.Header.Get("Authorization") == "" {
			// Whether a credential authenticated is no shared cache's business either.
			h.Set("Cache-Control", "public, max-age=300")
		} else {
			h.Set("Cache-Control", "private, max-age=300")
		}
		if flightgraph.NotModified(r.Header, doc.etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Length", strconv.Itoa(len(doc.body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(doc.body)
		}
	}))
}

// OpenAPIElse answers the methods OpenAPIHandler does not take: 405 with Allow, before any
// credential is looked at.
func (a *API) OpenAPIElse() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, HEAD")
		a.Error(w, r, flightgraph.Errorf(flightgraph.ECodeMethodNotAllowed, "%s is not allowed on %s: use GET", r.Method, r.URL.Path))
	})
}

// hide removes from the document the operations of the APIs not in visible (their
// x-flightgraph-product), the paths left without an operation, the tags and the component schemas
// that only they used: a partner or internal API leaves no trace in the copy of a caller who may
// not see it.
func hide(doc yaml.MapSlice, visible []any) {
	before := schemaRefs(doc)
	paths, _ := member(doc, "paths").(yaml.MapSlice)
	var kept yaml.MapSlice
	used := map[any]bool{}
	for _, p := range paths {
		item, ok := p.Value.(yaml.MapSlice)
		if !ok {
			kept = append(kept, p)
			continue
		}
		var ops yaml.MapSlice
		n := 0
		for _, op := range item {
			product, isOp := member(op.Value, "x-flightgraph-product").(string)
			if isOp && !slices.Contains(visible, any(product)) {
				continue
			}
			if tags, ok := member(op.Value, "tags").([]any); ok {
				for _, t := range tags {
					used[t] = true
				}
			}
			ops = append(ops, op)
			n++
		}
		if n > 0 {
			kept = append(kept, yaml.MapItem{Key: p.Key, Value: ops})
		}
	}
	set(doc, "paths", kept)
	if tags, ok := member(doc, "tags").([]any); ok {
		var left []any
		for _, t := range tags {
			if used[member(t, "name")] {
				left = append(left, t)
			}
		}
		set(doc, "tags", left)
	}
	after := schemaRefs(doc)
	schemas, _ := member(doc, "components", "schemas").(yaml.MapSlice)
	var left yaml.MapSlice
	for _, sc := range schemas {
		if name, _ := sc.Key.(string); before[name] && !after[name] {
			continue
		}
		left = append(left, sc)
	}
	set(member(doc, "components"), "schemas", left)
}

// schemaRefs are the names of the component schemas the document's paths and responses refer to,
// directly or through other schemas.
func schemaRefs(doc yaml.MapSlice) map[string]bool {
	schemas, _ := member(doc, "components", "schemas").(yaml.MapSlice)
	refs := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case yaml.MapSlice:
			for _, item := range v {
				if item.Key == "$ref" {
					if ref, ok := item.Value.(string); ok {
						if name, ok := strings.CutPrefix(ref, "#/components/schemas/"); ok && !refs[name] {
							refs[name] = true
							walk(member(schemas, name))
						}
					}
					continue
				}
				walk(item.Value)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, item := range doc {
		if item.Key == "components" {
			comps, _ := item.Value.(yaml.MapSlice)
			for _, c := range comps {
				if c.Key != "schemas" {
					walk(c.Value)
				}
			}
			continue
		}
		walk(item.Value)
	}
	return refs
}
