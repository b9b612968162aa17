package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestPortalCookieBehindTLSProxy: the binary serves plain HTTP only, so in production TLS ends
// at a proxy and no request has r.TLS. The public URL says the portal is reached over https:
// the session cookie must then be __Host- and Secure, or it goes out over plain http and a
// sibling subdomain can plant its own.
func TestPortalCookieBehindTLSProxy(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.PortalURL = "https://developer.flightgraph.test/portal"
	})
	v := newVisitor(t, s.URL, nil)
	status, h, _ := v.post("/portal/signin", url.Values{"email": {s.demo.DeveloperEmail}, "password": {s.demo.DeveloperPassword}})
	set := h.Get("Set-Cookie")
	if status != http.StatusSeeOther || !strings.HasPrefix(set, "__Host-flightgraph_session=fgps_") || !strings.Contains(set, "; Secure") ||
		!strings.Contains(set, "Path=/") || strings.Contains(set, "Domain=") {
		t.Fatalf("sign in behind a TLS proxy: %d Set-Cookie %q, want __Host-flightgraph_session, Secure", status, set)
	}
	// The browser sends it back (over https, to the proxy): it opens the pages.
	cookie := strings.SplitN(set, ";", 2)[0]
	r, _ := http.NewRequest(http.MethodGet, s.URL+"/portal/try", nil)
	r.Header.Set("Cookie", cookie)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Try it with the __Host- cookie: %d", resp.StatusCode)
	}
	// A cookie without the prefix, as a sibling subdomain could set, opens nothing.
	r.Header.Set("Cookie", strings.TrimPrefix(cookie, "__Host-"))
	if resp, err = http.DefaultClient.Do(r); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("Try it with an unprefixed cookie behind TLS: %d, want 401", resp.StatusCode)
	}
}

