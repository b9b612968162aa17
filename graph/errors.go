package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/flightgraph/flightgraph"
)

// ErrorPresenter maps errors to the wire once for GraphQL: a domain error keeps its message and
// carries its code and HTTP status in extensions, and, when it says when to try again, the
// seconds to wait in extensions.retryAfter; anything else is logged with the request id and
// shown as a masked internal error. Parse and validation errors from gqlgen pass through with
// GRAPHQL_* codes, as clients of any GraphQL server expect.
func ErrorPresenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		var fe *flightgraph.Error
		if errors.As(err, &fe) {
			gerr.Message = fe.Message
			gerr.Extensions = extensions(fe.Code, fe.Parameter)
			if n := fe.RetryAfterSeconds(); n > 0 {
				gerr.Extensions["retryAfter"] = n
			}
			if fe.Err != nil {
				log.WarnContext(ctx, "backing service failed", "requestId", flightgraph.RequestIDFromContext(ctx), "code", fe.Code, "path", gerr.Path.String(), "err", fe.Err)
			}
			return gerr
		}
		var ge *gqlerror.Error
		if errors.As(err, &ge) && ge.Err == nil {
			return gerr // a parse, validation or argument error made by gqlgen itself
		}
		rid := flightgraph.RequestIDFromContext(ctx)
		log.ErrorContext(ctx, "internal error", "requestId", rid, "path", gerr.Path.String(), "err", err)
		gerr.Message = fmt.Sprintf("Internal error; quote request id %s.", rid)
		gerr.Extensions = extensions(flightgraph.ECodeInternal, "")
		gerr.Extensions["requestId"] = rid
		return gerr
	}
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
