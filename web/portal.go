package web

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Portal serves the portal's pages under /portal: sign up, sign in and out, My Account, the
// operators' desk, the API catalogue and Try it. It is a client of the portal's GraphQL API like
// any other: each page runs its operations through API in-process, with the bearer session its
// cookie holds, so every rule, bound and refusal of that API (and of its guard) holds for the
// pages as well, and no rule is written twice. The cookie authenticates these pages only: the
// APIs read no cookie, so a page of another site cannot spend a session through them, and every
// state-changing page request must come from this origin (http.CrossOriginProtection).
type Portal struct {
	// API is the portal's GraphQL endpoint, guarded (the server's /portal/graphql handler).
	API http.Handler
	Log *slog.Logger
	// Secure says the portal is reached over https even where the request has no TLS: the
	// server's public URL is https and TLS ends at a proxy in front of it (the binary serves
	// plain HTTP). The session cookie is then __Host- and Secure on every request.
	Secure bool
	// Now is the server's clock (time.Now when nil): a trial key's lifetime is told from it.
	Now func() time.Time
}

//go:embed templates
var templateFS embed.FS

// pages are the portal's templates, each with the layout.
var pages = func() map[string]*template.Template {
	funcs := template.FuncMap{
		"minPassword": func() int { return flightgraph.MinPasswordLength },
		"roles": func() []flightgraph.Role {
			return []flightgraph.Role{flightgraph.RoleDeveloper, flightgraph.RolePartner, flightgraph.RoleStaff, flightgraph.RoleOperator}
		},
		"targetTypes": func() []string {
			return []string{"account", "application", "key", "subscription", "limit_request", "plan"}
		},
		"date": func(s string) string {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				return t.UTC().Format("2 Jan 2006 15:04 UTC")
			}
			return s
		},
		// formToken draws a form's request token (flightgraph.RequestToken): new each time the
		// page is shown, the same each time the browser sends that form again.
		"formToken": func() string {
			b := make([]byte, 18)
			rand.Read(b)
			return base64.RawURLEncoding.EncodeToString(b)
		},
		"percent": func(n, of int) float64 {
			if of <= 0 {
				return 0
			}
			return float64(n) * 100 / float64(of)
		},
	}
	names, err := templateFS.ReadDir("templates")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		if n.Name() == "layout.html" {
			continue
		}
		out[strings.TrimSuffix(n.Name(), ".html")] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(templateFS, "templates/layout.html", "templates/"+n.Name()))
	}
	return out
}()

// pagePolicy is the pages' Content-Security-Policy: this origin only, and no inline script or
// style at all (the pages have none).
const pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Register adds the portal's pages to mux.
func (p *Portal) Register(mux *http.ServeMux) {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, http.StatusForbidden, "message", page{Title: "Refused", Problem: &Problem{Code: flightgraph.ECodeCrossSite,
			Message: "this form was sent from another site; open the portal and send it from there"}})
	}))
	handle := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				// Every form is read, bounded, before any work: a handler reads r.PostForm.
				r.Body = http.MaxBytesReader(w, r.Body, maxForm)
				if err := r.ParseForm(); err != nil {
					be := flightgraph.BodyError(err)
					p.render(w, r, statusOf(be.Code), "message", page{Title: "Refused", Problem: &Problem{Code: be.Code, Message: be.Message}})
					return
				}
			}
			h(w, r)
		})))
	}
	handle("GET /portal", p.home)
	handle("GET /portal/signin", p.signInPage)
	handle("POST /portal/signin", p.signIn)
	handle("GET /portal/signup", p.signUpPage)
	handle("POST /portal/signup", p.signUp)
	handle("GET /portal/verify", p.verifyPage)
	handle("POST /portal/verify", p.verify)
	handle("POST /portal/signout", p.signOut)
	handle("POST /portal/applications", p.registerApplication)
	handle("POST /portal/applications/{id}", p.updateApplication)
	handle("POST /portal/applications/{id}/delete", p.deleteApplication)
	handle("POST /portal/keys", p.requestKey)
	handle("POST /portal/keys/{id}/rotate", p.rotateKey)
	handle("POST /portal/keys/{id}/revoke", p.revokeKey)
	handle("POST /portal/keys/{id}/apis", p.addAPI)
	handle("POST /portal/subscriptions/{id}/limits", p.requestLimits)
	handle("GET /portal/operators", p.operators)
	handle("POST /portal/operators/subscriptions/{id}", p.decideSubscription)
	handle("POST /portal/operators/limits/{id}", p.reviewLimits)
	handle("POST /portal/operators/accounts/{id}/role", p.setRole)
	handle("POST /portal/operators/access/{id}", p.answerAccess)
	handle("POST /portal/access", p.requestAccess)
	handle("GET /portal/apis", p.catalogue)
	handle("GET /portal/try", p.tryIt)
	handle("POST /portal/trial", p.trialKey)
	handle("GET /portal/keys.json", p.keys)
	handle("GET /portal/playground", Playground().ServeHTTP)
}

