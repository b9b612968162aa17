package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// trialKey is tryKey's answer.
type trialKey struct {
	APIKey, Secret string
	ExpiresAt      time.Time
	Key            struct{ ID, Status string }
}

const tryKeyMutation = `mutation($k: ID!) { tryKey(keyId: $k) { apiKey secret expiresAt key { id status } } }`

// tryKey mints a trial key of one of the user's keys.
func (p *portal) tryKey(t testing.TB, keyID string) trialKey {
	t.Helper()
	var out struct{ TryKey trialKey }
	p.do(t, tryKeyMutation, map[string]any{"k": keyID}, &out)
	tk := out.TryKey
	if access.CredentialKind(tk.APIKey) != access.KindTrialKey || access.CredentialKind(tk.Secret) != access.KindTrialSecret || tk.Key.ID != keyID {
		t.Fatalf("tryKey answered %+v", tk)
	}
	return tk
}

func (tk trialKey) client() oaClient { return oaClient{tk.APIKey, tk.Secret} }

// pingAs calls Flight Status's ping with an api-key and returns the error code, "" for 200.
func (s *testServer) pingAs(t testing.TB, apiKey string) string {
	t.Helper()
	code, _, body := s.call(t, http.MethodGet, "/opendata/flightstatus/v1/ping", map[string]string{"api-key": apiKey}, "")
	if code == http.StatusOK {
		return ""
	}
	return restCode(t, body)
}

// usageToday returns the usageToday of each of the user's subscriptions, by subscription id.
func (p *portal) usageToday(t testing.TB) map[string]int {
	t.Helper()
	var me struct {
		Me struct {
			Applications []struct {
				Keys []struct {
					Subscriptions []struct {
						ID         string
						UsageToday int
					}
				}
			}
		}
	}
	p.do(t, `{ me { applications { keys { subscriptions { id usageToday } } } } }`, nil, &me)
	out := map[string]int{}
	for _, app := range me.Me.Applications {
		for _, k := range app.Keys {
			for _, sub := range k.Subscriptions {
				out[sub.ID] = sub.UsageToday
			}
		}
	}
	return out
}

