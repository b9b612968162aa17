package server_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// visitor is a browser without a browser: a cookie jar, redirects not followed, and the headers
// a browser's form post sends (Origin and Sec-Fetch-Site), which the pages' cross-origin
// protection reads.
type visitor struct {
	t      *testing.T
	c      *http.Client
	base   string
	origin string // the Origin its posts say they come from; base's by default
}

func newVisitor(t *testing.T, base string, client *http.Client) *visitor {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if client != nil {
		c.Transport = client.Transport
	}
	return &visitor{t: t, c: c, base: base, origin: base}
}

func (v *visitor) do(method, path string, form url.Values) (int, http.Header, string) {
	v.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r, _ := http.NewRequest(method, v.base+path, body)
	r.Header.Set("Accept", "text/html")
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", v.origin)
		site := "same-origin"
		if v.origin != v.base {
			site = "cross-site"
		}
		r.Header.Set("Sec-Fetch-Site", site)
	}
	resp, err := v.c.Do(r)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (v *visitor) get(path string) (int, string) {
	v.t.Helper()
	status, _, body := v.do(http.MethodGet, path, nil)
	return status, body
}

func (v *visitor) post(path string, form url.Values) (int, http.Header, string) {
	v.t.Helper()
	return v.do(http.MethodPost, path, form)
}

func (v *visitor) signIn(email, password string) {
	v.t.Helper()
	if status, h, body := v.post("/portal/signin", url.Values{"email": {email}, "password": {password}}); status != http.StatusSeeOther {
		v.t.Fatalf("sign in: %d %s %.300s", status, h, body)
	}
}

