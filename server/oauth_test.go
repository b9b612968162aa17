package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// tokenPath is the OAuth 2.0 token endpoint (spec 4.1).
const oaTokenPath = "/oauthcust/oauth/token"

// basicAuth is an RFC 6749 §2.3.1 Authorization header: id and secret form-encoded, then Basic.
func oaBasic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// tokenCall is one request to the token endpoint.
type oaCall struct {
	method      string // default POST
	query       string // appended to the URL after '?'
	contentType string // default application/x-www-form-urlencoded
	auth        string // the Authorization header, if any
	form        url.Values
	rawBody     string // used instead of form when set
}

// reply is an HTTP answer, read whole.
type oaReply struct {
	status int
	header http.Header
	body   []byte
}

func (r oaReply) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// object decodes the body as one JSON object.
func (r oaReply) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r)
	}
	return m
}

func oaSend(t testing.TB, hc *http.Client, req *http.Request) oaReply {
	t.Helper()
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return oaReply{status: resp.StatusCode, header: resp.Header, body: body}
}

func (c oaCall) request(t testing.TB, base string) *http.Request {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	u := base + oaTokenPath
	if c.query != "" {
		u += "?" + c.query
	}
	body := c.rawBody
	if body == "" && c.form != nil {
		body = c.form.Encode()
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	ct := c.contentType
	if ct == "" && body != "" {
		ct = "application/x-www-form-urlencoded"
	}
	if ct != "-" && ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	return req
}

func (s *testServer) oaToken(t testing.TB, c oaCall) oaReply {
	t.Helper()
	return oaSend(t, nil, c.request(t, s.URL))
}

// client is an OAuth client: a key and its secret.
type oaClient struct{ id, secret string }

func (c oaClient) basic() string { return oaBasic(c.id, c.secret) }

func (s *testServer) oaDemoClient() oaClient { return oaClient{s.demo.APIKey, s.demo.ClientSecret} }

// grant asks for a token and fails the test unless it is issued.
func (s *testServer) oaGrant(t testing.TB, c oaClient, form url.Values) map[string]any {
	t.Helper()
	r := s.oaToken(t, oaCall{auth: c.basic(), form: form})
	if r.status != http.StatusOK {
		t.Fatalf("token for %v: %s", form, r)
	}
	return r.object(t)
}

func (s *testServer) oaPasswordGrant(t testing.TB, c oaClient) (access, refresh string) {
	t.Helper()
	m := s.oaGrant(t, c, url.Values{"grant_type": {"password"}, "username": {s.demo.CustomerUsername}, "password": {s.demo.CustomerPassword}})
	access, _ = m["access_token"].(string)
	refresh, _ = m["refresh_token"].(string)
	if access == "" || refresh == "" {
		t.Fatalf("password grant without tokens: %v", m)
	}
	return access, refresh
}

// refreshCall is a refresh_token grant request of a client.
func oaRefreshCall(c oaClient, refreshToken string) oaCall {
	return oaCall{auth: c.basic(), form: url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}}}
}

// ping calls GET /opendata/{api}/v1/ping with the given headers.
func (s *testServer) oaPing(t testing.TB, api string, headers map[string]string) oaReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/opendata/"+api+"/v1/ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return oaSend(t, nil, req)
}

func oaBearer(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

// oaRESTCode is restCode of a token-endpoint reply.
func oaRESTCode(t testing.TB, r oaReply) string {
	t.Helper()
	return restCode(t, string(r.body))
}

// oaSignUp makes a developer account and signs it in.
func (s *testServer) oaSignUp(t testing.TB, email string) *portal {
	t.Helper()
	return s.signUp(t, email, "correct horse battery staple", "Second Developer")
}

// oaOperator signs the demo operator in.
func (s *testServer) oaOperator(t testing.TB) *portal {
	t.Helper()
	return s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword)
}

// portalKey is a key made through the portal.
type oaKey struct {
	oaClient
	keyID string
}