// Problem is an error the portal's API answered, as a page shows it: in words, with its code.
type Problem struct {
	Code    string
	Message string
	// Status is the HTTP status the API answered with: the page's for a code the catalogue does
	// not know (GraphQL's own, such as GRAPHQL_VALIDATION_FAILED), which is no server error.
	Status int
	// RetryAfter is the API's Retry-After, which the page passes on (a 429's wait).
	RetryAfter string
}

// status is the HTTP status of a page that shows the problem: its code's, else the API's.
func (e *Problem) status() int {
	if flightgraph.Lookup(e.Code).Code != e.Code && e.Status >= 400 {
		return e.Status
	}
	return statusOf(e.Code)
}

func (e *Problem) Error() string { return e.Code + ": " + e.Message }

// page is what every template gets.
type page struct {
	Title   string
	Me      *account // nil when signed out
	Notice  string
	Problem *Problem
	Form    url.Values // what was sent, to fill a form again after a refusal
	Data    any
}

// status is the page's HTTP status: its problem's, else 200.
func (pg page) status() int {
	if pg.Problem != nil {
		return pg.Problem.status()
	}
	return http.StatusOK
}

// meFields is what a page's query reads of the signed-in account, for its header.
const meFields = `account { id email name role }`

type account struct {
	ID, Email, Name, Role string
}

// Operator reports whether the signed-in account is an operator.
func (a *account) Operator() bool { return a != nil && a.Role == "operator" }

// secure reports whether the browser reached r over https: TLS here, or at the proxy the public
// URL names.
func (p *Portal) secure(r *http.Request) bool { return p.Secure || r.TLS != nil }

// sessionCookie is the cookie's name: with the __Host- prefix behind TLS, which the browser keeps
// only for this host, path / and Secure.
func (p *Portal) sessionCookie(r *http.Request) string {
	if p.secure(r) {
		return "__Host-flightgraph_session"
	}
	return "flightgraph_session"
}

func (p *Portal) session(r *http.Request) string {
	c, err := r.Cookie(p.sessionCookie(r))
	if err != nil || len(c.Value) > 128 {
		return ""
	}
	return c.Value
}