// TestTrialKeys: a portal session mints a trial key of one of its account's keys for Try it, which
// calls the APIs as the key (its limits, its usage) without the key's secret, and stops working
// at once when anything that would stop the key, or the session, happens. The guard caches keys
// for an hour here, so that a refusal that comes from its cache being dropped is told from one
// that comes from the cache expiring.
func TestTrialKeys(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		clock := newSignInClock(storetest.Now)
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) { c.Now = clock.Now })
		s.srv.Guard.CacheTTL = time.Hour
		op := s.oaOperator(t)
		const email, password = "trial@example.com", "correct horse battery staple"
		dev := s.oaSignUp(t, email)
		day := storetest.Now.Format(flightgraph.DateLayout)
		flightStatus := "/opendata/flightstatus?startRange=" + day + "T06:00:00Z&endRange=" + day + "T12:00:00Z&origin=AMS&pageSize=5"
		cc := url.Values{"grant_type": {"client_credentials"}}

		t.Run("acts as the key and is counted as the key", func(t *testing.T) {
			k := dev.newKey(t, op, "flightstatus")
			tk := dev.tryKey(t, k.keyID)
			if want := clock.Now().Add(access.TrialKeyTTL); !tk.ExpiresAt.Equal(want) || tk.Key.Status != "active" {
				t.Fatalf("tryKey: expires %s, key %+v; want %s and the active key", tk.ExpiresAt, tk.Key, want)
			}
			code, h, body := s.call(t, http.MethodGet, flightStatus, map[string]string{"api-key": tk.APIKey}, "")
			if code != http.StatusOK || h.Get("RateLimit") == "" || h.Get("RateLimit-Policy") == "" || h.Get("X-Packagekey-Quota-Current") != "1" {
				t.Fatalf("Flight Status with the trial key: %d %v %.300s", code, h, body)
			}
			// The key's own calls share the trial's counters: it is one subscription.
			code, h, _ = s.call(t, http.MethodGet, flightStatus, map[string]string{"api-key": k.id}, "")
			if code != http.StatusOK || h.Get("X-Packagekey-Quota-Current") != "2" {
				t.Fatalf("the key after its trial: %d, quota current %q, want 2", code, h.Get("X-Packagekey-Quota-Current"))
			}
			if n := dev.usageToday(t)[subscriptionOf(t, dev, k.keyID)]; n != 2 {
				t.Fatalf("usageToday of the key is %d, want 2: the trial's call and the key's", n)
			}
			// Where a key is refused, so is its trial: as a bearer token, and its secret as a key.
			code, _, body = s.call(t, http.MethodGet, "/opendata/flightstatus/v1/ping", oaBearer(tk.APIKey), "")
			if code != http.StatusUnauthorized || restCode(t, body) != flightgraph.ECodeInvalidToken {
				t.Errorf("the trial key as a bearer token: %d %s", code, body)
			}
			if got := s.pingAs(t, tk.Secret); got != flightgraph.ECodeInvalidKey {
				t.Errorf("the trial secret as an api-key: %q", got)
			}
		})

		t.Run("client credentials until the trial ends", func(t *testing.T) {
			k := dev.newKey(t, op, "baggage")
			tk := dev.tryKey(t, k.keyID)
			m := s.oaGrant(t, tk.client(), cc)
			if m["expires_in"] != float64(access.TrialKeyTTL/time.Second) {
				t.Fatalf("a trial's token expires_in %v, want the trial's %v s", m["expires_in"], access.TrialKeyTTL.Seconds())
			}
			clock.Add(10 * time.Minute)
			m = s.oaGrant(t, tk.client(), cc)
			if m["expires_in"] != float64(5*60) {
				t.Fatalf("a token of a trial with 5 minutes left expires_in %v, want 300", m["expires_in"])
			}
			tok, _ := m["access_token"].(string)
			if r := s.oaPing(t, "baggage", oaBearer(tok)); r.status != http.StatusOK {
				t.Fatalf("the trial's token: %s", r)
			}
			// Client credentials in the body work as in HTTP Basic.
			if r := s.oaToken(t, oaCall{form: url.Values{"grant_type": {"client_credentials"}, "client_id": {tk.APIKey}, "client_secret": {tk.Secret}}}); r.status != http.StatusOK {
				t.Fatalf("the trial in the body: %s", r)
			}
			// The other grants are not the trial's, and halves of two pairs do not make one.
			oaCheckError(t, s.oaToken(t, oaCall{auth: tk.client().basic(), form: url.Values{"grant_type": {"password"},
				"username": {s.demo.CustomerUsername}, "password": {s.demo.CustomerPassword}}}), http.StatusBadRequest, "unauthorized_client")
			oaCheckError(t, s.oaToken(t, oaRefreshCall(tk.client(), access.NewCredential(access.KindRefreshToken))), http.StatusBadRequest, "unauthorized_client")
			oaCheckError(t, s.oaToken(t, oaCall{auth: oaBasic(tk.APIKey, k.secret), form: cc}), http.StatusUnauthorized, "invalid_client")
			oaCheckError(t, s.oaToken(t, oaCall{auth: oaBasic(k.id, tk.Secret), form: cc}), http.StatusUnauthorized, "invalid_client")
			oaCheckError(t, s.oaToken(t, oaCall{auth: oaBasic(tk.APIKey, access.NewCredential(access.KindTrialSecret)), form: cc}), http.StatusUnauthorized, "invalid_client")
			// At its end the trial stops, and the token capped at it.
			clock.Add(5 * time.Minute)
			if r := s.oaPing(t, "baggage", oaBearer(tok)); r.status != http.StatusUnauthorized {
				t.Errorf("the trial's token at the trial's end: %s", r)
			}
			oaCheckError(t, s.oaToken(t, oaCall{auth: tk.client().basic(), form: cc}), http.StatusUnauthorized, "invalid_client")
		})

		t.Run("expires, even where cached", func(t *testing.T) {
			k := dev.newKey(t, op, "flightstatus")
			used, unused := dev.tryKey(t, k.keyID), dev.tryKey(t, k.keyID)
			if got := s.pingAs(t, used.APIKey); got != "" {
				t.Fatalf("a fresh trial: %s", got)
			}
			clock.Add(access.TrialKeyTTL - time.Second)
			if got := s.pingAs(t, used.APIKey); got != "" {
				t.Fatalf("a trial a second before its end: %s", got)
			}
			clock.Add(time.Second)
			// The guard's cache would keep the used one for an hour, the store the other.
			for name, tk := range map[string]trialKey{"cached": used, "never used": unused} {
				if got := s.pingAs(t, tk.APIKey); got != flightgraph.ECodeInvalidKey {
					t.Errorf("%s trial at its end: %q, want %s", name, got, flightgraph.ECodeInvalidKey)
				}
			}
			if got := s.pingAs(t, k.id); got != "" {
				t.Errorf("the key after its trials ended: %s", got)
			}
		})

		t.Run("ends with the key's secret, the key, its application", func(t *testing.T) {
			for _, c := range []struct {
				name string
				end  func(t *testing.T, k oaKey)
			}{
				{"rotateKeySecret", func(t *testing.T, k oaKey) {
					dev.do(t, `mutation($k: ID!) { rotateKeySecret(keyId: $k) { key { secret } } }`, map[string]any{"k": k.keyID}, nil)
				}},
				{"revokeKey", func(t *testing.T, k oaKey) { dev.revokeKey(t, k.keyID) }},
				{"deleteApplication", func(t *testing.T, k oaKey) {
					var me struct {
						Me struct {
							Applications []struct {
								ID   string
								Keys []struct{ ID string }
							}
						}
					}
					dev.do(t, `{ me { applications { id keys { id } } } }`, nil, &me)
					for _, app := range me.Me.Applications {
						for _, kk := range app.Keys {
							if kk.ID == k.keyID {
								dev.do(t, `mutation($a: ID!) { deleteApplication(id: $a) }`, map[string]any{"a": app.ID}, nil)
							}
						}
					}
				}},
			} {
				t.Run(c.name, func(t *testing.T) {
					clock.Add(time.Second) // a fresh second of the limits
					k := dev.newKey(t, op, "baggage")
					dev.addAPI(t, op, k.keyID, "flightstatus")
					tk := dev.tryKey(t, k.keyID)
					m := s.oaGrant(t, tk.client(), cc)
					tok, _ := m["access_token"].(string)
					if got := s.pingAs(t, tk.APIKey); got != "" {
						t.Fatalf("the trial before: %s", got)
					}
					if r := s.oaPing(t, "baggage", oaBearer(tok)); r.status != http.StatusOK {
						t.Fatalf("the trial's token before: %s", r)
					}
					c.end(t, k)
					if got := s.pingAs(t, tk.APIKey); got != flightgraph.ECodeInvalidKey {
						t.Errorf("the trial after %s: %q, want %s", c.name, got, flightgraph.ECodeInvalidKey)
					}
					if r := s.oaPing(t, "baggage", oaBearer(tok)); r.status != http.StatusUnauthorized {
						t.Errorf("the trial's token after %s: %s", c.name, r)
					}
					oaCheckError(t, s.oaToken(t, oaCall{auth: tk.client().basic(), form: cc}), http.StatusUnauthorized, "invalid_client")
				})
			}
			// After a rotation the key is the same key: a new trial works.
			k := dev.newKey(t, op, "flightstatus")
			dev.do(t, `mutation($k: ID!) { rotateKeySecret(keyId: $k) { key { secret } } }`, map[string]any{"k": k.keyID}, nil)
			if got := s.pingAs(t, dev.tryKey(t, k.keyID).APIKey); got != "" {
				t.Errorf("a trial minted after the rotation: %s", got)
			}
			// A revoked key mints none.
			dev.revokeKey(t, k.keyID)
			dev.fails(t, flightgraph.ECodeInvalidState, tryKeyMutation, map[string]any{"k": k.keyID})
		})

		t.Run("ends with its session", func(t *testing.T) {
			clock.Add(time.Second)
			k := dev.newKey(t, op, "baggage")
			dev.addAPI(t, op, k.keyID, "flightstatus")
			laptop := s.signIn(t, email, password)
			mine, others := laptop.tryKey(t, k.keyID), dev.tryKey(t, k.keyID)
			tok, _ := s.oaGrant(t, mine.client(), cc)["access_token"].(string)
			for _, tk := range []trialKey{mine, others} {
				if got := s.pingAs(t, tk.APIKey); got != "" {
					t.Fatalf("a trial before signOut: %s", got)
				}
			}
			laptop.do(t, `mutation { signOut }`, nil, nil)
			if got := s.pingAs(t, mine.APIKey); got != flightgraph.ECodeInvalidKey {
				t.Errorf("the trial of a session signed out: %q, want %s", got, flightgraph.ECodeInvalidKey)
			}
			if r := s.oaPing(t, "baggage", oaBearer(tok)); r.status != http.StatusUnauthorized {
				t.Errorf("the token of a trial of a session signed out: %s", r)
			}
			if got := s.pingAs(t, others.APIKey); got != "" {
				t.Errorf("another session's trial after signOut: %s", got)
			}
			if got := s.pingAs(t, k.id); got != "" {
				t.Errorf("the key after signOut: %s", got)
			}
			laptop.fails(t, flightgraph.ECodeNotSignedIn, tryKeyMutation, map[string]any{"k": k.keyID})

			// A trial lasts no longer than its session, whose end tryKey says.
			late := s.signIn(t, email, password)
			clock.Add(access.SessionTTL - 5*time.Minute)
			tk := late.tryKey(t, k.keyID)
			if want := clock.Now().Add(5 * time.Minute); !tk.ExpiresAt.Equal(want) {
				t.Errorf("a trial of a session with 5 minutes left expires at %s, want %s", tk.ExpiresAt, want)
			}
			if m := s.oaGrant(t, tk.client(), cc); m["expires_in"] != float64(300) {
				t.Errorf("its token expires_in %v, want 300", m["expires_in"])
			}
			clock.Add(5 * time.Minute)
			if got := s.pingAs(t, tk.APIKey); got != flightgraph.ECodeInvalidKey {
				t.Errorf("the trial at its session's end: %q", got)
			}
			dev = s.signIn(t, email, password) // the first session has ended too
			op = s.oaOperator(t)
		})

		t.Run("the oldest beyond five goes", func(t *testing.T) {
			clock.Add(time.Second)
			k := dev.newKey(t, op, "flightstatus")
			oldest := dev.tryKey(t, k.keyID)
			if got := s.pingAs(t, oldest.APIKey); got != "" {
				t.Fatalf("the first trial: %s", got)
			}
			var newer []trialKey
			for range access.TrialKeysPerKey {
				clock.Add(time.Millisecond)
				newer = append(newer, dev.tryKey(t, k.keyID))
			}
			if got := s.pingAs(t, oldest.APIKey); got != flightgraph.ECodeInvalidKey {
				t.Errorf("the oldest of %d trials: %q, want %s", access.TrialKeysPerKey+1, got, flightgraph.ECodeInvalidKey)
			}
			clock.Add(time.Second)
			for i, tk := range newer {
				if got := s.pingAs(t, tk.APIKey); got != "" {
					t.Errorf("trial %d of the newest %d: %s", i+1, access.TrialKeysPerKey, got)
				}
			}
			var n int
			if err := s.rawDB(t).QueryRow(`SELECT COUNT(*) FROM trial_keys WHERE key_id = `+placeholder(s.db, 1), k.keyID).Scan(&n); err != nil || n != access.TrialKeysPerKey {
				t.Errorf("%d trial keys stored for the key (%v), want %d", n, err, access.TrialKeysPerKey)
			}
		})

		t.Run("a session of the key's account only", func(t *testing.T) {
			clock.Add(time.Second)
			k := dev.newKey(t, op, "baggage")
			other := s.oaSignUp(t, "other.trial@example.com")
			other.fails(t, flightgraph.ECodeNotFound, tryKeyMutation, map[string]any{"k": k.keyID})
			tk := dev.tryKey(t, k.keyID)
			tok, _ := s.oaGrant(t, k.oaClient, cc)["access_token"].(string)
			for name, h := range map[string]map[string]string{
				"anonymous":           nil,
				"the key":             {"api-key": k.id},
				"a trial key":         {"api-key": tk.APIKey},
				"a key token":         oaBearer(tok),
				"the trial as bearer": oaBearer(tk.APIKey),
			} {
				resp := s.portalAs(t, h, tryKeyMutation, map[string]any{"k": k.keyID})
				if len(resp.Errors) == 0 {
					t.Errorf("%s minted a trial key: %s", name, resp.Data)
					continue
				}
				if code := resp.Errors[0].Extensions["code"]; code != flightgraph.ECodeNotSignedIn {
					t.Errorf("%s: %v, want %s", name, code, flightgraph.ECodeNotSignedIn)
				}
			}
		})

		t.Run("garbage costs no query", func(t *testing.T) {
			tk := dev.tryKey(t, dev.newKey(t, op, "flightstatus").keyID)
			for name, bad := range map[string]string{
				"a character changed": tk.APIKey[:len(tk.APIKey)-8] + oaFlip(tk.APIKey[len(tk.APIKey)-8]) + tk.APIKey[len(tk.APIKey)-7:],
				"cut short":           tk.APIKey[:len(tk.APIKey)-1],
				"a key's prefix":      access.KindAPIKey + strings.TrimPrefix(tk.APIKey, access.KindTrialKey),
			} {
				if got := s.pingAs(t, bad); got != flightgraph.ECodeInvalidKey {
					t.Errorf("%s: %q, want %s", name, got, flightgraph.ECodeInvalidKey)
				}
				if n := s.queries.Load(); n != 0 {
					t.Errorf("%s cost %d SQL round trips, want none", name, n)
				}
			}
			if got := s.pingAs(t, access.NewCredential(access.KindTrialKey)); got != flightgraph.ECodeInvalidKey {
				t.Errorf("an unknown trial key: %q", got)
			}
		})

		t.Run("audited, never stored or logged in plaintext", func(t *testing.T) {
			k := dev.newKey(t, op, "baggage")
			tk := dev.tryKey(t, k.keyID)
			tok, _ := s.oaGrant(t, tk.client(), cc)["access_token"].(string)
			var audit struct {
				AuditLog []struct{ Action, TargetID, Before, After string }
			}
			op.do(t, `{ auditLog(first: 200) { action targetId before after } }`, nil, &audit)
			found := false
			for _, e := range audit.AuditLog {
				var after struct {
					KeyID     string
					ExpiresAt time.Time
				}
				if e.Action == "key.trial" && e.TargetID == k.keyID && json.Unmarshal([]byte(e.After), &after) == nil {
					found = found || after.KeyID == k.keyID && after.ExpiresAt.Equal(tk.ExpiresAt)
				}
				for _, sec := range []string{tk.APIKey, tk.Secret, access.HashCredential(tk.Secret)} {
					if strings.Contains(e.Before+e.After, sec) {
						t.Errorf("the audit entry %s holds a trial's secret or its hash (%.8s…)", e.Action, sec)
					}
				}
			}
			if !found {
				t.Errorf("no key.trial entry for the key with the trial's expiry")
			}
			dump := s.dumpDB(t)
			for _, sec := range []string{tk.APIKey, tk.Secret, tok, strings.TrimPrefix(tk.Secret, access.KindTrialSecret)} {
				if strings.Contains(dump, sec) {
					t.Errorf("a trial's secret (%.8s…) is stored in plaintext", sec)
				}
				if strings.Contains(s.log.String(), sec) {
					t.Errorf("a trial's secret (%.8s…) is in the log", sec)
				}
			}
			if !strings.Contains(dump, access.HashCredential(tk.Secret)) {
				t.Error("the dump lacks the trial secret's hash: it does not see trial_keys")
			}
		})
	})
}