// newKey registers an application, requests a key for api and has the operator approve it.
func (p *portal) newKey(t testing.TB, op *portal, api string) oaKey {
	t.Helper()
	var app struct{ RegisterApplication struct{ ID string } }
	p.do(t, `mutation($in: ApplicationInput!) { registerApplication(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"name": "App for " + api, "description": "OAuth tests"}}, &app)
	var key struct {
		RequestKey struct {
			Key struct {
				ID, APIKey, Secret string
				Subscriptions      []struct{ ID, API, Status string }
			}
		}
	}
	p.do(t, `mutation($in: RequestKeyInput!) { requestKey(input: $in) { key { id apiKey secret subscriptions { id api status } } } }`,
		map[string]any{"in": map[string]any{"applicationId": app.RegisterApplication.ID, "api": api}}, &key)
	k := key.RequestKey.Key
	if len(k.Subscriptions) != 1 || k.Subscriptions[0].API != api {
		t.Fatalf("requestKey %s: subscriptions %+v", api, k.Subscriptions)
	}
	var approved struct{ ApproveSubscription struct{ Status string } }
	op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": k.Subscriptions[0].ID}, &approved)
	if approved.ApproveSubscription.Status != "approved" {
		t.Fatalf("approveSubscription: status %q", approved.ApproveSubscription.Status)
	}
	if access.CredentialKind(k.APIKey) != access.KindAPIKey || access.CredentialKind(k.Secret) != access.KindSecret {
		t.Fatalf("requestKey answered key %q secret %q", k.APIKey, k.Secret)
	}
	return oaKey{oaClient: oaClient{k.APIKey, k.Secret}, keyID: k.ID}
}

func (p *portal) revokeKey(t testing.TB, keyID string) {
	t.Helper()
	var out struct{ RevokeKey struct{ Status string } }
	p.do(t, `mutation($id: ID!) { revokeKey(keyId: $id) { status } }`, map[string]any{"id": keyID}, &out)
	if out.RevokeKey.Status != "revoked" {
		t.Fatalf("revokeKey: status %q", out.RevokeKey.Status)
	}
}

// checkOAuthError checks an RFC 6749 §5.2 error answer of the token endpoint.
func oaCheckError(t testing.TB, r oaReply, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Errorf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, r.body)
	}
	if m["error"] != code {
		t.Errorf("error %v, want %q: %s", m["error"], code, r.body)
	}
	if d, ok := m["error_description"].(string); !ok || d == "" {
		t.Errorf("no error_description: %s", r.body)
	}
	for _, k := range []string{"access_token", "refresh_token", "token_type"} {
		if _, ok := m[k]; ok {
			t.Errorf("an error answer carries %s: %s", k, r.body)
		}
	}
	if status == http.StatusUnauthorized {
		if wa := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Basic ") {
			t.Errorf("401 with WWW-Authenticate %q, want a Basic challenge", wa)
		}
	}
}

// fixture is a server with keys of every kind the token endpoint tells apart.
type oaFixture struct {
	*testServer
	other   oaKey // another developer's key, approved for baggage
	offers  oaKey // approved for offers only
	revoked oaKey // approved for baggage, then revoked by its owner
}

func oaNewFixture(t *testing.T, dialect string) *oaFixture {
	t.Helper()
	s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
	op := s.oaOperator(t)
	dev := s.oaSignUp(t, "second.developer@example.com")
	f := &oaFixture{testServer: s}
	f.other = dev.newKey(t, op, "baggage")
	f.offers = dev.newKey(t, op, "offers")
	f.revoked = dev.newKey(t, op, "baggage")
	// The doomed key works before it is revoked; its token stops working with it.
	m := s.oaGrant(t, f.revoked.oaClient, url.Values{"grant_type": {"client_credentials"}})
	tok, _ := m["access_token"].(string)
	if r := s.oaPing(t, "baggage", oaBearer(tok)); r.status != http.StatusOK {
		t.Fatalf("token of the key to revoke: %s", r)
	}
	dev.revokeKey(t, f.revoked.keyID)
	if r := s.oaPing(t, "baggage", oaBearer(tok)); r.status != http.StatusUnauthorized {
		t.Errorf("token of a revoked key: %s, want 401", r)
	}
	return f
}

func TestTokenEndpointRejects(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := oaNewFixture(t, dialect)
		demo := f.oaDemoClient()
		demoAccess, _ := f.oaPasswordGrant(t, demo)
		_, otherRefresh := f.oaPasswordGrant(t, f.other.oaClient)
		cc := url.Values{"grant_type": {"client_credentials"}}
		pw := func(extra ...string) url.Values {
			v := url.Values{"grant_type": {"password"}, "username": {f.demo.CustomerUsername}, "password": {f.demo.CustomerPassword}}
			for i := 0; i+1 < len(extra); i += 2 {
				if extra[i+1] == "" {
					v.Del(extra[i])
				} else {
					v.Set(extra[i], extra[i+1])
				}
			}
			return v
		}
		with := func(v url.Values, kv ...string) url.Values {
			v = maps.Clone(v)
			for i := 0; i+1 < len(kv); i += 2 {
				v.Add(kv[i], kv[i+1])
			}
			return v
		}
		big := "grant_type=client_credentials&pad=" + strings.Repeat("a", 64<<10)

		type rejectCase struct {
			name   string
			call   oaCall
			status int
			code   string
		}
		cases := []rejectCase{
			{"GET instead of POST", oaCall{method: http.MethodGet, auth: demo.basic()}, 405, "invalid_request"},
			{"PUT instead of POST", oaCall{method: http.MethodPut, auth: demo.basic(), form: cc}, 405, "invalid_request"},
			{"JSON body", oaCall{auth: demo.basic(), contentType: "application/json", rawBody: `{"grant_type":"client_credentials"}`}, 400, "invalid_request"},
			{"no content type", oaCall{auth: demo.basic(), contentType: "-", rawBody: "grant_type=client_credentials"}, 400, "invalid_request"},
			{"multipart body", oaCall{auth: demo.basic(), contentType: "multipart/form-data; boundary=x", rawBody: "--x\r\nContent-Disposition: form-data; name=\"grant_type\"\r\n\r\nclient_credentials\r\n--x--\r\n"}, 400, "invalid_request"},
			{"no client authentication", oaCall{form: cc}, 401, "invalid_client"},
			{"Basic with an unknown client id", oaCall{auth: oaBasic(access.NewCredential(access.KindAPIKey), demo.secret), form: cc}, 401, "invalid_client"},
			{"Basic with a garbage client id", oaCall{auth: oaBasic("not-a-key", demo.secret), form: cc}, 401, "invalid_client"},
			{"Basic with a key whose checksum is wrong", oaCall{auth: oaBasic(demo.id[:len(demo.id)-1]+oaFlip(demo.id[len(demo.id)-1]), demo.secret), form: cc}, 401, "invalid_client"},
			{"Basic with the right id and a wrong secret", oaCall{auth: oaBasic(demo.id, access.NewCredential(access.KindSecret)), form: cc}, 401, "invalid_client"},
			{"Basic with the secret of another key", oaCall{auth: oaBasic(demo.id, f.other.secret), form: cc}, 401, "invalid_client"},
			{"Basic with an empty secret", oaCall{auth: oaBasic(demo.id, ""), form: cc}, 401, "invalid_client"},
			{"Basic with id and secret swapped", oaCall{auth: oaBasic(demo.secret, demo.id), form: cc}, 401, "invalid_client"},
			{"Basic and client_secret in the body", oaCall{auth: demo.basic(), form: with(cc, "client_secret", demo.secret)}, 400, "invalid_request"},
			{"Basic and client_id in the body", oaCall{auth: demo.basic(), form: with(cc, "client_id", demo.id)}, 400, "invalid_request"},
			{"client_id in the body without secret", oaCall{form: with(cc, "client_id", demo.id)}, 401, "invalid_client"},
			{"client_secret in the body without id", oaCall{form: with(cc, "client_secret", demo.secret)}, 401, "invalid_client"},
			{"body credentials with a wrong secret", oaCall{form: with(cc, "client_id", demo.id, "client_secret", f.other.secret)}, 401, "invalid_client"},
			{"Bearer scheme", oaCall{auth: "Bearer " + demoAccess, form: cc}, 401, "invalid_client"},
			{"Digest scheme", oaCall{auth: `Digest username="x", realm="flightgraph"`, form: cc}, 401, "invalid_client"},
			{"malformed Basic base64", oaCall{auth: "Basic %%%not-base64%%%", form: cc}, 401, "invalid_client"},
			{"Basic without a colon", oaCall{auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(demo.id)), form: cc}, 401, "invalid_client"},
			{"missing grant_type", oaCall{auth: demo.basic(), form: url.Values{"scope": {"baggage"}}}, 400, "invalid_request"},
			{"empty body", oaCall{auth: demo.basic(), contentType: "application/x-www-form-urlencoded"}, 400, "invalid_request"},
			{"unknown grant_type", oaCall{auth: demo.basic(), form: url.Values{"grant_type": {"authorization_code"}, "code": {"x"}}}, 400, "unsupported_grant_type"},
			{"grant_type in the wrong case", oaCall{auth: demo.basic(), form: url.Values{"grant_type": {"Client_Credentials"}}}, 400, "unsupported_grant_type"},
			{"grant_type repeated", oaCall{auth: demo.basic(), rawBody: "grant_type=client_credentials&grant_type=client_credentials"}, 400, "invalid_request"},
			{"scope repeated", oaCall{auth: demo.basic(), rawBody: "grant_type=client_credentials&scope=baggage&scope=offers"}, 400, "invalid_request"},
			{"parameters in the query string", oaCall{auth: demo.basic(), contentType: "application/x-www-form-urlencoded", query: "grant_type=client_credentials"}, 400, "invalid_request"},
			{"parameters in the query string and body", oaCall{auth: demo.basic(), query: "scope=baggage", form: cc}, 400, "invalid_request"},
			{"password grant without username", oaCall{auth: demo.basic(), form: pw("username", "")}, 400, "invalid_request"},
			{"password grant without password", oaCall{auth: demo.basic(), form: pw("password", "")}, 400, "invalid_request"},
			{"password grant with a wrong password", oaCall{auth: demo.basic(), form: pw("password", f.demo.CustomerPassword+"x")}, 400, "invalid_grant"},
			{"password grant for an unknown customer", oaCall{auth: demo.basic(), form: pw("username", "no.such.customer")}, 400, "invalid_grant"},
			{"password grant with the developer's portal password", oaCall{auth: demo.basic(), form: pw("username", f.demo.DeveloperEmail, "password", f.demo.DeveloperPassword)}, 400, "invalid_grant"},
			{"refresh without refresh_token", oaCall{auth: demo.basic(), form: url.Values{"grant_type": {"refresh_token"}}}, 400, "invalid_request"},
			{"refresh with a garbage token", oaRefreshCall(demo, "garbage"), 400, "invalid_grant"},
			{"refresh with an unknown well-formed token", oaRefreshCall(demo, access.NewCredential(access.KindRefreshToken)), 400, "invalid_grant"},
			{"refresh with an access token", oaRefreshCall(demo, demoAccess), 400, "invalid_grant"},
			{"refresh with another client's refresh token", oaRefreshCall(demo, otherRefresh), 400, "invalid_grant"},
			{"unknown scope", oaCall{auth: demo.basic(), form: with(cc, "scope", "nosuchapi")}, 400, "invalid_scope"},
			{"scope of an API-key product", oaCall{auth: demo.basic(), form: with(cc, "scope", "flightstatus")}, 400, "invalid_scope"},
			{"scope with one good and one API-key product", oaCall{auth: demo.basic(), form: with(cc, "scope", "baggage flightstatus")}, 400, "invalid_scope"},
			{"scope of an internal product", oaCall{auth: demo.basic(), form: with(cc, "scope", "cargo")}, 400, "invalid_scope"},
			{"password grant with the scope of a client-credentials-only API", oaCall{auth: demo.basic(), form: pw("scope", "offers")}, 400, "invalid_scope"},
			{"password grant for a key approved only for offers", oaCall{auth: f.offers.basic(), form: pw()}, 400, "unauthorized_client"},
			{"client credentials for a key approved only for offers, scope baggage", oaCall{auth: f.offers.basic(), form: with(cc, "scope", "baggage")}, 400, "invalid_scope"},
			{"revoked key", oaCall{auth: f.revoked.basic(), form: cc}, 401, "invalid_client"},
			{"revoked key in the body", oaCall{form: with(cc, "client_id", f.revoked.id, "client_secret", f.revoked.secret)}, 401, "invalid_client"},
			{"body over 64 KiB", oaCall{auth: demo.basic(), rawBody: big}, 413, "invalid_request"},
		}
		// Where the error code alone does not tell which check refused, the description does.
		descriptions := map[string]string{
			"GET instead of POST":                               "POST",
			"JSON body":                                         "x-www-form-urlencoded",
			"no content type":                                   "x-www-form-urlencoded",
			"no client authentication":                          "required",
			"Basic and client_secret in the body":               "one client authentication method",
			"Basic and client_id in the body":                   "one client authentication method",
			"Bearer scheme":                                     "HTTP Basic",
			"missing grant_type":                                "grant_type",
			"unknown grant_type":                                "authorization_code",
			"grant_type repeated":                               "grant_type",
			"scope repeated":                                    "scope",
			"parameters in the query string":                    "URL",
			"parameters in the query string and body":           "URL",
			"password grant without username":                   "username",
			"password grant without password":                   "password",
			"refresh without refresh_token":                     "refresh_token",
			"unknown scope":                                     "nosuchapi",
			"scope of an API-key product":                       "flightstatus",
			"password grant for a key approved only for offers": "password",
			"password grant with the scope of a client-credentials-only API": "offers",
		}
		for name := range descriptions {
			if !slices.ContainsFunc(cases, func(c rejectCase) bool { return c.name == name }) {
				t.Fatalf("descriptions name no case %q", name)
			}
		}
		if len(cases) < 24 {
			t.Fatalf("only %d cases", len(cases))
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := f.oaToken(t, c.call)
				oaCheckError(t, r, c.status, c.code)
				if want, ok := descriptions[c.name]; ok {
					var m struct {
						Description string `json:"error_description"`
					}
					json.Unmarshal(r.body, &m)
					if !strings.Contains(m.Description, want) {
						t.Errorf("error_description %q does not mention %q: refused by another check?", m.Description, want)
					}
				}
				if c.status == http.StatusMethodNotAllowed {
					if allow := r.header.Get("Allow"); allow != http.MethodPost {
						t.Errorf("Allow %q, want POST", allow)
					}
				}
			})
		}

		// Refusals used up nothing: the other client's refresh token still works for its owner.
		r := f.oaToken(t, oaRefreshCall(f.other.oaClient, otherRefresh))
		if r.status != http.StatusOK {
			t.Errorf("the other client's refresh token no longer works after a third party presented it: %s", r)
		}
	})
}

// flip changes a base62 digit into another one.
func oaFlip(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}

// TestTokenEndpointAcceptsBodyCredentials is the positive control of the client authentication
// refusals: client_id and client_secret in the body are equally allowed (RFC 6749 §2.3.1).
func TestTokenEndpointAcceptsBodyCredentials(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := oaNewFixture(t, dialect)
		demo := f.oaDemoClient()
		for _, c := range []struct {
			name string
			call oaCall
		}{
			{"credentials in the body", oaCall{form: url.Values{"grant_type": {"client_credentials"}, "client_id": {demo.id}, "client_secret": {demo.secret}}}},
			{"Basic", oaCall{auth: demo.basic(), form: url.Values{"grant_type": {"client_credentials"}}}},
			{"content type with charset", oaCall{auth: demo.basic(), contentType: "application/x-www-form-urlencoded; charset=UTF-8", form: url.Values{"grant_type": {"client_credentials"}}}},
			{"scheme in lower case", oaCall{auth: "basic " + strings.TrimPrefix(demo.basic(), "Basic "), form: url.Values{"grant_type": {"client_credentials"}}}},
			{"password grant with body credentials", oaCall{form: url.Values{"grant_type": {"password"}, "client_id": {demo.id}, "client_secret": {demo.secret},
				"username": {f.demo.CustomerUsername}, "password": {f.demo.CustomerPassword}}}},
			{"portal-made key", oaCall{auth: f.other.basic(), form: url.Values{"grant_type": {"client_credentials"}}}},
			{"offers-only key", oaCall{auth: f.offers.basic(), form: url.Values{"grant_type": {"client_credentials"}, "scope": {"offers"}}}},
			{"narrower scope", oaCall{auth: demo.basic(), form: url.Values{"grant_type": {"client_credentials"}, "scope": {"baggage"}}}},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := f.oaToken(t, c.call)
				if r.status != http.StatusOK {
					t.Fatalf("%s", r)
				}
				m := r.object(t)
				tok, _ := m["access_token"].(string)
				if access.CredentialKind(tok) != access.KindAccessToken {
					t.Fatalf("access_token %q", tok)
				}
				if cc := r.header.Get("Cache-Control"); cc != "no-store" {
					t.Errorf("Cache-Control %q, want no-store", cc)
				}
			})
		}
	})
}

func TestTokenEndpointIssues(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		demo := s.oaDemoClient()

		// Client credentials: spec 4.1 — token_type, return_type, access_token, expires_in.
		r := s.oaToken(t, oaCall{auth: demo.basic(), form: url.Values{"grant_type": {"client_credentials"}}})
		if r.status != http.StatusOK {
			t.Fatalf("client credentials: %s", r)
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q, want no-store", cc)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q", ct)
		}
		m := r.object(t)
		// RFC 6749 §5.1 allows scope in any token response; the spec's fields are the others.
		oaCheckFields(t, "client credentials", m, []string{"token_type", "return_type", "access_token", "expires_in"}, "scope")
		if tt, _ := m["token_type"].(string); !strings.EqualFold(tt, "bearer") {
			t.Errorf("token_type %v, want bearer", m["token_type"])
		}
		if m["return_type"] != "json" {
			t.Errorf("return_type %v, want json", m["return_type"])
		}
		ccToken, _ := m["access_token"].(string)
		if !strings.HasPrefix(ccToken, "fgat_") || access.CredentialKind(ccToken) != access.KindAccessToken {
			t.Errorf("access_token %q is not an fgat_ credential", ccToken)
		}
		if e, ok := m["expires_in"].(float64); !ok || e <= 0 || e != float64(int(e)) {
			t.Errorf("expires_in %v, want a positive integer", m["expires_in"])
		}
		if sc, ok := m["scope"].(string); ok && sc != "baggage offers" {
			t.Errorf("scope %q, want the OAuth client-credentials APIs of the demo key: baggage offers", sc)
		}

		// Password: access_token, token_type, refresh_token, expires_in, customerId.
		r = s.oaToken(t, oaCall{auth: demo.basic(), form: url.Values{"grant_type": {"password"},
			"username": {s.demo.CustomerUsername}, "password": {s.demo.CustomerPassword}}})
		if r.status != http.StatusOK {
			t.Fatalf("password: %s", r)
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q, want no-store", cc)
		}
		m = r.object(t)
		oaCheckFields(t, "password", m, []string{"access_token", "token_type", "refresh_token", "expires_in", "customerId"}, "scope")
		pwToken, _ := m["access_token"].(string)
		if access.CredentialKind(pwToken) != access.KindAccessToken {
			t.Errorf("access_token %q is not an fgat_ credential", pwToken)
		}
		if tt, _ := m["token_type"].(string); !strings.EqualFold(tt, "bearer") {
			t.Errorf("token_type %v, want bearer", m["token_type"])
		}
		if rt, _ := m["refresh_token"].(string); !strings.HasPrefix(rt, "fgrt_") || access.CredentialKind(rt) != access.KindRefreshToken {
			t.Errorf("refresh_token %q is not an fgrt_ credential", rt)
		}
		if e, ok := m["expires_in"].(float64); !ok || e <= 0 {
			t.Errorf("expires_in %v, want > 0", m["expires_in"])
		}
		if m["customerId"] != s.demo.CustomerID {
			t.Errorf("customerId %v, want %q", m["customerId"], s.demo.CustomerID)
		}
		if sc, ok := m["scope"].(string); ok && sc != "baggage" {
			t.Errorf("scope %q, want baggage (the one API that takes the password grant)", sc)
		}

		// Both tokens call the baggage ping (spec 4.3).
		for name, tok := range map[string]string{"client credentials": ccToken, "password": pwToken} {
			r := s.oaPing(t, "baggage", map[string]string{"Authorization": "Bearer " + tok, "Accept-Language": "fr-FR", "svc-travel-country": "NL"})
			if r.status != http.StatusOK {
				t.Errorf("%s token on the baggage ping: %s", name, r)
				continue
			}
			var ping map[string]any
			if err := json.Unmarshal(r.body, &ping); err != nil {
				t.Fatalf("ping body: %v: %s", err, r.body)
			}
			for _, k := range []string{"buildTimestamp", "timestamp", "version", "response", "language", "country"} {
				if _, ok := ping[k].(string); !ok {
					t.Errorf("%s ping: %s is not a string: %s", name, k, r.body)
				}
			}
			if ping["language"] != "fr" || ping["country"] != "NL" {
				t.Errorf("%s ping: language %v country %v, want fr NL", name, ping["language"], ping["country"])
			}
		}
		// The client-credentials token also calls offers; the password one does not (offers
		// takes client credentials only).
		if r := s.oaPing(t, "offers", oaBearer(ccToken)); r.status != http.StatusOK {
			t.Errorf("client credentials token on the offers ping: %s", r)
		}
		if r := s.oaPing(t, "offers", oaBearer(pwToken)); r.status != http.StatusForbidden || oaRESTCode(t, r) != "AUTH_403.001" {
			t.Errorf("password token on the offers ping: %s, want 403 AUTH_403.001", r)
		}

		// The api-key on an OAuth API: the catalogue's AUTH_403.001 (another kind of
		// credential), with an RFC 6750 challenge naming the scheme it takes.
		r = s.oaPing(t, "baggage", map[string]string{"api-key": s.demo.APIKey})
		if r.status != http.StatusForbidden || oaRESTCode(t, r) != flightgraph.ECodeWrongCredential {
			t.Errorf("api-key on the baggage ping: %s, want 403 AUTH_403.001", r)
		}
		if wa := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer realm=") {
			t.Errorf("api-key on the baggage ping: WWW-Authenticate %q, want Bearer realm=...", wa)
		}
		oaRESTCode(t, r)

		// No credentials at all: a bare challenge.
		r = s.oaPing(t, "baggage", nil)
		if wa := r.header.Get("WWW-Authenticate"); r.status != http.StatusUnauthorized || !strings.HasPrefix(wa, "Bearer realm=") || strings.Contains(wa, "error=") {
			t.Errorf("no credentials on the baggage ping: %s, WWW-Authenticate %q", r, wa)
		}

		// Bad bearer tokens: invalid_token.
		for name, tok := range map[string]string{
			"garbage":                   "garbage",
			"unknown well-formed token": access.NewCredential(access.KindAccessToken),
			"refresh token":             access.NewCredential(access.KindRefreshToken),
			"client secret":             demo.secret,
		} {
			r := s.oaPing(t, "baggage", oaBearer(tok))
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s bearer: %s, want 401", name, r)
			}
			if wa := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer ") || !strings.Contains(wa, `error="invalid_token"`) {
				t.Errorf("%s bearer: WWW-Authenticate %q, want Bearer with error=\"invalid_token\"", name, wa)
			}
		}

		// An access token on an API-key product is refused.
		for _, tok := range []string{ccToken, pwToken} {
			r := s.oaPing(t, "flightstatus", oaBearer(tok))
			if r.status != http.StatusForbidden {
				t.Errorf("access token on the flightstatus ping: %s, want 403", r)
				continue
			}
			if code := oaRESTCode(t, r); code != "AUTH_403.001" {
				t.Errorf("access token on the flightstatus ping: code %s, want AUTH_403.001: %s", code, r.body)
			}
		}
		// ...and the api-key works there, so the refusal is about the credential.
		if r := s.oaPing(t, "flightstatus", map[string]string{"api-key": s.demo.APIKey}); r.status != http.StatusOK {
			t.Errorf("api-key on the flightstatus ping: %s", r)
		}
	})
}

// checkFields checks that m has each of want and nothing else but the optional names.
func oaCheckFields(t testing.TB, what string, m map[string]any, want []string, optional ...string) {
	t.Helper()
	for _, k := range want {
		if _, ok := m[k]; !ok {
			t.Errorf("%s response lacks %s: %v", what, k, m)
		}
	}
	for k := range m {
		if !slices.Contains(want, k) && !slices.Contains(optional, k) {
			t.Errorf("%s response has the field %s, which the spec does not name: %v", what, k, m)
		}
	}
}

func TestOAuth2Library(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		ctx := context.Background()
		tokenURL := s.URL + oaTokenPath

		// Client credentials, unchanged.
		cc := clientcredentials.Config{ClientID: s.demo.APIKey, ClientSecret: s.demo.ClientSecret, TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInHeader}
		tok, err := cc.Token(ctx)
		if err != nil {
			t.Fatalf("clientcredentials Token: %v", err)
		}
		if !tok.Valid() || tok.Type() != "Bearer" || tok.RefreshToken != "" {
			t.Errorf("client credentials token: %+v", tok)
		}
		if got := tok.Extra("return_type"); got != "json" {
			t.Errorf("return_type %v, want json", got)
		}
		pingWith := func(c *http.Client, api string) oaReply {
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/opendata/"+api+"/v1/ping", nil)
			return oaSend(t, c, req)
		}
		if r := pingWith(cc.Client(ctx), "baggage"); r.status != http.StatusOK {
			t.Errorf("clientcredentials client on the baggage ping: %s", r)
		}

		// The auto-detecting style works too.
		auto := cc
		auto.AuthStyle = oauth2.AuthStyleAutoDetect
		if _, err := auto.Token(ctx); err != nil {
			t.Errorf("auto-detected auth style: %v", err)
		}
		// A wrong secret is a RetrieveError with the RFC 6749 code.
		wrong := cc
		wrong.ClientSecret = access.NewCredential(access.KindSecret)
		if _, err := wrong.Token(ctx); !oaIsError(err, "invalid_client") {
			t.Errorf("wrong secret: %v, want invalid_client", err)
		}

		// Resource owner password credentials.
		conf := oauth2.Config{ClientID: s.demo.APIKey, ClientSecret: s.demo.ClientSecret,
			Endpoint: oauth2.Endpoint{TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInHeader}}
		pw, err := conf.PasswordCredentialsToken(ctx, s.demo.CustomerUsername, s.demo.CustomerPassword)
		if err != nil {
			t.Fatalf("PasswordCredentialsToken: %v", err)
		}
		if pw.RefreshToken == "" || access.CredentialKind(pw.RefreshToken) != access.KindRefreshToken {
			t.Fatalf("password token without a refresh token: %+v", pw)
		}
		if got := pw.Extra("customerId"); got != s.demo.CustomerID {
			t.Errorf("customerId %v, want %s", got, s.demo.CustomerID)
		}
		if r := pingWith(conf.Client(ctx, pw), "baggage"); r.status != http.StatusOK {
			t.Errorf("password token client on the baggage ping: %s", r)
		}
		if _, err := conf.PasswordCredentialsToken(ctx, s.demo.CustomerUsername, "wrong password"); !oaIsError(err, "invalid_grant") {
			t.Errorf("wrong customer password: %v, want invalid_grant", err)
		}

		// An expired copy refreshes through the endpoint, with rotation.
		expired := *pw
		expired.Expiry = time.Now().Add(-time.Minute)
		ts := conf.TokenSource(ctx, &expired)
		fresh, err := ts.Token()
		if err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if fresh.AccessToken == pw.AccessToken || !fresh.Valid() {
			t.Errorf("refresh gave no new access token: %+v", fresh)
		}
		if fresh.RefreshToken == "" || fresh.RefreshToken == pw.RefreshToken {
			t.Errorf("refresh token not rotated: old %q new %q", pw.RefreshToken, fresh.RefreshToken)
		}
		if r := pingWith(oauth2.NewClient(ctx, ts), "baggage"); r.status != http.StatusOK {
			t.Errorf("refreshed token on the baggage ping: %s", r)
		}
		// The old refresh token no longer works...
		again := conf.TokenSource(ctx, &expired)
		if _, err := again.Token(); !oaIsError(err, "invalid_grant") {
			t.Errorf("the rotated-out refresh token: %v, want invalid_grant", err)
		}
		// ...and presenting it revoked its family: the new refresh token is dead too.
		newer := *fresh
		newer.Expiry = time.Now().Add(-time.Minute)
		if _, err := conf.TokenSource(ctx, &newer).Token(); !oaIsError(err, "invalid_grant") {
			t.Errorf("after reuse of the old refresh token, the new one: %v, want invalid_grant (family revoked)", err)
		}
	})
}

// isOAuthError reports whether err is an oauth2 RetrieveError with the code.
func oaIsError(err error, code string) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == code
}

func TestRefreshRace(t *testing.T) {
	const racers = 50
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		demo := s.oaDemoClient()
		_, refresh := s.oaPasswordGrant(t, demo)

		httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: racers, MaxConnsPerHost: 0}}
		defer httpc.CloseIdleConnections()
		reqs := make([]*http.Request, racers)
		for i := range reqs {
			reqs[i] = oaRefreshCall(demo, refresh).request(t, s.URL)
		}
		replies := make([]oaReply, racers)
		errs := make([]error, racers)
		var ready, done sync.WaitGroup
		start := make(chan struct{})
		ready.Add(racers)
		for i := range racers {
			done.Go(func() {
				ready.Done()
				<-start
				resp, err := httpc.Do(reqs[i])
				if err != nil {
					errs[i] = err
					return
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				replies[i], errs[i] = oaReply{status: resp.StatusCode, header: resp.Header, body: body}, err
			})
		}
		ready.Wait()
		close(start)
		done.Wait()

		var winners []map[string]any
		for i, r := range replies {
			if errs[i] != nil {
				t.Errorf("racer %d: %v", i, errs[i])
				continue
			}
			switch r.status {
			case http.StatusOK:
				winners = append(winners, r.object(t))
			case http.StatusBadRequest:
				if m := r.object(t); m["error"] != "invalid_grant" {
					t.Errorf("racer %d: %s, want invalid_grant", i, r)
				}
			default:
				t.Errorf("racer %d: %s, want 200 or 400 invalid_grant", i, r)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("%d racers got a token, want exactly 1", len(winners))
		}
		newRefresh, _ := winners[0]["refresh_token"].(string)
		newAccess, _ := winners[0]["access_token"].(string)
		if access.CredentialKind(newRefresh) != access.KindRefreshToken || newRefresh == refresh {
			t.Fatalf("winner's refresh token %q", newRefresh)
		}
		// The reuse revoked the family: the winner's new refresh and access tokens are dead.
		if r := s.oaToken(t, oaRefreshCall(demo, newRefresh)); r.status != http.StatusBadRequest || r.object(t)["error"] != "invalid_grant" {
			t.Errorf("the winner's new refresh token still works after the refresh token was reused (family not revoked): %s", r)
		}
		if r := s.oaPing(t, "baggage", oaBearer(newAccess)); r.status != http.StatusUnauthorized {
			t.Errorf("the winner's new access token still works after the refresh token was reused (family not revoked): %s", r)
		}
		if r := s.oaToken(t, oaRefreshCall(demo, refresh)); r.status != http.StatusBadRequest {
			t.Errorf("the raced refresh token afterwards: %s, want 400 invalid_grant", r)
		}
	})
}

// TestRefreshReuseRevokesCachedAccessTokens: presenting a used refresh token revokes its whole
// family (OAuth 2.0 Security BCP §4.14.2), access tokens included, and this process's guard
// must stop accepting them at once — as it does after revokeKey — not when its cache entry
// expires (in production five seconds later; here, with the frozen test clock, never).
func TestRefreshReuseRevokesCachedAccessTokens(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		demo := s.oaDemoClient()
		a1, r1 := s.oaPasswordGrant(t, demo)
		if r := s.oaPing(t, "baggage", oaBearer(a1)); r.status != http.StatusOK {
			t.Fatalf("first access token: %s", r)
		}
		r := s.oaToken(t, oaRefreshCall(demo, r1))
		if r.status != http.StatusOK {
			t.Fatalf("refresh: %s", r)
		}
		m := r.object(t)
		a2, _ := m["access_token"].(string)
		r2, _ := m["refresh_token"].(string)
		if r := s.oaPing(t, "baggage", oaBearer(a2)); r.status != http.StatusOK {
			t.Fatalf("second access token: %s", r)
		}
		// r1 again: reuse, the family is revoked.
		if r := s.oaToken(t, oaRefreshCall(demo, r1)); r.status != http.StatusBadRequest || r.object(t)["error"] != "invalid_grant" {
			t.Fatalf("reused refresh token: %s, want 400 invalid_grant", r)
		}
		if r := s.oaToken(t, oaRefreshCall(demo, r2)); r.status != http.StatusBadRequest || r.object(t)["error"] != "invalid_grant" {
			t.Errorf("the family's newest refresh token after the reuse: %s, want 400 invalid_grant", r)
		}
		for name, tok := range map[string]string{"first": a1, "second": a2} {
			r := s.oaPing(t, "baggage", oaBearer(tok))
			if r.status != http.StatusUnauthorized {
				t.Errorf("the %s access token of a family revoked for refresh token reuse still calls the baggage ping "+
					"(the token service does not make the guard forget the family's cached tokens): %s, want 401 invalid_token", name, r)
			} else if wa := r.header.Get("WWW-Authenticate"); !strings.Contains(wa, `error="invalid_token"`) {
				t.Errorf("the %s access token: WWW-Authenticate %q, want error=\"invalid_token\"", name, wa)
			}
		}
	})
}

// oaGatedStore parks, once armed, the refresh that wins its refresh token right after that
// transaction commits, until released: it makes one interleaving of a concurrent reuse
// deterministic. It changes no data and holds no lock while parked.
type oaGatedStore struct {
	flightgraph.AccessStore
	armed   atomic.Bool
	parked  chan struct{}
	release chan struct{}
}

type oaGatedTx struct {
	flightgraph.AccessTx
	won *bool
}

func (tx oaGatedTx) UseRefreshToken(ctx context.Context, hash string, now time.Time) (bool, error) {
	ok, err := tx.AccessTx.UseRefreshToken(ctx, hash, now)
	*tx.won = ok && err == nil
	return ok, err
}

func (g *oaGatedStore) InTx(ctx context.Context, fn func(tx flightgraph.AccessTx) error) error {
	var won bool
	err := g.AccessStore.InTx(ctx, func(tx flightgraph.AccessTx) error { return fn(oaGatedTx{tx, &won}) })
	if won && err == nil && g.armed.CompareAndSwap(true, false) {
		close(g.parked)
		<-g.release
	}
	return err
}

// newGatedServer is newServer over a gated access store.
func newGatedServer(t *testing.T, dialect string) (*testServer, *oaGatedStore) {
	t.Helper()
	db := storetest.Seeded(t, dialect, os.Getenv)
	gate := &oaGatedStore{AccessStore: store.NewAccessStore(db), parked: make(chan struct{}), release: make(chan struct{})}
	cfg := testConfig(db, io.Discard)
	cfg.Stores.Access = gate
	h, demo := startServer(t, cfg)
	s := &testServer{Server: httptest.NewServer(h), db: db, srv: h, demo: demo}
	t.Cleanup(s.Close)
	return s, gate
}

// TestRefreshReuseDuringRotation is TestRefreshRace's losing interleaving made deterministic:
// refresh A wins the refresh token; before A has stored its new pair, refresh B presents the same
// token, loses, and revokes the family. A's new pair belongs to that family and must be dead too —
// otherwise whoever raced (a thief, say) keeps a working refresh token despite reuse detection.
func TestRefreshReuseDuringRotation(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s, gate := newGatedServer(t, dialect)
		demo := s.oaDemoClient()
		_, refresh := s.oaPasswordGrant(t, demo)

		gate.armed.Store(true)
		type result struct {
			r   oaReply
			err error
		}
		first := make(chan result, 1)
		req := oaRefreshCall(demo, refresh).request(t, s.URL)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				first <- result{err: err}
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			first <- result{oaReply{status: resp.StatusCode, header: resp.Header, body: body}, err}
		}()
		select {
		case <-gate.parked:
		case <-time.After(10 * time.Second):
			close(gate.release)
			t.Fatal("the first refresh never won its refresh token")
		}
		// B: the same refresh token while A is between its two transactions.
		r := s.oaToken(t, oaRefreshCall(demo, refresh))
		close(gate.release)
		oaCheckError(t, r, http.StatusBadRequest, "invalid_grant")
		a := <-first
		if a.err != nil {
			t.Fatal(a.err)
		}
		if a.r.status != http.StatusOK {
			// Refusing A as well would be a sound fix; then there is nothing left to check.
			oaCheckError(t, a.r, http.StatusBadRequest, "invalid_grant")
			return
		}
		m := a.r.object(t)
		newRefresh, _ := m["refresh_token"].(string)
		newAccess, _ := m["access_token"].(string)
		if r := s.oaToken(t, oaRefreshCall(demo, newRefresh)); r.status != http.StatusBadRequest {
			t.Errorf("the refresh token issued to the winner of a raced refresh still works although "+
				"the loser's reuse revoked the family before the winner stored its new pair: %s, want 400 invalid_grant", r)
		}
		if r := s.oaPing(t, "baggage", oaBearer(newAccess)); r.status != http.StatusUnauthorized {
			t.Errorf("the access token issued to the winner of a raced refresh still works although "+
				"the family was revoked for reuse: %s, want 401", r)
		}
	})
}
