package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/flightgraph/flightgraph/rest"
	"github.com/flightgraph/flightgraph/web"
)

// corsMaxAge is how long, in seconds, a browser may keep a preflight's answer: two hours, the
// most Chromium keeps one (Firefox would keep a day).
const corsMaxAge = "7200"

// corsAllowHeaders are the request headers a page of another origin may send: the credentials
// (api-key, Authorization), the body's type and what it accepts, the point of sale
// (Accept-Language, svc-travel-country, svc-travel-host), the request id, a conditional GET
// (If-None-Match, for the ETags), a gzip body (Content-Encoding), and what GraphQL clients add:
// Apollo Client's client awareness (apollographql-client-name, -version), Apollo's CSRF header
// (apollo-require-preflight) and operation name (x-apollo-operation-name). Persisted queries
// (Apollo's link and gqlgen's APQ alike) travel in the body's or the query string's extensions,
// under the same Content-Type, so they need no header of their own.
var corsAllowHeaders = strings.Join([]string{
	"api-key", "Authorization", "Content-Type", "Accept", "Accept-Language", "svc-travel-country", "svc-travel-host",
	"X-Request-Id", "If-None-Match", "Content-Encoding",
	"apollographql-client-name", "apollographql-client-version", "apollo-require-preflight", "x-apollo-operation-name",
}, ", ")

// corsExposeHeaders are the answer's headers a page of another origin may read beyond the
// CORS-safelisted ones: the limits (IETF RateLimit and the original's X-Packagekey-*, the day's
// reset), Retry-After on a 429 or 503, the request id to quote in a support request, and the ETag
// to send back in If-None-Match.
var corsExposeHeaders = strings.Join([]string{
	"RateLimit", "RateLimit-Policy", "Retry-After",
	"X-Packagekey-Qps-Allotted", "X-Packagekey-Qps-Current", "X-Packagekey-Quota-Allotted", "X-Packagekey-Quota-Current", "X-Plan-Quota-Reset",
	"X-Request-Id", "ETag",
}, ", ")

// CORS lets pages of other origins call the APIs: /graphql, the REST paths, /openapi.json and the
// token endpoint. It is the one home of preflights on those paths: it answers every OPTIONS there
// itself (204 with Allow, and the Access-Control-Allow-* when the origin may call), before the
// access guard, so that a preflight is never charged, never takes a place in the refusals'
// windows and never reaches a handler; and it adds Access-Control-Allow-Origin and
// Access-Control-Expose-Headers to every other answer of those paths, refusals and 429s included,
// so that a page reads the code and Retry-After of its refusal.
//
// Credentials are headers (api-key, Authorization), never cookies, so no answer carries
// Access-Control-Allow-Credentials, and a browser never sends a cookie to an API across origins.
// With no origins configured every origin may call, and the answers say so with "*" whether the
// request named an origin or not: the answer does not depend on it, so it does not vary by it.
// With origins configured, an allowed origin is echoed, another gets no Access-Control-* at all
// (the browser blocks it), and every answer of those paths varies by Origin.
//
// The portal's pages, /portal/graphql (its session is a cookie), the playground, the GraphiQL
// page /graphql serves a browser's visit, and web's assets get nothing: they stay same-origin.
type CORS struct {
	origins []string // nil: any origin
	rest    []string // the REST paths' prefixes, from rest.Routes
}

// NewCORS returns the CORS of origins (ParseOrigins); none lets every origin call.
func NewCORS(origins []string) *CORS {
	c := &CORS{}
	if len(origins) > 0 {
		c.origins = origins
	}
	for _, rt := range rest.Routes {
		_, path, _ := strings.Cut(rt.Pattern, " ")
		first, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		if prefix := "/" + first + "/"; !slices.Contains(c.rest, prefix) {
			c.rest = append(c.rest, prefix)
		}
	}
	return c
}

// ParseOrigins reads a comma-separated list of origins (scheme://host[:port], as a browser's
// Origin header names them); empty or "*" for every origin, which it returns as nil.
func ParseOrigins(list string) ([]string, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "*" {
		return nil, nil
	}
	var origins []string
	for o := range strings.SplitSeq(list, ",") {
		o = strings.TrimSpace(o)
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#") {
			return nil, fmt.Errorf("origin %q: want scheme://host[:port], e.g. https://app.example.com, with no path, or * for any origin", o)
		}
		origins = append(origins, strings.ToLower(o))
	}
	return origins, nil
}

// methods returns the methods of the API path of r, or "" when r's path is no API's. The REST
// paths all answer "GET, POST, OPTIONS", whatever their route takes: a preflight is anonymous, and
// an answer per route would tell any page which paths of the hidden APIs exist, which their 404
// does not tell. A method a route does not take answers 405 with the route's Allow only for a
// caller who may see its API (rest.API.Unknown), else the unknown path's 404.
func (c *CORS) methods(r *http.Request) string {
	switch p := r.URL.Path; {
	case p == "/graphql":
		if web.WantsPage(r) {
			return "" // the playground, for this origin's visitors
		}
		return "GET, POST, OPTIONS"
	case p == "/openapi.json":
		return "GET, OPTIONS"
	case p == "/oauthcust/oauth/token":
		return "POST, OPTIONS"
	}
	for _, prefix := range c.rest {
		if strings.HasPrefix(r.URL.Path, prefix) {
			return "GET, POST, OPTIONS"
		}
	}
	return ""
}

// allowOrigin returns the Access-Control-Allow-Origin for r's Origin: "*" when any origin may
// call, the origin when it is one of those configured, else "".
func (c *CORS) allowOrigin(r *http.Request) string {
	if c.origins == nil {
		return "*"
	}
	if o := r.Header.Get("Origin"); o != "" && slices.Contains(c.origins, strings.ToLower(o)) {
		return o
	}
	return ""
}

// AllowsSocket reports whether r, a WebSocket upgrade of /graphql, may open its connection: by
// the allow-list of the pages that may call the APIs, which a WebSocket's upgrade escapes (a
// browser sends no preflight for it, and reads its answer whatever CORS says). A page of an
// allowed origin (any, when none are configured) may; so may a page of the server's own origin
// (its playground), and a client that names no Origin (a browser always does; a server, a
// gateway or a CLI has no page to protect). A page of any other origin may not: the server
// refuses its upgrade. Nothing ambient authenticates a connection either way: its credential is
// in its headers or its connection_init, never a cookie.
func (c *CORS) AllowsSocket(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	if u, err := url.Parse(o); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return c.allowOrigin(r) != ""
}

// Handler wraps next, the server's routes.
func (c *CORS) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods := c.methods(r)
		if methods == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		if c.origins != nil {
			h.Add("Vary", "Origin")
		}
		origin := c.allowOrigin(r)
		if r.Method == http.MethodOptions {
			r.Pattern = "OPTIONS (CORS)" // the metrics' route: no pattern of the mux served it
			h.Set("Allow", methods)
			if origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Methods", methods)
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", corsMaxAge)
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if origin != "" {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
		next.ServeHTTP(w, r)
	})
}
