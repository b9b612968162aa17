package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// MaxBodyBytes bounds a GraphQL request body. A real operation with its variables is a few
// kilobytes and the largest document a plan allows (10,000 tokens) about 60; the bound is set by
// what a federation gateway sends: one _entities fetch of the costliest entity, a Flight, is about
// 48 bytes a representation ({"__typename":"Flight","id":"20261122+XX+1234"}), so 256 KiB holds
// 5,000 of them with the operation (TestEntityRoundTrips sends them): 25 root lists of
// MaxPageSize flights. Past the body, the plan's cost bound applies to the representations (each
// costs what its selection costs), and the document's tokens are bounded again by the plan.
// Decoding is the costliest step before any bound applies, so this bound is what keeps a refusal
// cheap.
const MaxBodyBytes = 256 << 10

// MaxErrors bounds the errors of one answer: a list of a thousand items that each fail, or a
// document with a thousand mistakes, answers with the first ones and a count of the rest.
const MaxErrors = 20

// StatusClientClosed is the status recorded (in logs and metrics, never seen by anyone) for a
// request whose client went away before its answer: nginx's 499.
const StatusClientClosed = 499

// HTTP is the GraphQL-over-HTTP transport: GET for queries, POST with a JSON body for anything.
// It reads each request exactly once and strictly: one JSON object of at most MaxBodyBytes with
// nothing after it, no batches. What it read is what gqlgen parses, validates, admits (Gate) and
// executes; no other reading of the request decides anything.
//
// Statuses: a request refused before execution answers with its error's status (the catalogue's
// for domain errors: 401, 403, 429, 400 for the bounds; 400 for parse and validation errors); an
// executed operation answers 200, unless it produced no data at all and every error agrees on one
// status, such as a sign-in refused with 429. A successful answer is written as gqlgen encoded it:
// gqlgen's own transport passes it through json.Marshal, which re-validates and compacts the
// encoded data byte by byte, half a millisecond for the 130 KB of a 50-flight board. An operation
// written with @defer, for a client that accepts multipart/mixed, is answered as incremental
// delivery of one part (multipartWanted, writeMultipart); InlineDeferred has executed it whole.
type HTTP struct {
	Log *slog.Logger
}

var _ graphql.Transport = HTTP{}

// Supports implements graphql.Transport: every request but a CORS preflight (OPTIONS) is this
// transport's to answer, even the ones it refuses, so that no other reading of them exists.
func (HTTP) Supports(r *http.Request) bool { return r.Method != http.MethodOptions }

// Do implements graphql.Transport.
func (t HTTP) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	start := graphql.Now()
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		t.refuse(w, r, flightgraph.Errorf(flightgraph.ECodeMethodNotAllowed, "GraphQL takes GET (queries) and POST"))
		return
	}
	params, err := t.read(w, r)
	if err != nil {
		t.refuse(w, r, err)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	if r.Method == http.MethodGet {
		ctx = context.WithValue(ctx, getOnlyKey{}, false)
	}
	mediaType := responseType(r.Header.Get("Accept"))
	if mediaType == "" {
		t.refuse(w, r, flightgraph.Errorf(flightgraph.ECodeNotAcceptable,
			"GraphQL answers application/graphql-response+json or application/json; the Accept header names neither"))
		return
	}
	w.Header().Set("Content-Type", mediaType)
	ctx, tag := withAnswerTag(ctx)
	rc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		// Nothing executes: a refusal, bounded as refusals are, whatever its status. A persisted
		// query's miss, and a document that does not validate as application/json, answer 200
		// (so that Apollo clients send the document; as the spec asks), yet did nothing for the
		// caller.
		access.Refused(ctx)
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		resp.Data = nil // nothing executed: the answer has no data entry at all
		status := refusalStatus(resp.Errors, mediaType)
		if status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", "POST") // the operation is a mutation
		}
		retryAfter(w.Header(), resp.Errors)
		flightgraph.SetCacheHeaders(w.Header(), flightgraph.NoStore)
		w.WriteHeader(status)
		writeResponse(w, capErrors(resp))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	resp := responses(ctx)
	if resp == nil {
		// gqlgen answers nothing once the request's context is done before execution: the
		// client went away, or the time ran out.
		t.gone(w, r, ctx)
		return
	}
	for _, e := range resp.Errors {
		if errors.As(e, new(refusedAtExecution)) {
			resp.Data = nil // the operation was admitted on a wrong reading: none of it is answered
			break
		}
	}
	if len(resp.Data) == 0 {
		resp.Data = jsonNull // it executed: its data entry is present, null
	}
	// A query's answer may be kept as long as its fields' hints allow (CacheControl), whether it
	// came by GET or POST: gateways fetch from subgraphs by POST and read the header there (Apollo
	// Router's response cache, Apollo Gateway), while HTTP caches keep no POST answer. An answer
	// with errors, and a mutation's, is never kept.
	cache := tag.policy
	if len(resp.Errors) > 0 {
		cache = flightgraph.NoStore
	}
	flightgraph.SetCacheHeaders(w.Header(), cache)
	if tag.kept && cache.Cacheable() {
		w.Header().Set("Age", strconv.Itoa(tag.age)) // from the response cache (Answers)
	}
	if status := executedStatus(resp); status != http.StatusOK {
		retryAfter(w.Header(), resp.Errors)
		w.WriteHeader(status)
	} else if multipartWanted(r.Header.Get("Accept"), usedDefer(rc)) {
		writeMultipart(w, capErrors(resp))
		return
	} else if tag.etag != "" && notModified(w, r, tag.etag, mediaType) {
		return
	}
	writeResponse(w, capErrors(resp))
}

