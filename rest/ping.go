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

func init() { versions = versionsOf(Routes) } // not an initializer: Routes holds the ping that reads it

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

// ping answers GET /opendata/{api}/{version}/ping, authenticated as its API is.
func (a *API) ping(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("version") != versionOf(r.PathValue("api")) {
		a.Error(w, r, flightgraph.UnknownPath())
		return
	}
	pos := flightgraph.PointOfSaleFromContext(r.Context())
	render(w, r, pingResponse{
		BuildTimestamp: a.BuildTime.UTC().Format(time.RFC3339), Timestamp: a.Now().UTC().Format(time.RFC3339),
		Version: a.Version, Response: "pong", Language: string(pos.Language), Country: pos.Country,
	})
}
