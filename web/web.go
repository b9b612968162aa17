// Package web serves the pages a browser opens: the portal (portal.go: sign-up, My Account, the
// operators' desk, the API catalogue, Try it) and the GraphQL playground (GraphiQL), at
// /playground, on GET /graphql for a browser and at /portal/playground. Every script, style and font it loads is
// embedded in the binary and served from this origin (static/, vendored from npm at pinned
// versions by scripts/vendor.sh), and its Content-Security-Policy lets the page reach no other.
package web

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed playground.html
var playgroundHTML []byte

//go:embed static
var static embed.FS

// StaticPrefix is where the embedded assets are served.
const StaticPrefix = "/static/"

// contentSecurityPolicy allows this origin only: scripts and styles from /static, requests to
// /graphql, fonts and images inline (GraphiQL's CSS carries its fonts as data: URLs). GraphiQL's
// React sets style attributes, hence 'unsafe-inline' for styles, never for scripts.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"font-src 'self' data:; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// secure sets the headers every page and asset gets.
func secure(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// Playground serves the playground page.
func Playground() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secure(w.Header())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(playgroundHTML)
	})
}

// Static serves the embedded assets under StaticPrefix. They change only with the binary, so a
// browser may keep them for a day. A name that is no asset (a folder included: no listings) is
// notFound's.
func Static(notFound http.Handler) http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.StripPrefix(strings.TrimSuffix(StaticPrefix, "/"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info, err := fs.Stat(sub, strings.TrimPrefix(r.URL.Path, "/")); err != nil || info.IsDir() {
			notFound.ServeHTTP(w, r)
			return
		}
		secure(w.Header())
		if t := mime.TypeByExtension(path.Ext(r.URL.Path)); t != "" {
			w.Header().Set("Content-Type", t)
		}
		w.Header().Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(w, r)
	}))
}

// WantsPage reports whether a request to an API path is a browser's visit rather than an API
// call: a GET without a query string whose Accept names HTML before JSON.
func WantsPage(r *http.Request) bool {
	if r.Method != http.MethodGet || r.URL.RawQuery != "" {
		return false
	}
	accept := r.Header.Get("Accept")
	html := strings.Index(accept, "text/html")
	json := strings.Index(accept, "application/json")
	return html >= 0 && (json < 0 || html < json)
}

// Assets lists the embedded assets' paths and sizes, for the bound on what they add to the binary.
func Assets() (map[string]int64, error) {
	out := map[string]int64{"playground.html": int64(len(playgroundHTML))}
	for _, tree := range []fs.FS{static, templateFS} {
		err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			out[p] = info.Size()
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