// multipartBoundary is the boundary of a multipart/mixed answer, as the incremental delivery RFC
// and Apollo Client write it.
const multipartBoundary = "-"

// multipartWanted reports whether an answer goes out as incremental delivery's multipart/mixed:
// when Accept lists it (with the 2022-08-24 deferSpec Apollo Client and gqlgen speak, or none) and
// the operation was written with @defer, or no JSON type is acceptable.
func multipartWanted(accept string, deferred bool) bool {
	multipart, json := false, false
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "multipart/mixed":
			if spec, ok := params["deferspec"]; !ok || spec == "20220824" {
				multipart = true
			}
		case "*/*", "application/*", "application/json", "application/graphql-response+json":
			json = true
		}
	}
	return multipart && (deferred || !json)
}

// writeMultipart writes resp as incremental delivery (multipart/mixed, deferSpec=20220824): one
// part, the whole answer, with hasNext false. InlineDeferred has executed every deferred fragment
// inline, as the RFC allows: there is nothing more to send, and no field is left for later.
func writeMultipart(w http.ResponseWriter, resp *graphql.Response) {
	h := w.Header()
	h.Set("Content-Type", `multipart/mixed; boundary="`+multipartBoundary+`"; deferSpec=20220824`)
	h.Add("Vary", "Accept")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, "\r\n--"+multipartBoundary+"\r\nContent-Type: application/json; charset=utf-8\r\n\r\n")
	last := false
	resp.HasNext = &last
	writeResponse(w, resp)
	io.WriteString(w, "\r\n--"+multipartBoundary+"--\r\n")
}

// notModified sets the ETag of an answer that Answers keeps, as the media type it is sent in, and
// answers 304 with no body when the request is a GET whose If-None-Match names it. The answer
// depends on the credentials that decide the caller's audience: no shared cache keeps it, and
// each use asks again, whatever its fields' hints say.
func notModified(w http.ResponseWriter, r *http.Request, etag, mediaType string) bool {
	if mediaType != "application/json" {
		etag = strings.TrimSuffix(etag, `"`) + `-gr"` // another representation of the same data
	}
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, no-cache")
	h.Add("Vary", "api-key, Authorization")
	if r.Method != http.MethodGet || !flightgraph.NotModified(r.Header, etag) {
		return false
	}
	w.WriteHeader(http.StatusNotModified)
	return true
}

