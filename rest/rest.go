// Package rest is the REST compatibility layer: the original service's paths, headers, HAL
// bodies and error codes, over the same travel and access services that GraphQL uses.
package rest

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
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

// Error maps err to the wire once for REST: a domain error with its code's status (and
// Retry-After when it says when to try again), anything else logged with the request id and
// masked as INSP_500.000.
func (a *API) Error(w http.ResponseWriter, r *http.Request, err error) {
	code := flightgraph.ErrorCode(err)
	e := flightgraph.Lookup(code)
	item := errorItem{Code: code, Name: e.Name, Description: flightgraph.ErrorMessage(err), Severity: "ERROR"}
	var fe *flightgraph.Error
	gone := r.Context().Err() != nil // the client left or the time ran out: not the server's fault to log
	if errors.As(err, &fe) {
		item.Parameter = fe.Parameter
		if n := fe.RetryAfterSeconds(); n > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(n))
		}
		if fe.Err != nil && !gone {
			a.Log.WarnContext(r.Context(), "backing service failed", "requestId", flightgraph.RequestIDFromContext(r.Context()), "code", code, "err", fe.Err)
		}
	} else {
		rid := flightgraph.RequestIDFromContext(r.Context())
		if !gone {
			a.Log.ErrorContext(r.Context(), "internal error", "requestId", rid, "path", r.URL.Path, "err", err)
		}
		item.Description = "Internal error; quote request id " + rid + "."
	}
	writeJSON(w, e.Status, "application/json", errorBody{Errors: []errorItem{item}})
}

func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
