package rest

import (
	"errors"
	"net/http"

	"github.com/flightgraph/flightgraph"
)

// Register adds every REST route to mux, each behind the access guard with the product it
// belongs to. The list here is the contract: the OpenAPI document must describe exactly these.
func (a *API) Register(mux *http.ServeMux) {
	mux.Handle("GET /opendata/{api}/{version}/ping", a.guard(fromPath("api"), http.HandlerFunc(a.ping)))
}

// guard puts the access middleware in front of h, for the product that product(r) names.
func (a *API) guard(product func(*http.Request) (string, error), h http.Handler) http.Handler {
	classify := func(r *http.Request) ([]string, error) {
		p, err := product(r)
		if err != nil {
			return nil, err
		}
		return []string{p}, nil
	}
	return a.Guard.Middleware(classify, a.Error)(h)
}

// fromPath takes the product from a path segment; a segment that names no product is a path that
// does not exist.
func fromPath(name string) func(*http.Request) (string, error) {
	return func(r *http.Request) (string, error) {
		return r.PathValue(name), nil
	}
}

func asError(err error, target **flightgraph.Error) bool { return errors.As(err, target) }
