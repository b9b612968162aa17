package rest

import (
	"net/http"
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

// versions are the API versions each product serves; other versions are paths that do not exist.
var versions = map[string]string{"inspire": "v2"}

func versionOf(product string) string {
	if v, ok := versions[product]; ok {
		return v
	}
	return "v1"
}

// ping answers GET /opendata/{api}/{version}/ping, authenticated as its API is.
func (a *API) ping(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("version") != versionOf(r.PathValue("api")) {
		a.Error(w, r, flightgraph.Errorf(flightgraph.ECodeUnknownPath, "the requested URL does not exist"))
		return
	}
	pos := flightgraph.PointOfSaleFromContext(r.Context())
	render(w, r, pingResponse{
		BuildTimestamp: a.BuildTime.UTC().Format(time.RFC3339), Timestamp: a.Now().UTC().Format(time.RFC3339),
		Version: a.Version, Response: "pong", Language: string(pos.Language), Country: pos.Country,
	})
}
