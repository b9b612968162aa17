package rest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/goccy/go-yaml"
)

// openAPIYAML is the OpenAPI 3.1 document of the REST routes (every one of Routes) and of the
// token endpoint. A test holds it to Routes and validates real answers against it.
//
//go:embed openapi.yaml
var openAPIYAML []byte

var openAPIJSON = sync.OnceValues(func() ([]byte, error) {
	raw, err := yaml.YAMLToJSON(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("rest: openapi.yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("rest: openapi.yaml as JSON: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
})

// OpenAPI returns the OpenAPI document as JSON. It is converted from the embedded YAML once; the
// caller must not modify the returned bytes.
func OpenAPI() ([]byte, error) { return openAPIJSON() }

// OpenAPIHandler serves the OpenAPI document as application/json, to GET and HEAD. Mount it at
// GET /openapi.json; it needs no credentials.
func (a *API) OpenAPIHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		doc, err := OpenAPI()
		if err != nil {
			if a != nil && a.Log != nil {
				a.Log.ErrorContext(r.Context(), "openapi document", "err", err)
			}
			http.Error(w, "the OpenAPI document is not available", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(doc)))
		h.Set("Cache-Control", "public, max-age=300")
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(doc)
		}
	})
}
