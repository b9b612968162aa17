package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/flightgraph/flightgraph"
)

// MaxBodyBytes bounds a GraphQL request body.
const MaxBodyBytes = 1 << 20

// entityProducts maps federation entity types to the product that serves them.
var entityProducts = map[string]string{
	"Flight": "flightstatus", "Airport": "opendata", "City": "opendata", "Country": "opendata", "Aircraft": "inspire",
}

// Classifier tells the access guard which API products a GraphQL request calls: the @api product
// of each root field it selects (one call per product, however many fields), and for federation's
// _entities the products of the entity types it asks for. Introspection, _service and the portal's
// fields need no product. A request that does not parse needs none either: gqlgen answers it.
type Classifier struct {
	schema *ast.Schema
	apq    graphql.Cache[string]
	cache  *lru.LRU[[]string]
}

// NewClassifier reads the @api directives of schema; apq is the persisted-query cache that the
// GraphQL handler uses, so that a hash-only request is classified too.
func NewClassifier(schema *ast.Schema, apq graphql.Cache[string]) *Classifier {
	return &Classifier{schema: schema, apq: apq, cache: lru.New[[]string](1000)}
}

type rawParams struct {
	Query         string `json:"query"`
	OperationName string `json:"operationName"`
	Extensions    struct {
		PersistedQuery struct {
			Hash string `json:"sha256Hash"`
		} `json:"persistedQuery"`
	} `json:"extensions"`
}

// Classify implements access.Classifier. It reads a POST body and puts it back for gqlgen.
func (c *Classifier) Classify(r *http.Request) ([]string, error) {
	var p rawParams
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		p.Query, p.OperationName = q.Get("query"), q.Get("operationName")
		if ext := q.Get("extensions"); ext != "" {
			json.Unmarshal([]byte(ext), &p.Extensions)
		}
	case http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if len(body) > MaxBodyBytes {
			return nil, flightgraph.Errorf(flightgraph.ECodeInvalidParameter, "the request body exceeds %d bytes", MaxBodyBytes)
		}
		json.Unmarshal(body, &p)
	default:
		return nil, nil
	}
	if p.Query == "" && p.Extensions.PersistedQuery.Hash != "" && c.apq != nil {
		p.Query, _ = c.apq.Get(r.Context(), p.Extensions.PersistedQuery.Hash)
	}
	if p.Query == "" {
		return nil, nil
	}
	key := p.OperationName + "\x00" + p.Query
	if v, ok := c.cache.Get(r.Context(), key); ok {
		return v, nil
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: p.Query})
	if err != nil {
		return nil, nil
	}
	var op *ast.OperationDefinition
	for _, o := range doc.Operations {
		if o.Name == p.OperationName || (p.OperationName == "" && len(doc.Operations) == 1) {
			op = o
		}
	}
	if op == nil || op.Operation != ast.Query {
		return nil, nil // mutations are the portal's; a missing operation is gqlgen's to report
	}
	var products []string
	c.collect(doc, op.SelectionSet, c.schema.Query, &products, 0)
	slices.Sort(products)
	products = slices.Compact(products)
	c.cache.Add(r.Context(), key, products)
	return products, nil
}

func (c *Classifier) collect(doc *ast.QueryDocument, set ast.SelectionSet, typ *ast.Definition, into *[]string, depth int) {
	if typ == nil || depth > 8 {
		return
	}
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name == "_entities" {
				for _, sub := range s.SelectionSet {
					if f, ok := sub.(*ast.InlineFragment); ok && entityProducts[f.TypeCondition] != "" {
						*into = append(*into, entityProducts[f.TypeCondition])
					}
				}
				continue
			}
			if def := typ.Fields.ForName(s.Name); def != nil {
				if d := def.Directives.ForName("api"); d != nil {
					if a := d.Arguments.ForName("product"); a != nil {
						*into = append(*into, a.Value.Raw)
					}
				}
			}
		case *ast.InlineFragment:
			c.collect(doc, s.SelectionSet, typ, into, depth+1)
		case *ast.FragmentSpread:
			if f := doc.Fragments.ForName(s.Name); f != nil {
				c.collect(doc, f.SelectionSet, typ, into, depth+1)
			}
		}
	}
}

// ErrorWriter answers a refused GraphQL request in GraphQL's shape, with the code's HTTP status
// (401, 403, 429 …) so that plain HTTP clients and gateways see the refusal too. Failures that are
// not the caller's are logged with the request id.
func ErrorWriter(log *slog.Logger) func(w http.ResponseWriter, r *http.Request, err error) {
	return func(w http.ResponseWriter, r *http.Request, err error) { writeError(log, w, r, err) }
}

func writeError(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	code := flightgraph.ErrorCode(err)
	if e := flightgraph.Lookup(code); e.Status >= 500 {
		log.ErrorContext(r.Context(), "request refused by a failure", "requestId", flightgraph.RequestIDFromContext(r.Context()), "code", code, "err", err)
	}
	e := flightgraph.Lookup(code)
	msg := flightgraph.ErrorMessage(err)
	ext := extensions(code, "")
	if code == flightgraph.ECodeInternal || code == flightgraph.ECodeDatabase || code == flightgraph.ECodeCache {
		ext["requestId"] = flightgraph.RequestIDFromContext(r.Context())
	}
	if ra := w.Header().Get("Retry-After"); ra != "" {
		if n, err := strconv.Atoi(ra); err == nil {
			ext["retryAfter"] = n
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": msg, "extensions": ext}}})
}
