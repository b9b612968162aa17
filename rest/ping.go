package rest

import (
	"net/http"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// pingResponse is the liveness method's documented shape (spec 4.3).
type pingResponse struct {
	BuildTimestamp string `json:"buildTimestamp"`
	Timestamp      string `json:"timestamp"`
	Version        string `json:"version"`
	Response       string `json:"response"`
	Language       string `json:"language"`
	Country        string `json:"country"`
}

// versions are the versions of their APIs the products serve, as their routes say (see
// versionsOf); other versions are paths that do not exist.
var versions map[string]string

// apiNames are the {api} segments of the products' pings as the original names its APIs, where
// that is not the product's slug (see apiNamesOf); bySegment reads them back.
var apiNames, bySegment map[string]string

func init() { // not an initializer: Routes holds the ping that reads them
	versions = versionsOf(Routes)
	apiNames = apiNamesOf(Routes)
	bySegment = map[string]string{}
	for slug, name := range apiNames {
		bySegment[name] = slug
	}
}

// apiNamesOf reads the name of each product's API from its routes: the segment after /opendata/
// that all of them share, when no other product's routes use it, as Open Data's reference data
// is /opendata/flightoffers/… and Baggage's allowances /opendata/baggages/…. A product whose
// routes share no segment of their own (the metasearch feed lives under offers' path) keeps its
// slug, and so does one whose segment is its slug.
func apiNamesOf(routes []Route) map[string]string {
	segments := map[string]map[string]bool{} // product → the segments of its routes
	owners := map[string]map[string]bool{}   // segment → the products whose routes use it
	for _, rt := range routes {
		_, path, _ := strings.Cut(rt.Pattern, " ")
		seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/opendata/"), "/")
		if rt.Product == "" || seg == path || strings.HasPrefix(seg, "{") {
			continue
		}
		if segments[rt.Product] == nil {
			segments[rt.Product] = map[string]bool{}
		}
		if owners[seg] == nil {
			owners[seg] = map[string]bool{}
		}
		segments[rt.Product][seg], owners[seg][rt.Product] = true, true
	}
	out := map[string]string{}
	for product, segs := range segments {
		for seg := range segs {
			if len(segs) == 1 && len(owners[seg]) == 1 && seg != product {
				out[product] = seg
			}
		}
	}
	return out
}

// APIName is the {api} segment of product's ping as the original names the API
// (/opendata/flightoffers/v1/ping for Open Data); the product's slug where the two agree.
func APIName(product string) string {
	if name, ok := apiNames[product]; ok {
		return name
	}
	return product
}

// PingAPIs are the {api} segments product's ping answers at: its API's name (APIName), then its
// slug when that differs (/opendata/opendata/v1/ping, the path flightgraph first gave it, kept
// for the clients that call it).
func PingAPIs(product string) []string {
	if name := APIName(product); name != product {
		return []string{name, product}
	}
	return []string{product}
}

// productOfAPI is the product a ping's {api} segment names: by its API's name, or by its slug.
func productOfAPI(segment string) string {
	if slug, ok := bySegment[segment]; ok {
		return slug
	}
	return segment
}

// versionsOf reads each product's version from the version segment of its routes
// (/opendata/inspire/v2/…).
func versionsOf(routes []Route) map[string]string {
	out := map[string]string{}
	for _, rt := range routes {
		_, path, _ := strings.Cut(rt.Pattern, " ")
		for _, seg := range strings.Split(path, "/") {
			if rt.Product != "" && len(seg) > 1 && seg[0] == 'v' && strings.Trim(seg[1:], "0123456789") == "" {
				out[rt.Product] = seg
			}
		}
	}
	return out
}

// versionOf is the version of its API a product serves: v1 unless its routes say otherwise.
func versionOf(product string) string {
	if v, ok := versions[product]; ok {
		return v
	}
	return "v1"
}

// ping answers GET /opendata/{api}/{version}/ping, authenticated as its API is; {api} is the
// API's name or its product's slug (PingAPIs).
func (a *API) ping(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("version") != versionOf(productOfAPI(r.PathValue("api"))) {
		a.Error(w, r, flightgraph.UnknownPath())
		return
	}
	pos := flightgraph.PointOfSaleFromContext(r.Context())
	render(w, r, pingResponse{
		BuildTimestamp: a.BuildTime.UTC().Format(time.RFC3339), Timestamp: a.Now().UTC().Format(time.RFC3339),
		Version: a.Version, Response: "pong", Language: string(pos.Language), Country: pos.Country,
	})
}