// addAPI adds an API to one of the user's keys and has op approve it.
func (p *portal) addAPI(t testing.TB, op *portal, keyID, api string) {
	t.Helper()
	var add struct{ AddAPIToApplication struct{ ID string } }
	p.do(t, `mutation($k: ID!, $api: String!) { addApiToApplication(input: {keyId: $k, api: $api}) { id } }`, map[string]any{"k": keyID, "api": api}, &add)
	op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { id } }`, map[string]any{"id": add.AddAPIToApplication.ID}, nil)
}

// subscriptionsOf returns the ids of the subscriptions of one of the user's keys.
func subscriptionsOf(t testing.TB, p *portal, keyID string) []string {
	t.Helper()
	var me struct {
		Me struct {
			Applications []struct {
				Keys []struct {
					ID            string
					Subscriptions []struct{ ID string }
				}
			}
		}
	}
	p.do(t, `{ me { applications { keys { id subscriptions { id } } } } }`, nil, &me)
	var out []string
	for _, app := range me.Me.Applications {
		for _, k := range app.Keys {
			if k.ID == keyID {
				for _, sub := range k.Subscriptions {
					out = append(out, sub.ID)
				}
			}
		}
	}
	return out
}

// subscriptionOf returns the id of the one subscription of one of the user's keys.
func subscriptionOf(t testing.TB, p *portal, keyID string) string {
	t.Helper()
	subs := subscriptionsOf(t, p, keyID)
	if len(subs) != 1 {
		t.Fatalf("key %s has subscriptions %v, want one", keyID, subs)
	}
	return subs[0]
}