// read reads the operation of a GET or POST request; its errors are the catalogue's.
func (t HTTP) read(w http.ResponseWriter, r *http.Request) (*graphql.RawParams, error) {
	p := &graphql.RawParams{}
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		p.Query, p.OperationName = q.Get("query"), q.Get("operationName")
		for name, into := range map[string]any{"variables": &p.Variables, "extensions": &p.Extensions} {
			if v := q.Get(name); v != "" {
				if err := flightgraph.DecodeOne(strings.NewReader(v), into); err != nil {
					return nil, flightgraph.ParamErrorf(flightgraph.ECodeBadBody, name, "%s must be one JSON object: %s", name, err)
				}
			}
		}
		return p, hasQuery(p)
	}
	if err := flightgraph.ReadJSON(w, r, MaxBodyBytes, p, "the body must be one JSON object {query, operationName, variables, extensions}"); err != nil {
		return nil, err
	}
	return p, hasQuery(p)
}

// hasQuery refuses a request that names no operation to run: neither a document nor a persisted
// query's hash. It is not a well-formed GraphQL-over-HTTP request (a misspelt "qeury", say), so it
// answers 400 whatever the Accept, before gqlgen reads it as a document that fails to validate.
func hasQuery(p *graphql.RawParams) error {
	if p.Query != "" || p.Extensions["persistedQuery"] != nil {
		return nil
	}
	return flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "query", "the request has no query")
}

// refuse answers a request that could not be read, in GraphQL's shape, and logs it at INFO: a
// client's fault is not the server's.
func (t HTTP) refuse(w http.ResponseWriter, r *http.Request, err error) {
	code := flightgraph.ErrorCode(err)
	if t.Log != nil {
		t.Log.InfoContext(r.Context(), "GraphQL request refused", "requestId", flightgraph.RequestIDFromContext(r.Context()), "code", code,
			"reason", flightgraph.ErrorMessage(err))
	}
	if code == flightgraph.ECodeMethodNotAllowed {
		w.Header().Set("Allow", "GET, POST, OPTIONS")
	}
	w.Header().Set("Content-Type", "application/json")
	flightgraph.SetCacheHeaders(w.Header(), flightgraph.NoStore)
	w.WriteHeader(flightgraph.Lookup(code).Status)
	writeResponse(w, &graphql.Response{Errors: gqlerror.List{{Message: flightgraph.ErrorMessage(err), Extensions: extensions(code, "")}}})
}

// gone ends a request whose context was done before gqlgen executed it.
func (t HTTP) gone(w http.ResponseWriter, r *http.Request, ctx context.Context) {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err := flightgraph.Errorf(flightgraph.ECodeTimeout, "the request ran out of time")
		flightgraph.SetCacheHeaders(w.Header(), flightgraph.NoStore)
		w.WriteHeader(flightgraph.Lookup(flightgraph.ECodeTimeout).Status)
		writeResponse(w, &graphql.Response{Errors: gqlerror.List{{Message: flightgraph.ErrorMessage(err), Extensions: extensions(flightgraph.ECodeTimeout, "")}}})
		return
	}
	if t.Log != nil {
		t.Log.InfoContext(r.Context(), "client went away before its answer", "requestId", flightgraph.RequestIDFromContext(r.Context()))
	}
	w.WriteHeader(StatusClientClosed) // nobody reads it; the logs and metrics do
}

// refusalStatus is the HTTP status of an operation refused before execution, answered as
// mediaType. A refusal the catalogue names (an access or limit refusal, 401, 403 or 429; a bound,
// 400; a mutation over GET, 405) answers with its code's status under either media type: the
// GraphQL-over-HTTP spec lets a server forbid a request with the relevant 4xx, and HTTP clients,
// retry middleware and Hive Gateway read it. A GraphQL request error (the document does not parse
// or validate, or the variables do not coerce) answers 200 as application/json, as the spec asks of
// a well-formed request in that legacy media type, and 400 as application/graphql-response+json,
// where the status tells that nothing executed. A persisted query the server does not hold yet
// answers 200: Apollo clients resend it with its text only when they read that error in a 200.
func refusalStatus(errs gqlerror.List, mediaType string) int {
	for _, e := range errs {
		if s, ok := e.Extensions["status"].(int); ok && s >= 400 {
			return s
		}
		if c, _ := e.Extensions["code"].(string); c == "PERSISTED_QUERY_NOT_FOUND" || c == "PERSISTED_QUERY_NOT_SUPPORTED" {
			return http.StatusOK
		}
	}
	if mediaType == "application/json" {
		return http.StatusOK
	}
	return http.StatusBadRequest
}