// TestPortalPages: the pages' session and forms hold against what another site, a script or
// a stolen page could try.
func TestPortalPages(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	dev := newVisitor(t, s.URL, nil)
	dev.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	apps := func() int {
		t.Helper()
		p := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		var d struct {
			Me struct{ Applications []struct{ Name string } }
		}
		p.do(t, `{ me { applications { name } } }`, nil, &d)
		return len(d.Me.Applications)
	}

	t.Run("the session cookie is HttpOnly and SameSite, and __Host- and Secure behind TLS", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			srv    *httptest.Server
			cookie string
		}{
			{"http", httptest.NewServer(s.srv), "flightgraph_session"},
			{"https", httptest.NewTLSServer(s.srv), "__Host-flightgraph_session"},
		} {
			defer tc.srv.Close()
			v := newVisitor(t, tc.srv.URL, tc.srv.Client())
			_, h, _ := v.post("/portal/signin", url.Values{"email": {s.demo.DeveloperEmail}, "password": {s.demo.DeveloperPassword}})
			set := h.Get("Set-Cookie")
			if !strings.HasPrefix(set, tc.cookie+"=fgps_") || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Lax") ||
				!strings.Contains(set, "Path=/") || strings.Contains(set, "Secure") != (tc.name == "https") {
				t.Errorf("%s: Set-Cookie %q", tc.name, set)
			}
		}
	})

	t.Run("a form posted from another site changes nothing", func(t *testing.T) {
		before := apps()
		evil := *dev
		evil.origin = "https://evil.example"
		status, _, body := evil.post("/portal/applications", url.Values{"name": {"CSRF"}, "description": {"posted by another site"}})
		if status != http.StatusForbidden || !strings.Contains(body, flightgraph.ECodeCrossSite) {
			t.Errorf("a cross-site post: %d %.300s", status, body)
		}
		if apps() != before {
			t.Error("a cross-site post registered an application")
		}
		if status, _, _ := evil.post("/portal/trial", url.Values{"keyId": {s.raiseLimitsKeyID}}); status != http.StatusForbidden {
			t.Errorf("a cross-site trial key request: %d", status)
		}
		// The same form from the portal's own page works.
		if status, h, _ := dev.post("/portal/applications", url.Values{"name": {"Same origin"}, "description": {"from the portal"}}); status != http.StatusSeeOther ||
			h.Get("Location") != "/portal?done=registered" || apps() != before+1 {
			t.Errorf("a same-origin post: %d %s", status, h.Get("Location"))
		}
	})

	t.Run("the cookie opens the pages only: no API reads it", func(t *testing.T) {
		u, _ := url.Parse(s.URL)
		var session string
		for _, c := range dev.c.Jar.Cookies(u) {
			session = c.Name + "=" + c.Value
		}
		if session == "" {
			t.Fatal("no session cookie")
		}
		resp := s.portalAs(t, map[string]string{"Cookie": session}, `{ me { account { email } } }`, nil)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeNotSignedIn {
			t.Errorf("the portal API with the cookie alone: %+v", resp.Errors)
		}
		status, _, _ := s.call(t, http.MethodGet, "/opendata/flightstatus/v1/ping", map[string]string{"Cookie": session}, "")
		if status != http.StatusUnauthorized {
			t.Errorf("an API with the cookie alone: %d", status)
		}
	})

	t.Run("what a user typed is shown as text, never as markup", func(t *testing.T) {
		dev.post("/portal/applications", url.Values{"name": {`<script>alert(1)</script>`}, "description": {`"><img src=x onerror=alert(1)>`}})
		_, body := dev.get("/portal")
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("My Account echoes markup: %s", body)
		}
	})

	t.Run("a refusal is shown in words with its code, and the form keeps what was typed", func(t *testing.T) {
		v := newVisitor(t, s.URL, nil)
		status, _, body := v.post("/portal/signin", url.Values{"email": {"nobody@example.com"}, "password": {"not the password"}})
		if status != http.StatusUnauthorized || !strings.Contains(body, flightgraph.ECodeBadLogin) || !strings.Contains(body, `value="nobody@example.com"`) ||
			strings.Contains(body, "not the password") {
			t.Errorf("a wrong password: %d %s", status, body)
		}
		status, _, body = dev.post("/portal/applications", url.Values{"name": {""}, "description": {"no name"}})
		if status != http.StatusBadRequest || !strings.Contains(body, `role="alert"`) || !strings.Contains(body, "INSP_400") || !strings.Contains(body, "no name") {
			t.Errorf("an application without a name: %d %s", status, body)
		}
	})

	t.Run("a developer gets no operators' desk, whatever the page shows", func(t *testing.T) {
		status, body := dev.get("/portal/operators")
		if status != http.StatusForbidden || !strings.Contains(body, flightgraph.ECodeOperatorsOnly) {
			t.Errorf("/portal/operators for a developer: %d %.500s", status, body)
		}
		if status, _, _ := dev.post("/portal/operators/subscriptions/sub_x", url.Values{"decision": {"approve"}}); status != http.StatusForbidden {
			t.Errorf("approving as a developer: %d", status)
		}
	})

	t.Run("My Account asks for what fits a session's cost: a page of applications with 30 days of usage", func(t *testing.T) {
		status, body := dev.get("/portal")
		if status != http.StatusOK || !strings.Contains(body, `<figure class="usage" data-usage="flightstatus"`) || strings.Contains(body, `role="alert"`) {
			t.Errorf("My Account: %d %.800s", status, body)
		}
		p := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		for _, bad := range []string{`{ me { applications(first: 21) { id } } }`, `{ me { applications(first: 0) { id } } }`, `{ me { applications(offset: -1) { id } } }`} {
			p.fails(t, flightgraph.ECodeInvalidParameter, bad, nil)
		}
		// The whole tree with 30 days of usage is over the cost: that is why the page asks for five.
		p.fails(t, flightgraph.ECodeQueryCost, `{ me { applications { keys { subscriptions { usage(days: 30) { day calls } } } } } }`, nil)
	})

	t.Run("a new secret is on one no-store answer", func(t *testing.T) {
		var appID string
		p := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		var d struct {
			Me struct{ Applications []struct{ ID string } }
		}
		p.do(t, `{ me { applications { id } } }`, nil, &d)
		appID = d.Me.Applications[0].ID
		status, h, _ := dev.post("/portal/keys", url.Values{"applicationId": {appID}, "api": {"flightstatus"}})
		if status != http.StatusSeeOther || strings.Contains(h.Get("Location"), "fgs_") || !strings.Contains(h.Get("Set-Cookie"), "HttpOnly") {
			t.Fatalf("requesting a key: %d %s %s", status, h.Get("Location"), h.Get("Set-Cookie"))
		}
		status, h, body := dev.do(http.MethodGet, h.Get("Location"), nil)
		if status != http.StatusOK || h.Get("Cache-Control") != "no-store" || !strings.Contains(body, `id="new-secret" readonly value="fgs_`) {
			t.Fatalf("My Account after requesting a key: %d %s %.300s", status, h.Get("Cache-Control"), body)
		}
		if _, body := dev.get("/portal"); strings.Contains(body, "fgs_") {
			t.Error("the secret is on a later page")
		}
	})

	t.Run("signing out ends the session on the server", func(t *testing.T) {
		v := newVisitor(t, s.URL, nil)
		v.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		u, _ := url.Parse(s.URL)
		stolen := v.c.Jar.Cookies(u)
		if status, h, _ := v.post("/portal/signout", url.Values{}); status != http.StatusSeeOther || !strings.Contains(h.Get("Set-Cookie"), "Max-Age=0") {
			t.Fatalf("sign out: %d %q", status, h.Get("Set-Cookie"))
		}
		replay := newVisitor(t, s.URL, nil)
		replay.c.Jar.SetCookies(u, stolen)
		if status, body := replay.get("/portal/try"); status != http.StatusUnauthorized || !strings.Contains(body, `id="email"`) {
			t.Errorf("the cookie after signing out: %d", status)
		}
	})

	t.Run("signing in again ends the browser's previous session", func(t *testing.T) {
		v := newVisitor(t, s.URL, nil)
		v.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		u, _ := url.Parse(s.URL)
		first := v.c.Jar.Cookies(u)
		v.signIn(s.demo.OperatorEmail, s.demo.OperatorPassword)
		replay := newVisitor(t, s.URL, nil)
		replay.c.Jar.SetCookies(u, first)
		if status, _ := replay.get("/portal/try"); status != http.StatusUnauthorized {
			t.Errorf("the first session after a second sign-in in the same browser: %d, want 401", status)
		}
	})

	t.Run("a form too large is refused before any work", func(t *testing.T) {
		before := apps()
		status, _, body := dev.post("/portal/applications", url.Values{"name": {"Big"}, "description": {strings.Repeat("x", 64<<10)}})
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, flightgraph.ECodeBodyTooLarge) || apps() != before {
			t.Errorf("a 64 KiB form: %d %.300s", status, body)
		}
	})
}

// TestPlansAreBatched: the plans of a page of subscriptions (their names, limits and query limits)
// are one read; it was a read per subscription and field. The loaders wait 20 ms, so that what is
// tested is the batching, not the scheduler.
func TestPlansAreBatched(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.Server.LoaderWait = 20 * time.Millisecond })
	p := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	count := func(fields string) int64 {
		var d any
		p.do(t, `{ me { applications { keys { subscriptions { `+fields+` } } } } }`, nil, &d)
		return s.queries.Load()
	}
	count(`id`) // the first request of a server warms what every request reads
	// The demo key has six subscriptions: a read per subscription and field was 18 more.
	if extra := count(`id plan limits { perSecond } queryLimits { maxCost }`) - count(`id`); extra > 1 {
		t.Errorf("the plans of six subscriptions cost %d more round trips, want at most 1", extra)
	}
}
