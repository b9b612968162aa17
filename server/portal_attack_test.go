package server_test

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

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
