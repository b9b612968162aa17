// Package rest is the REST compatibility layer: the original service's paths, headers, HAL
// bodies and error codes, over the same travel and access services that GraphQL uses.
package rest

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	segjson "github.com/segmentio/encoding/json"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/travel"
)

// API serves the REST routes.
type API struct {
	Travel    *travel.Service
	Guard     *access.Guard
	Log       *slog.Logger
	Now       func() time.Time
	Version   string
	BuildTime time.Time
	// Live opens the events stream's subscriptions (nil: the stream answers 404).
	Live *live.Service
	// Answers is the response cache (answered); nil when it is off.
	Answers *live.Cache

	// exampleCache holds the OpenAPI document's examples and the documents served with them.
	exampleCache exampleCache
}

// errorBody is the documented error shape: {"errors":[{code, name, description, severity}]}.
type errorBody struct {
	Errors []errorItem `json:"errors"`
}

type errorItem struct {
	Code        string `json:"code"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Severity    string `json:"severity"`
	Parameter   string `json:"parameter,omitempty"`
}

// Error writes err for REST as flightgraph.Public tells it: the code's status, Retry-After when
// it says when to try again, the message (masked for anything unexpected), and the parameter.
// The catalogue's names and messages are English whatever the request's language, and
// Content-Language says so.
func (a *API) Error(w http.ResponseWriter, r *http.Request, err error) {
	fe := flightgraph.Public(r.Context(), a.Log, err, "path", r.URL.Path)
	e := flightgraph.Lookup(fe.Code)
	w.Header().Set("Content-Language", string(flightgraph.LanguageEN))
	flightgraph.SetCacheHeaders(w.Header(), flightgraph.NoStore) // an error is never kept: the next call may succeed
	if n := fe.RetryAfterSeconds(); n > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(n))
	}
	item := errorItem{Code: fe.Code, Name: e.Name, Description: fe.Message, Parameter: fe.Parameter, Severity: "ERROR"}
	writeJSON(w, e.Status, "application/json", errorBody{Errors: []errorItem{item}})
}

// writeJSON writes v as JSON, as encoding/json's Encoder without HTML escaping would, with
// segmentio/encoding/json: twice as fast on a flight's document, the largest share of a REST
// call's own work (issue 22). Nothing is written when v cannot be encoded.
func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	buf := jsonBuffers.Get().(*[]byte)
	out, err := segjson.Append((*buf)[:0], v, segjson.SortMapKeys)
	if err == nil {
		out = append(out, '\n')
		if encodingCheck != nil {
			encodingCheck(v, out)
		}
		w.Write(out)
	}
	if cap(out) <= maxKeptJSONBuffer {
		*buf = out[:0]
		jsonBuffers.Put(buf)
	}
}

// jsonBuffers are writeJSON's buffers, each kept for the next answer unless it grew past
// maxKeptJSONBuffer (a 50-flight board is 125 KB; all deals some 580 KB, and rare).
var jsonBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxKeptJSONBuffer = 256 << 10

// encodingCheck, when set, is shown every answer's value and bytes as written.
var encodingCheck func(v any, written []byte)

// CheckEncoding has every answer's bytes checked by check, with the value they encode: for
// tests, which hold segmentio's bytes to encoding/json's on every answer they make. It is set
// before the first request and never again.
func CheckEncoding(check func(v any, written []byte)) { encodingCheck = check }
