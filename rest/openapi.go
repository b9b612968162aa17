package rest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
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

// openAPIDocs caches the document per set of visible APIs: there are as many as visibilities.
var openAPIDocs struct {
	mu   sync.Mutex
	docs map[string][]byte
}

// OpenAPI returns the OpenAPI document, as JSON, that a caller of role may see: it names only the
// APIs of the catalogue visible to the role ("" for anonymous callers: the public ones), so that
// partner and internal APIs leave no trace in anyone else's copy. Each variant is built once;
// the caller must not modify the returned bytes.
func OpenAPI(role flightgraph.Role) ([]byte, error) {
	var visible []*flightgraph.Product
	var slugs []string
	for _, p := range access.Products {
		if p.VisibleTo(role) {
			visible = append(visible, p)
			slugs = append(slugs, p.Slug)
		}
	}
	key := strings.Join(slugs, ",")
	openAPIDocs.mu.Lock()
	defer openAPIDocs.mu.Unlock()
	if doc, ok := openAPIDocs.docs[key]; ok {
		return doc, nil
	}
	doc, err := openAPIFor(visible)
	if err != nil {
		return nil, fmt.Errorf("rest: openapi.yaml: %w", err)
	}
	if openAPIDocs.docs == nil {
		openAPIDocs.docs = map[string][]byte{}
	}
	openAPIDocs.docs[key] = doc
	return doc, nil
}

// openAPIFor converts the YAML to indented JSON, in the YAML's order, with the {api} enum and the
// OAuth scopes of the given products.
func openAPIFor(products []*flightgraph.Product) ([]byte, error) {
	var doc yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(openAPIYAML, &doc, yaml.UseOrderedMap()); err != nil {
		return nil, err
	}
	var slugs []any
	visible := map[string]bool{}
	for _, p := range products {
		slugs = append(slugs, p.Slug)
		visible[p.Slug] = true
	}
	doc = withoutHidden(doc, visible)
	params, _ := member(doc, "paths", "/opendata/{api}/{version}/ping", "get", "parameters").([]any)
	found := false
	for _, p := range params {
		if p, ok := p.(yaml.MapSlice); ok && member(p, "name") == "api" {
			found = set(member(p, "schema"), "enum", slugs)
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

// withoutHidden returns doc without what belongs to an API the caller may not see (an
// x-flightgraph-product that is not in visible): its operations, the paths left without any, and
// its tags and component schemas, which are marked the same way. A partner or internal API thus
// leaves no trace in anyone else's copy.
func withoutHidden(doc yaml.MapSlice, visible map[string]bool) yaml.MapSlice {
	hidden := func(v any) bool {
		p, _ := member(v, "x-flightgraph-product").(string)
		return p != "" && !visible[p]
	}
	keep := func(m yaml.MapSlice, drop func(item yaml.MapItem) bool) yaml.MapSlice {
		out := make(yaml.MapSlice, 0, len(m))
		for _, item := range m {
			if !drop(item) {
				out = append(out, item)
			}
		}
		return out
	}
	for i := range doc {
		switch doc[i].Key {
		case "paths":
			paths, _ := doc[i].Value.(yaml.MapSlice)
			out := make(yaml.MapSlice, 0, len(paths))
			for _, path := range paths {
				if ops, ok := path.Value.(yaml.MapSlice); ok {
					if path.Value = keep(ops, func(op yaml.MapItem) bool { return hidden(op.Value) }); len(path.Value.(yaml.MapSlice)) == 0 {
						continue
					}
				}
				out = append(out, path)
			}
			doc[i].Value = out
		case "tags":
			tags, _ := doc[i].Value.([]any)
			var out []any
			for _, t := range tags {
				if !hidden(t) {
					out = append(out, t)
				}
			}
			doc[i].Value = out
		case "components":
			if schemas, ok := member(doc[i].Value, "schemas").(yaml.MapSlice); ok {
				set(doc[i].Value, "schemas", keep(schemas, func(s yaml.MapItem) bool { return hidden(s.Value) }))
			}
		}
	}
	return doc
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
// authenticate count as none. It is an uncharged call, behind the guard like any other: held to
// the caller's uncharged limits.
func (a *API) OpenAPIHandler() http.Handler {
	uncharged := func(*http.Request) ([]string, error) { return nil, nil }
	return a.Guard.Middleware(uncharged, a.Error)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role := flightgraph.CallerFromContext(r.Context()).Role()
		doc, err := OpenAPI(role)
		if err != nil {
			a.Log.ErrorContext(r.Context(), "openapi document", "err", err)
			http.Error(w, "the OpenAPI document is not available", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(doc)))
		// The document depends on the credentials: a shared cache keeps the anonymous one only.
		h.Set("Vary", "api-key, Authorization")
		if r.Header.Get("api-key") == "" && r.Header.Get("Authorization") == "" {
			// Whether a credential authenticated is no shared cache's business either.
			h.Set("Cache-Control", "public, max-age=300")
		} else {
			h.Set("Cache-Control", "private, max-age=300")
		}
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(doc)
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