// raw posts form as v, with exactly the fetch metadata headers given (none by default): what a
// page of another site, or an older browser, sends.
func (v *visitor) raw(method, path string, form url.Values, headers map[string]string) (int, http.Header, string) {
	v.t.Helper()
	r, _ := http.NewRequest(method, v.base+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, val := range headers {
		r.Header.Set(k, val)
	}
	resp, err := v.c.Do(r)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestPortalPagesAgainstOtherSites: what a page of another site, or of a sibling subdomain, can
// make a signed-in browser do to the portal: nothing.
func TestPortalPagesAgainstOtherSites(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	dev := newVisitor(t, s.URL, nil)
	dev.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	api := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	apps := func() int {
		t.Helper()
		var d struct {
			Me struct{ Applications []struct{ ID string } }
		}
		api.do(t, `{ me { applications { id } } }`, nil, &d)
		return len(d.Me.Applications)
	}
	u, _ := url.Parse(s.URL)
	before := apps()
	for name, h := range map[string]map[string]string{
		"Sec-Fetch-Site cross-site, no Origin": {"Sec-Fetch-Site": "cross-site"},
		"a sibling subdomain (same-site)":      {"Sec-Fetch-Site": "same-site", "Origin": "http://evil." + u.Host},
		"Origin null (a sandboxed frame)":      {"Origin": "null"},
		"another port, no Sec-Fetch-Site":      {"Origin": "http://" + u.Hostname() + ":1"},
	} {
		status, _, body := dev.raw(http.MethodPost, "/portal/applications", url.Values{"name": {"CSRF"}, "description": {name}}, h)
		if status != http.StatusForbidden || !strings.Contains(body, flightgraph.ECodeCrossSite) {
			t.Errorf("%s: %d %.200s", name, status, body)
		}
	}
	if n := apps(); n != before {
		t.Errorf("posts from other sites registered %d applications", n-before)
	}

	t.Run("no login CSRF: another site cannot sign a browser in to its account", func(t *testing.T) {
		victim := newVisitor(t, s.URL, nil)
		status, h, _ := victim.raw(http.MethodPost, "/portal/signin", url.Values{"email": {s.demo.DeveloperEmail}, "password": {s.demo.DeveloperPassword}},
			map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
		if status != http.StatusForbidden || h.Get("Set-Cookie") != "" {
			t.Errorf("a cross-site sign-in: %d, Set-Cookie %q", status, h.Get("Set-Cookie"))
		}
		status, h, _ = victim.raw(http.MethodPost, "/portal/verify", url.Values{"token": {"fgsu_x"}, "password": {"x"}},
			map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
		if status != http.StatusForbidden || h.Get("Set-Cookie") != "" {
			t.Errorf("a cross-site verify: %d, Set-Cookie %q", status, h.Get("Set-Cookie"))
		}
	})

	t.Run("no sign-out CSRF", func(t *testing.T) {
		status, h, _ := dev.raw(http.MethodPost, "/portal/signout", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"})
		if status != http.StatusForbidden || h.Get("Set-Cookie") != "" {
			t.Errorf("a cross-site sign-out: %d %q", status, h.Get("Set-Cookie"))
		}
		if status, _ := dev.get("/portal/try"); status != http.StatusOK {
			t.Errorf("the session after a cross-site sign-out: %d", status)
		}
	})

	t.Run("no GET mints or changes anything", func(t *testing.T) {
		count := func() (n int) {
			if err := s.rawDB(t).QueryRow(`SELECT COUNT(*) FROM trial_keys`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		trials := count()
		for _, path := range []string{"/portal/trial?keyId=" + s.raiseLimitsKeyID, "/portal/signout", "/portal/applications?name=x&description=y",
			"/portal/keys/" + s.raiseLimitsKeyID + "/revoke"} {
			if status, body := dev.get(path); status != http.StatusMethodNotAllowed && status != http.StatusNotFound {
				t.Errorf("GET %s: %d %.200s", path, status, body)
			}
		}
		status, body := dev.get("/portal/keys.json")
		if status != http.StatusOK || !strings.Contains(body, `"signedIn":true`) || strings.Contains(body, "fgts_") || strings.Contains(body, "fgtk_") {
			t.Errorf("/portal/keys.json: %d %.300s", status, body)
		}
		if count() != trials || apps() != before {
			t.Error("a GET minted a trial key or registered an application")
		}
		if status, _ := dev.get("/portal/try"); status != http.StatusOK {
			t.Errorf("the session after the GETs: %d", status)
		}
	})
}

// TestPortalPagesLeakNothing: stored data cannot break out of Try it's JSON block, and no
// password, session, sign-up token or trial secret that goes through the pages is logged.
func TestPortalPagesLeakNothing(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	api := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)

	t.Run("an application's name stays inside Try it's JSON block", func(t *testing.T) {
		var d struct {
			Me struct {
				Applications []struct {
					ID   string
					Keys []struct{ ID string }
				}
			}
		}
		api.do(t, `{ me { applications { id keys { id } } } }`, nil, &d)
		var appID string
		for _, a := range d.Me.Applications {
			for _, k := range a.Keys {
				if k.ID == s.raiseLimitsKeyID {
					appID = a.ID
				}
			}
		}
		const evil = `</script><script src="/x.js"></script><!--<script>`
		api.do(t, `mutation($id: ID!, $in: ApplicationInput!) { updateApplication(id: $id, input: $in) { id } }`,
			map[string]any{"id": appID, "in": map[string]any{"name": evil, "description": "breaks out"}}, nil)
		v := newVisitor(t, s.URL, nil)
		v.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		status, body := v.get("/portal/try")
		start := strings.Index(body, `<script type="application/json" id="try-data">`)
		if status != http.StatusOK || start < 0 {
			t.Fatalf("Try it: %d %.500s", status, body)
		}
		block := body[start+len(`<script type="application/json" id="try-data">`):]
		end := strings.Index(block, "</script>")
		if end < 0 {
			t.Fatal("no end to the JSON block")
		}
		block = block[:end]
		var data struct {
			Keys []struct{ Application string }
		}
		if err := json.Unmarshal([]byte(block), &data); err != nil {
			t.Fatalf("the JSON block is cut short by the name (%v): %s", err, block)
		}
		found := false
		for _, k := range data.Keys {
			found = found || k.Application == evil
		}
		if !found || strings.Contains(body, `<script src="/x.js">`) || strings.Contains(strings.ToLower(block), "<") {
			t.Errorf("the name is not kept as data inside the block: %s", block)
		}
	})

	t.Run("no secret in the logs", func(t *testing.T) {
		const email, password = "pages.signup@example.com", "a long enough password for pages"
		v := newVisitor(t, s.URL, nil)
		if status, _, body := v.post("/portal/signup", url.Values{"email": {email}, "password": {password}, "name": {"Pages"}}); status != http.StatusSeeOther {
			t.Fatalf("sign up: %d %.300s", status, body)
		}
		token := s.signUpToken(t, email)
		if status, body := v.get("/portal/verify?token=" + url.QueryEscape(token)); status != http.StatusOK || !strings.Contains(body, token) {
			t.Fatalf("the verify page: %d", status)
		}
		// A wrong password first: refusals are logged too.
		v.post("/portal/verify", url.Values{"token": {token}, "password": {"not " + password}})
		status, h, _ := v.post("/portal/verify", url.Values{"token": {token}, "password": {password}})
		session := strings.TrimPrefix(strings.SplitN(h.Get("Set-Cookie"), ";", 2)[0], "flightgraph_session=")
		if status != http.StatusSeeOther || !strings.HasPrefix(session, "fgps_") {
			t.Fatalf("verify: %d %q", status, h.Get("Set-Cookie"))
		}
		dev := newVisitor(t, s.URL, nil)
		dev.post("/portal/signin", url.Values{"email": {s.demo.DeveloperEmail}, "password": {"wrong " + s.demo.DeveloperPassword}})
		dev.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword)
		status, _, body := dev.post("/portal/trial", url.Values{"keyId": {s.raiseLimitsKeyID}})
		var tk struct{ APIKey, Secret string }
		if json.Unmarshal([]byte(body), &tk) != nil || status != http.StatusOK || tk.Secret == "" {
			t.Fatalf("trial: %d %s", status, body)
		}
		u, _ := url.Parse(s.URL)
		var devSession string
		for _, c := range dev.c.Jar.Cookies(u) {
			devSession = c.Value
		}
		logs := s.log.String()
		if !strings.Contains(logs, "path=/portal/verify") {
			t.Fatalf("the access log has no line of the pages: %.500s", logs)
		}
		for name, secret := range map[string]string{"a password": password, "a wrong password": "not " + password, "the demo password": s.demo.DeveloperPassword,
			"a sign-up token": token, "a session": session, "the developer's session": devSession, "a trial key": tk.APIKey, "a trial secret": tk.Secret} {
			if secret == "" || strings.Contains(logs, secret) {
				t.Errorf("%s is in the log", name)
			}
		}
	})
}

// TestPortalPagesSignInLockout: guessing a password through the sign-in page meets the same
// lockout as signIn over GraphQL, with or without a session of the guesser's own, and the page
// then refuses even the right password.
func TestPortalPagesSignInLockout(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	const email, password = "victim@example.com", "correct horse battery staple"
	s.signUp(t, email, password, "Victim")
	guesser := newVisitor(t, s.URL, nil)
	guesser.signIn(s.demo.DeveloperEmail, s.demo.DeveloperPassword) // its own session rides along
	for i := range access.MaxSignInAttempts {
		status, _, body := guesser.post("/portal/signin", url.Values{"email": {email}, "password": {fmt.Sprintf("guess %d", i)}})
		if status != http.StatusUnauthorized || !strings.Contains(body, flightgraph.ECodeBadLogin) {
			t.Fatalf("guess %d: %d %.300s", i, status, body)
		}
	}
	status, h, body := newVisitor(t, s.URL, nil).post("/portal/signin", url.Values{"email": {email}, "password": {password}})
	if status != http.StatusTooManyRequests || !strings.Contains(body, flightgraph.ECodeTooManySignIns) || h.Get("Set-Cookie") != "" || h.Get("Retry-After") == "" {
		t.Errorf("the right password after %d guesses through the page: %d %q %.300s", access.MaxSignInAttempts, status, h.Get("Set-Cookie"), body)
	}
	if code, _ := s.trySignIn(t, email, password); code != flightgraph.ECodeTooManySignIns {
		t.Errorf("signIn over GraphQL after the page's guesses: %q, want %s", code, flightgraph.ECodeTooManySignIns)
	}
}

// TestPortalOperatorsFilters: whatever the desk's query string says, the page answers a client's
// error as one (4xx, never a 500 that pages someone), escaped, and clamps its offset.
func TestPortalOperatorsFilters(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	op := newVisitor(t, s.URL, nil)
	op.signIn(s.demo.OperatorEmail, s.demo.OperatorPassword)
	for _, tc := range []struct {
		query string
		want  int
		code  string
	}{
		{"role=bogus", http.StatusBadRequest, "GRAPHQL_VALIDATION_FAILED"},
		{"role=" + url.QueryEscape("<b>x</b>"), http.StatusBadRequest, "GRAPHQL_VALIDATION_FAILED"},
		{"role=operator", http.StatusOK, ""},
		{"offset=-5", http.StatusOK, ""},
		{"offset=99999999999999999999", http.StatusOK, ""},
		{"email=" + strings.Repeat("a", 10<<10), http.StatusBadRequest, flightgraph.ECodeInvalidParameter},
		{"targetType=" + url.QueryEscape(`"><script>x</script>`), http.StatusOK, ""},
	} {
		status, body := op.get("/portal/operators?" + tc.query)
		if status != tc.want || (tc.code != "" && !strings.Contains(body, tc.code)) || strings.Contains(body, "<b>x") || strings.Contains(body, "<script>x") {
			t.Errorf("%.40s: %d, want %d %s: %.300s", tc.query, status, tc.want, tc.code, body)
		}
	}
	// The same for a form the desk posts.
	if status, _, body := op.post("/portal/operators/accounts/acc_x/role", url.Values{"role": {"emperor"}}); status != http.StatusBadRequest {
		t.Errorf("a role GraphQL does not know: %d %.300s", status, body)
	}
}
