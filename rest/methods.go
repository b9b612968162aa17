package rest

import (
	"net/http"
	"slices"
	"strings"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
)

// byMethod holds, for each method of Routes, a mux of that method's patterns only: it tells which
// route, if any, a path is of under each method (allowed).
var byMethod = func() map[string]*http.ServeMux {
	out := map[string]*http.ServeMux{}
	for _, rt := range Routes {
		method, _, _ := strings.Cut(rt.Pattern, " ")
		if out[method] == nil {
			out[method] = http.NewServeMux()
		}
		out[method].Handle(rt.Pattern, http.NotFoundHandler())
	}
	return out
}()

// routeOf maps each pattern of Routes to its route.
var routeOf = func() map[string]Route {
	out := map[string]Route{}
	for _, rt := range Routes {
		out[rt.Pattern] = rt
	}
	return out
}()

// allowed returns the methods that r's path answers to for its caller, as an Allow header lists
// them (GET with its HEAD), or "" when no route of an API the caller may see has that path. A
// route of a partner or internal API counts only for those who see the API, and a ping only at
// its API's version, so that a wrong method tells nobody of a path the right one would answer
// INSP_404.000 (a hidden API's, an unknown version's).
func (a *API) allowed(r *http.Request) string {
	role := flightgraph.CallerFromContext(r.Context()).Role()
	var methods []string
	for method, mux := range byMethod {
		probe := r.Clone(r.Context())
		probe.Method = method
		_, pattern := mux.Handler(probe)
		rt, ok := routeOf[pattern]
		if !ok {
			continue
		}
		product := rt.Product
		if product == "" { // the ping: /opendata/{api}/{version}/ping
			segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
			if len(segs) != 4 {
				continue
			}
			if product = productOfAPI(segs[1]); segs[2] != versionOf(product) {
				continue
			}
		}
		if i := slices.IndexFunc(access.Products, func(p *flightgraph.Product) bool { return p.Slug == product }); i < 0 || !access.Products[i].VisibleTo(role) {
			continue
		}
		methods = append(methods, method)
		if method == http.MethodGet {
			methods = append(methods, http.MethodHead)
		}
	}
	slices.Sort(methods)
	return strings.Join(methods, ", ")
}

// Unknown answers a request that no route took: 405 REQ_405.000 with its Allow header when its
// path is a route's under another method (a POST on a GET path), else the unknown path's 404
// INSP_404.000, both in the REST error shape. The server serves it for every path it has no
// other handler for.
func (a *API) Unknown(w http.ResponseWriter, r *http.Request) {
	if allow := a.allowed(r); allow != "" {
		w.Header().Set("Allow", allow)
		a.Error(w, r, flightgraph.Errorf(flightgraph.ECodeMethodNotAllowed, "%s takes %s, not %s", r.URL.Path, allow, r.Method))
		return
	}
	a.Error(w, r, flightgraph.UnknownPath())
}