func (p *Portal) setSession(w http.ResponseWriter, r *http.Request, token string) {
	c := &http.Cookie{Name: p.sessionCookie(r), Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: p.secure(r)}
	if token == "" {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// maxForm bounds what a page form may send.
const maxForm = 16 << 10

// call runs one operation of the portal's API with the request's session, and decodes its data
// into out. A GraphQL error is a *Problem; anything else is the API's failure to answer.
func (p *Portal) call(r *http.Request, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	in := r.Clone(r.Context()) // the client's address stays: the guard's bounds are the client's
	in.Method, in.URL, in.RequestURI, in.Host = http.MethodPost, &url.URL{Path: "/portal/graphql"}, "", r.Host
	in.Body, in.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	// As application/graphql-response+json, a document the API refuses before running it answers
	// with a status that says so (400, not application/json's 200), which the page passes on.
	in.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/graphql-response+json"}}
	if t := p.session(r); t != "" {
		in.Header.Set("Authorization", "Bearer "+t)
	}
	rec := &recorder{header: http.Header{}}
	p.API.ServeHTTP(rec, in)
	var res struct {
		Data   json.RawMessage
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	if err := json.Unmarshal(rec.body.Bytes(), &res); err != nil {
		return fmt.Errorf("web: the portal API answered %d with no GraphQL body: %w", rec.status, err)
	}
	if len(res.Errors) > 0 {
		if out != nil && len(res.Data) > 0 {
			json.Unmarshal(res.Data, out) // what did answer, such as the account of a refused page
		}
		e := res.Errors[0]
		return &Problem{Code: e.Extensions.Code, Message: e.Message, Status: rec.status, RetryAfter: rec.header.Get("Retry-After")}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res.Data, out)
}

// recorder keeps an in-process answer of the API.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// me returns the signed-in account, nil when the request has no live session.
func (p *Portal) me(r *http.Request) (*account, error) {
	if p.session(r) == "" {
		return nil, nil
	}
	var d struct{ Me *struct{ Account account } }
	if err := p.call(r, `{ me { account { id email name role } } }`, nil, &d); err != nil {
		if pr := (*Problem)(nil); errors.As(err, &pr) && pr.Code == flightgraph.ECodeNotSignedIn {
			return nil, nil
		}
		return nil, err
	}
	if d.Me == nil {
		return nil, nil
	}
	return &d.Me.Account, nil
}

// render writes a page. The pages are private to the session and carry no secrets a cache may
// keep, hence no-store.
func (p *Portal) render(w http.ResponseWriter, r *http.Request, status int, name string, pg page) {
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "layout.html", pg); err != nil {
		p.Log.ErrorContext(r.Context(), "portal page", "page", name, "err", err)
		http.Error(w, "the page could not be made", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	secure(h)
	h.Set("Content-Security-Policy", pagePolicy)
	if pg.Problem != nil && pg.Problem.RetryAfter != "" {
		h.Set("Retry-After", pg.Problem.RetryAfter)
	}
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail shows err: a Problem on the page it came from (status by its code), anything else as the
// API's failure.
func (p *Portal) fail(w http.ResponseWriter, r *http.Request, name string, pg page, err error) {
	var pr *Problem
	if !errors.As(err, &pr) {
		p.Log.ErrorContext(r.Context(), "portal page", "err", err)
		pr = &Problem{Code: flightgraph.ECodeInternal, Message: "the portal could not answer; try again"}
	}
	pg.Problem = pr
	if pr.Code == flightgraph.ECodeNotSignedIn {
		// No session, or one that ended: the sign-in page, in a page's words (the API's tell a
		// client to send a bearer token).
		p.setSession(w, r, "")
		name, pg.Me, pg.Title = "signin", nil, "Sign in"
		pg.Problem = &Problem{Code: pr.Code, Message: "sign in to the portal first"}
	}
	p.render(w, r, pr.status(), name, pg)
}

// statusOf is the HTTP status of a catalogue code.
func statusOf(code string) int { return flightgraph.Lookup(code).Status }

// back sends the browser to a page after a change, with the notice to show there: one of a
// fixed set, by name, so that nothing a request says is echoed.
func back(w http.ResponseWriter, r *http.Request, to, notice string) {
	u := to
	if notice != "" {
		u += "?done=" + url.QueryEscape(notice)
	}
	http.Redirect(w, r, u, http.StatusSeeOther)
}

var notices = map[string]string{
	"registered":    "The application is registered.",
	"updated":       "The application is saved.",
	"deleted":       "The application and its keys are deleted.",
	"revoked":       "The key is revoked.",
	"added":         "The API is requested: an operator will review it, and you will be told by e-mail.",
	"limits":        "Your request is sent to the operators; their reply will show here.",
	"signedout":     "You are signed out.",
	"approved":      "The subscription is approved; the developer is told by e-mail.",
	"rejected":      "The subscription is rejected; the developer is told by e-mail.",
	"subrevoked":    "The subscription is revoked; the developer is told by e-mail.",
	"granted":       "The custom plan is granted; the developer is told by e-mail.",
	"declined":      "The request is declined; the developer is told by e-mail.",
	"role":          "The account's role is changed; its owner is told by e-mail.",
	"signedup":      "Check your mail: the link in it finishes the sign-up.",
	"keymade":       "The key is made and the API requested: an operator will review it, and you will be told by e-mail.",
	"rotated":       "The key has a new secret; the old one and the tokens issued with it no longer work.",
	"repeated":      "That form was sent already, and its request is made once: what it did is shown here.",
	"asked":         "Your request is sent to the operators; their answer will show on My Account and come by e-mail.",
	"accessgranted": "The request is granted with the role; the developer is told by e-mail.",
	"accessrefused": "The request is refused; the developer is told by e-mail.",
	"welcome":       "Welcome: your account is ready.",
}

func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }
