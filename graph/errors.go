package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/flightgraph/flightgraph"
)

// ErrorPresenter maps errors to the wire once for GraphQL: a domain error keeps its message and
// carries its code and HTTP status in extensions, and, when it says when to try again, the
// seconds to wait in extensions.retryAfter; anything else is logged with the request id and
// shown as a masked internal error. Parse and validation errors from gqlgen pass through with
// GRAPHQL_* codes, as clients of any GraphQL server expect, with the "Did you mean …?"
// suggestions of what the caller may see (suggestions; nil shows them all but to anonymous
// callers, to whom the schema is not open). Work stopped because the client left or the time
// ran out is not a server error and logs no ERROR.
func ErrorPresenter(log *slog.Logger, suggestions *Suggestions) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		var ge *gqlerror.Error
		if errors.As(err, &ge) && ge.Err == nil {
			// A parse, validation or argument error made by gqlgen itself.
			gerr.Message = suggestions.For(ctx, gerr.Message)
			if code, ok := gerr.Extensions["code"].(string); ok {
				flightgraph.RecordFromContext(ctx).NoteError(code)
			}
			return gerr
		}
		fe := flightgraph.Public(ctx, log, err, "path", gerr.Path.String())
		gerr.Message = fe.Message
		gerr.Extensions = extensions(fe.Code, fe.Parameter)
		if n := fe.RetryAfterSeconds(); n > 0 {
			gerr.Extensions["retryAfter"] = n
		}
		if fe.Code == flightgraph.ECodeInternal {
			gerr.Extensions["requestId"] = flightgraph.RequestIDFromContext(ctx)
		}
		if i, ok := representation(ctx, gerr.Path); ok {
			gerr.Extensions["representation"] = i
		}
		return gerr
	}
}

// representation returns the index of the _entities representation an error at path is about:
// gqlgen reports a representation's error at [_entities (or its alias), index], and the answer
// names the index in extensions.representation too, for gateways that keep extensions but
// rewrite paths.
func representation(ctx context.Context, path ast.Path) (int, bool) {
	if len(path) != 2 || !graphql.HasOperationContext(ctx) {
		return 0, false
	}
	key, isName := path[0].(ast.PathName)
	i, isIndex := path[1].(ast.PathIndex)
	oc := graphql.GetOperationContext(ctx)
	if !isName || !isIndex || oc.Operation == nil {
		return 0, false
	}
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"}) {
		if f.Alias == string(key) {
			return int(i), f.Name == "_entities"
		}
	}
	return 0, false
}

func extensions(code, parameter string) map[string]any {
	e := flightgraph.Lookup(code)
	ext := map[string]any{"code": code, "status": e.Status, "name": e.Name}
	if parameter != "" {
		ext["parameter"] = parameter
	}
	return ext
}

// Recover turns a panic in a resolver into a masked internal error and logs it.
func Recover(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "resolver panicked", "requestId", flightgraph.RequestIDFromContext(ctx), "panic", fmt.Sprint(p))
		return fmt.Errorf("panic: %v", p)
	}
}

// ErrorWriter answers a refused GraphQL request in GraphQL's shape, with the code's HTTP status
// (401, 403, 429 …) so that plain HTTP clients and gateways see the refusal too. Failures that are
// not the caller's are logged with the request id.
func ErrorWriter(log *slog.Logger) func(w http.ResponseWriter, r *http.Request, err error) {
	return func(w http.ResponseWriter, r *http.Request, err error) { writeError(log, w, r, err) }
}

func writeError(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	fe := flightgraph.Public(r.Context(), log, err, "path", r.URL.Path)
	e := flightgraph.Lookup(fe.Code)
	ext := extensions(fe.Code, fe.Parameter)
	if e.Status >= http.StatusInternalServerError {
		ext["requestId"] = flightgraph.RequestIDFromContext(r.Context())
	}
	if n := fe.RetryAfterSeconds(); n > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(n))
	}
	if ra := w.Header().Get("Retry-After"); ra != "" {
		if n, err := strconv.Atoi(ra); err == nil {
			ext["retryAfter"] = n
		}
	}
	w.Header().Set("Content-Type", "application/json")
	flightgraph.SetCacheHeaders(w.Header(), flightgraph.NoStore) // a refusal is never kept
	w.WriteHeader(e.Status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": fe.Message, "extensions": ext}}})
}

// stopped is the error of work stopped because its request's context is done: the deadline
// passed (every Load asks, so no resolver gets another value), or the client went away.
func stopped(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return flightgraph.Errorf(flightgraph.ECodeTimeout, "the request ran out of time")
	}
	return flightgraph.Errorf(flightgraph.ECodeTimeout, "the request was cancelled")
}