// executedStatus is the HTTP status of an executed operation: 200, unless it produced no data and
// all its errors have one status of 400 or more (a refused sign-in, 429; a database outage, 502),
// which gateways and plain HTTP clients can then see.
func executedStatus(resp *graphql.Response) int {
	if len(resp.Errors) == 0 || !(len(resp.Data) == 0 || string(resp.Data) == "null") {
		return http.StatusOK
	}
	status := 0
	for _, e := range resp.Errors {
		s, _ := e.Extensions["status"].(int)
		if s < 400 || status != 0 && s != status {
			return http.StatusOK
		}
		status = s
	}
	return status
}

// retryAfter sets the Retry-After header of a refusal from its errors' extensions.retryAfter (a
// sign-in refused for too many attempts), unless the access guard has set it already (a limit).
func retryAfter(h http.Header, errs gqlerror.List) {
	if h.Get("Retry-After") != "" {
		return
	}
	for _, e := range errs {
		if n, ok := e.Extensions["retryAfter"].(int); ok && n > 0 {
			h.Set("Retry-After", strconv.Itoa(n))
			return
		}
	}
}

// capErrors keeps the first MaxErrors errors of resp and says how many it left out.
func capErrors(resp *graphql.Response) *graphql.Response {
	if len(resp.Errors) <= MaxErrors {
		return resp
	}
	left := len(resp.Errors) - MaxErrors
	resp.Errors = append(resp.Errors[:MaxErrors:MaxErrors], &gqlerror.Error{
		Message:    fmt.Sprintf("%d more errors are left out", left),
		Extensions: map[string]any{"code": "ERRORS_TRUNCATED", "omitted": left},
	})
	return resp
}

// responseType is the media type to answer a request whose Accept header is accept: the first
// of application/graphql-response+json and application/json (or a wildcard, which means
// application/json, what clients that predate the spec parse) that accept lists without q=0;
// application/json without an Accept header; "" when accept names neither, which is answered 406.
// An Accept of multipart/mixed alone is served (incremental delivery, multipartWanted), its
// refusals and errors as application/json.
func responseType(accept string) string {
	if strings.TrimSpace(accept) == "" {
		return "application/json"
	}
	multipart := false
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q <= 0 {
			continue // explicitly not acceptable
		}
		switch mt {
		case "*/*", "application/*", "application/json":
			return "application/json"
		case "application/graphql-response+json":
			return mt
		case "multipart/mixed":
			multipart = true
		}
	}
	if multipart {
		return "application/json"
	}
	return ""
}

// jsonNull is the data of an executed operation that answered nothing.
var jsonNull = json.RawMessage("null")

// writeResponse writes resp in graphql.Response's JSON shape, splicing in the encoded data.
func writeResponse(w io.Writer, resp *graphql.Response) {
	if resp.Label != "" || resp.Path != nil || resp.HasNext != nil && *resp.HasNext {
		b, _ := json.Marshal(resp) // gqlgen's deferral is never used (InlineDeferred); stay safe
		w.Write(b)
		return
	}
	// The data, the bulk of the answer, goes out as gqlgen encoded it: no copy. An operation that
	// did not execute has no data entry at all (GraphQL spec, "Response"); one that did has one,
	// null when it answered nothing.
	head := []byte{'{'}
	if len(resp.Errors) > 0 {
		b, _ := json.Marshal(resp.Errors)
		head = append(append(head, `"errors":`...), b...)
	}
	if len(resp.Data) > 0 {
		if len(head) > 1 {
			head = append(head, ',')
		}
		w.Write(append(head, `"data":`...))
		w.Write(resp.Data)
		head = head[:0]
	}
	if len(resp.Extensions) > 0 {
		if len(head) != 1 {
			head = append(head, ',')
		}
		b, _ := json.Marshal(resp.Extensions)
		head = append(append(head, `"extensions":`...), b...)
	}
	if resp.HasNext != nil { // the one part of a multipart answer
		if len(head) != 1 {
			head = append(head, ',')
		}
		head = append(head, `"hasNext":false`...)
	}
	w.Write(append(head, '}'))
}
