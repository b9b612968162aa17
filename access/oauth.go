package access

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Token lifetimes per grant; the zero value of TokenService uses these.
const (
	DefaultClientCredentialsTTL = time.Hour
	DefaultPasswordTTL          = 15 * time.Minute
	DefaultRefreshTTL           = 30 * 24 * time.Hour
)

// TokenService is the OAuth 2.0 token endpoint (RFC 6749 §3.2, spec 4.1 and 5.2): client
// credentials, resource owner password credentials and refresh tokens with rotation.
type TokenService struct {
	Store  flightgraph.AccessStore
	Hasher PasswordHasher
	// Hashes bounds the password hashes computed at once; share one with the portal's Service.
	Hashes *HashGate
	// Lockout counts password grant attempts per customer user name; the password grant refuses
	// to work without one.
	Lockout   Lockout
	Now       func() time.Time
	Log       *slog.Logger
	Lifetimes TokenLifetimes
	// Revoked, when set, is told of every token family revoked, so that caches drop its tokens.
	Revoked func(familyID string)
	// Limiter, when set, holds the grants of each key to the uncharged budgets of its account
	// and client address (Uncharged, DefaultUncharged's where zero), as the guard holds its
	// portal calls: every grant writes tokens to the database.
	Limiter   Limiter
	Uncharged UnchargedLimits
	// Refusals bounds the work done for refused token requests per client address, as the
	// guard's does for its requests (share the guard's); nil bounds nothing.
	Refusals *Refusals
}

// TokenLifetimes set how long tokens live, per grant; zero means the default.
type TokenLifetimes struct {
	ClientCredentialsTTL, PasswordTTL, RefreshTTL time.Duration
}

// oauthError is an RFC 6749 §5.2 error.
type oauthError struct {
	Status      int    `json:"-"`
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
	RetryAfter  int    `json:"-"` // seconds, sent as Retry-After when positive
}

// errWrongPassword is the password grant's failure to match, answered as invalid_grant.
var errWrongPassword = errors.New("access: wrong user name or password")

func oerr(status int, code, format string, args ...any) *oauthError {
	return &oauthError{Status: status, Code: code, Description: fmt.Sprintf(format, args...)}
}

// tokenResponse carries every field of the spec's two shapes; empty ones are left out.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ReturnType   string `json:"return_type,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	ExpiresIn    int    `json:"expires_in"`
	CustomerID   string `json:"customerId,omitempty"`
	Scope        string `json:"scope,omitempty"`
}

// ServeHTTP answers POST /oauthcust/oauth/token.
func (t *TokenService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	resp, oe := t.handle(r)
	if oe != nil {
		if oe.Status == http.StatusUnauthorized {
			// RFC 6749 §5.2: a 401 names the authentication scheme the client should use.
			h.Set("WWW-Authenticate", `Basic realm="flightgraph", charset="UTF-8"`)
		}
		if oe.Status == http.StatusMethodNotAllowed {
			h.Set("Allow", http.MethodPost)
		}
		if oe.RetryAfter > 0 {
			h.Set("Retry-After", strconv.Itoa(oe.RetryAfter))
		}
		writeJSON(w, oe.Status, oe)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (t *TokenService) handle(r *http.Request) (resp *tokenResponse, oe *oauthError) {
	ctx := r.Context()
	var (
		hash  string // the client's, once the form is read
		known bool   // the form was read
	)
	defer func() {
		if resp != nil {
			// An issued token is one that authenticated lately: its first call needs no place.
			t.Refusals.Authenticated(CredentialHash(resp.AccessToken))
		}
	}()
	// The refusals bound the work done for refused requests, as the guard's do. A request refused
	// before its client is known (a bounded read of its form) counts against its address, and
	// nothing holds a client back before its credentials are read; its client is looked up (a
	// database read, every time) only with a place in the address's second, given back once it
	// authenticated, unless the client authenticated lately, when its own refusals are checked
	// instead. What befalls an authenticated client's grant counts nowhere here: the lockout and
	// the uncharged limits bound it.
	address := clientAddress(r)
	defer func() {
		if oe != nil && !known {
			t.Refusals.CountAddress(address) // refused before its client was known
		}
	}()
	if r.Method != http.MethodPost {
		return nil, oerr(http.StatusMethodNotAllowed, "invalid_request", "the token endpoint takes POST")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, oerr(http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 64<<10))
	if err != nil {
		// Too large (413), too slow (408) or cut off (400): the client's fault, said as such.
		fe := flightgraph.BodyError(err)
		return nil, oerr(flightgraph.Lookup(fe.Code).Status, "invalid_request", "%s", fe.Message)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err := r.ParseForm(); err != nil {
		return nil, oerr(http.StatusBadRequest, "invalid_request", "the body is not a valid form")
	}
	form := r.PostForm
	if len(r.URL.Query()) > 0 {
		return nil, oerr(http.StatusBadRequest, "invalid_request", "parameters belong in the body, not the URL")
	}
	for name, vs := range form {
		if len(vs) > 1 {
			return nil, oerr(http.StatusBadRequest, "invalid_request", "parameter %s is repeated", name)
		}
	}
	hash, known = clientHash(r, form), true
	// The client is looked up with a place (Refusals.Reserve).
	done, refused := t.Refusals.Reserve(ctx, address, hash)
	if refused != nil {
		return nil, tooMany(refused.RetryAfter, refused.Message)
	}
	authenticated := false
	defer func() {
		if !authenticated {
			if oe != nil && oe.Status == http.StatusUnauthorized {
				t.Refusals.Failed(hash) // the client's credentials were refused
			}
			done(oe != nil) // refused, or abandoned, before the client authenticated
		}
	}()
	ka, oe := t.client(ctx, r, form)
	if oe != nil {
		return nil, oe
	}
	authenticated = true
	done(false)
	t.Refusals.Authenticated(hash)
	if t.Limiter != nil {
		// A grant is an uncharged call of the key's, held to the budgets of the guard's.
		caller := &flightgraph.Caller{Kind: flightgraph.CallerKey, KeyID: ka.Key.ID, Account: ka.Account, Products: ka.Products}
		if err := NotApprovedForAny(caller); err != nil {
			return nil, oerr(http.StatusBadRequest, "unauthorized_client", "the key is approved for no API yet")
		}
		d, err := admitBudgets(ctx, t.Limiter, t.Uncharged.budgets(caller, address))
		if err != nil {
			return nil, t.internal(ctx, err)
		}
		if !d.Allowed {
			return nil, tooMany(d.RetryAfter, fmt.Sprintf("too many token requests for this key, its account or this address; retry after %d s", flightgraph.Seconds(d.RetryAfter)))
		}
	}
	grant := flightgraph.Grant(form.Get("grant_type"))
	switch grant {
	case "":
		return nil, oerr(http.StatusBadRequest, "invalid_request", "grant_type is required")
	case flightgraph.GrantClientCredentials, flightgraph.GrantPassword, flightgraph.GrantRefreshToken:
	default:
		return nil, oerr(http.StatusBadRequest, "unsupported_grant_type", "grant_type %q is not supported", grant)
	}
	if ka.Trial() && grant != flightgraph.GrantClientCredentials {
		// A trial key stands for its key on the portal's Try it page, for calls of the key's
		// own: no customer's password goes through it, and it issues no refresh token that could
		// outlive it.
		return nil, oerr(http.StatusBadRequest, "unauthorized_client", "a trial key takes the client_credentials grant only")
	}
	switch grant {
	case flightgraph.GrantClientCredentials:
		return t.clientCredentials(ctx, ka, form)
	case flightgraph.GrantPassword:
		return t.password(ctx, ka, form)
	}
	return t.refresh(ctx, ka, form)
}

// clientHash is the hash the refusals know a token request's client by: its id and secret as
// client authenticates them, from HTTP Basic once decoded or from the body; "" when it sends none.
func clientHash(r *http.Request, form url.Values) string {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	if id == "" && secret == "" {
		return ""
	}
	return CredentialHash(id, secret)
}

// tooMany is a 429 with the wait: Retry-After tells the HTTP layer to wait. RFC 6749 has no
// error for it, and invalid_request is the one that does not send a client back to its user.
func tooMany(wait time.Duration, description string) *oauthError {
	return &oauthError{Status: http.StatusTooManyRequests, Code: "invalid_request", RetryAfter: flightgraph.Seconds(wait), Description: description}
}

// client authenticates the client: HTTP Basic (RFC 6749 §2.3.1) or, equally allowed, client_id
// and client_secret in the body, never both.
func (t *TokenService) client(ctx context.Context, r *http.Request, form url.Values) (*flightgraph.KeyAccess, *oauthError) {
	id, secret, basic := r.BasicAuth()
	if auth := r.Header.Get("Authorization"); auth != "" && !basic {
		return nil, &oauthError{Status: http.StatusUnauthorized, Code: "invalid_client", Description: "client authentication must use HTTP Basic"}
	}
	_, inBody := form["client_secret"]
	if basic && (inBody || form.Has("client_id")) {
		return nil, oerr(http.StatusBadRequest, "invalid_request", "use one client authentication method, not two")
	}
	if basic {
		// The id and secret are form-encoded before Basic encoding (RFC 6749 §2.3.1).
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return nil, &oauthError{Status: http.StatusUnauthorized, Code: "invalid_client", Description: "malformed client credentials"}
		}
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
		if id == "" && secret == "" {
			return nil, &oauthError{Status: http.StatusUnauthorized, Code: "invalid_client", Description: "client authentication is required: HTTP Basic with the key and its secret"}
		}
	}
	bad := &oauthError{Status: http.StatusUnauthorized, Code: "invalid_client", Description: "unknown client or wrong secret"}
	var (
		ka  *flightgraph.KeyAccess
		err error
	)
	switch idKind, secretKind := CredentialKind(id), CredentialKind(secret); {
	case idKind == KindAPIKey && secretKind == KindSecret:
		ka, err = t.Store.KeyAccess(ctx, HashCredential(id))
	case idKind == KindTrialKey && secretKind == KindTrialSecret:
		// A trial key authenticates as its key, with the trial's secret (TrialKeyAccess).
		ka, err = t.Store.TrialKeyAccess(ctx, HashCredential(id), t.Now())
	default:
		return nil, bad
	}
	if err != nil {
		if errIsNotFound(err) {
			return nil, bad
		}
		return nil, t.internal(ctx, err)
	}
	if !SameHash(HashCredential(secret), ka.Key.SecretHash) || ka.Key.Status != flightgraph.KeyActive {
		return nil, bad
	}
	return ka, nil
}

// internal answers a failure that is not the client's, as flightgraph.Public tells it: the code's
// status (the database down is 502, as on every edge) and, since RFC 6749 knows no codes of ours,
// server_error with the message.
func (t *TokenService) internal(ctx context.Context, err error) *oauthError {
	fe := flightgraph.Public(ctx, t.Log, err)
	desc := fe.Message // an internal error's quotes the request id
	if fe.Code != flightgraph.ECodeInternal {
		desc = fmt.Sprintf("%s; quote request id %s", fe.Message, flightgraph.RequestIDFromContext(ctx))
	}
	oe := oerr(flightgraph.Lookup(fe.Code).Status, "server_error", "%s", desc)
	oe.RetryAfter = fe.RetryAfterSeconds()
	return oe
}

// scope returns the products a token of grant may call: those the key is approved for, that
// take OAuth and allow the grant, narrowed to the requested scope.
func scope(ka *flightgraph.KeyAccess, grant flightgraph.Grant, requested string) ([]string, *oauthError) {
	var allowed []string
	for slug := range ka.Products {
		if p := product(slug); p != nil && p.Auth == flightgraph.AuthOAuth && p.AllowsGrant(grant) && p.VisibleTo(ka.Account.Role) {
			allowed = append(allowed, slug)
		}
	}
	slices.Sort(allowed)
	if len(allowed) == 0 {
		return nil, oerr(http.StatusBadRequest, "unauthorized_client", "the key has no approved OAuth API that accepts the %s grant", grant)
	}
	if strings.TrimSpace(requested) == "" {
		return allowed, nil
	}
	var out []string
	for _, s := range strings.Fields(requested) {
		if !slices.Contains(allowed, s) {
			return nil, oerr(http.StatusBadRequest, "invalid_scope", "scope %q is not an API this key may call with the %s grant", s, grant)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}

func ttl(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (t *TokenService) clientCredentials(ctx context.Context, ka *flightgraph.KeyAccess, form url.Values) (*tokenResponse, *oauthError) {
	sc, oe := scope(ka, flightgraph.GrantClientCredentials, form.Get("scope"))
	if oe != nil {
		return nil, oe
	}
	access := NewCredential(KindAccessToken)
	now := t.Now().UTC()
	expires, family := now.Add(ttl(t.Lifetimes.ClientCredentialsTTL, DefaultClientCredentialsTTL)), NewID("fam")
	if ka.Trial() {
		// A trial key's token ends with it at the latest, and is deleted with it (its family).
		if ka.TrialExpiresAt.Before(expires) {
			expires = ka.TrialExpiresAt
		}
		family = flightgraph.TrialFamily(ka.TrialHash)
		if !now.Before(expires) { // it ended since client read it
			return nil, &oauthError{Status: http.StatusUnauthorized, Code: "invalid_client", Description: "unknown client or wrong secret"}
		}
	}
	err := t.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if ka.Trial() {
			// Held, as by SignOut, RotateKeySecret and RevokeKey, which delete trials with their
			// tokens: a trial deleted since client read it must not get a token that nothing
			// will delete, which would outlive the sign-out that ended the trial.
			if err := tx.LockAccount(ctx, ka.Account.ID); err != nil {
				return err
			}
			if _, err := tx.TrialKeyAccess(ctx, ka.TrialHash, now); err != nil {
				return err
			}
		}
		return tx.CreateToken(ctx, &flightgraph.Token{Hash: HashCredential(access), Kind: flightgraph.TokenAccess, KeyID: ka.Key.ID,
			Grant: flightgraph.GrantClientCredentials, FamilyID: family, Scope: strings.Join(sc, " "), CreatedAt: now, ExpiresAt: expires})
	})
	if errIsNotFound(err) { // the trial ended since client read it
		return nil, &oauthError{Status: http.StatusUnauthorized, Code: "invalid_client", Description: "unknown client or wrong secret"}
	}
	if err != nil {
		return nil, t.internal(ctx, err)
	}
	// Whole seconds, rounded down: the token never outlives what expires_in says.
	return &tokenResponse{TokenType: "bearer", ReturnType: "json", AccessToken: access, ExpiresIn: int(expires.Sub(now) / time.Second), Scope: strings.Join(sc, " ")}, nil
}

func (t *TokenService) password(ctx context.Context, ka *flightgraph.KeyAccess, form url.Values) (*tokenResponse, *oauthError) {
	user, pw := form.Get("username"), form.Get("password")
	if user == "" || pw == "" {
		return nil, oerr(http.StatusBadRequest, "invalid_request", "the password grant needs username and password")
	}
	sc, oe := scope(ka, flightgraph.GrantPassword, form.Get("scope"))
	if oe != nil {
		return nil, oe
	}
	bad := oerr(http.StatusBadRequest, "invalid_grant", "wrong user name or password")
	// The attempt counts against the user name once the client is authenticated (a stranger
	// without a key cannot lock customers out) and before the customer is looked up. The user
	// name is counted exactly as sent, since it is looked up exactly as sent.
	c, err := signIn(ctx, t.Lockout, t.Log, SignInKey(SignInCustomer, user), func() (*flightgraph.Customer, error) {
		return verify(ctx, t.Hashes, t.Hasher, user, pw, errWrongPassword, func(user string) (*flightgraph.Customer, string, error) {
			c, err := t.Store.CustomerByUsername(ctx, user)
			if err != nil {
				return nil, "", err
			}
			return c, c.PasswordHash, nil
		})
	})
	var fe *flightgraph.Error
	switch {
	case errors.Is(err, errWrongPassword):
		return nil, bad
	case errors.As(err, &fe) && fe.Code == flightgraph.ECodeTooManySignIns:
		// RFC 6749 has no error code for this. invalid_grant is the closest: the resource owner
		// credentials cannot be used now, and clients treat it as "ask the user again", not as
		// their own fault (invalid_client, invalid_request) or a server failure to retry at once
		// (server_error). 429 and Retry-After tell the HTTP layer how long to wait; the body is
		// the same for every user name, known or not.
		return nil, &oauthError{Status: http.StatusTooManyRequests, Code: "invalid_grant", RetryAfter: fe.RetryAfterSeconds(),
			Description: fmt.Sprintf("too many failed attempts for this user name; retry after %d s", fe.RetryAfterSeconds())}
	case err != nil:
		return nil, t.internal(ctx, err)
	}
	var resp *tokenResponse
	err = t.Store.InTx(ctx, func(tx flightgraph.AccessTx) (err error) {
		resp, err = t.issuePair(ctx, tx, ka.Key.ID, c.ID, NewID("fam"), sc)
		return err
	})
	if err != nil {
		return nil, t.internal(ctx, err)
	}
	return resp, nil
}

// issuePair issues an access token and a refresh token of one family inside tx.
func (t *TokenService) issuePair(ctx context.Context, tx flightgraph.AccessTx, keyID, customerID, family string, sc []string) (*tokenResponse, error) {
	life := ttl(t.Lifetimes.PasswordTTL, DefaultPasswordTTL)
	access, refresh := NewCredential(KindAccessToken), NewCredential(KindRefreshToken)
	now := t.Now().UTC()
	for _, tk := range []*flightgraph.Token{
		{Hash: HashCredential(access), Kind: flightgraph.TokenAccess, ExpiresAt: now.Add(life)},
		{Hash: HashCredential(refresh), Kind: flightgraph.TokenRefresh, ExpiresAt: now.Add(ttl(t.Lifetimes.RefreshTTL, DefaultRefreshTTL))},
	} {
		tk.KeyID, tk.CustomerID, tk.Grant, tk.FamilyID, tk.Scope, tk.CreatedAt = keyID, customerID, flightgraph.GrantPassword, family, strings.Join(sc, " "), now
		if err := tx.CreateToken(ctx, tk); err != nil {
			return nil, err
		}
	}
	return &tokenResponse{AccessToken: access, TokenType: "bearer", RefreshToken: refresh, ExpiresIn: int(life.Seconds()), CustomerID: customerID, Scope: strings.Join(sc, " ")}, nil
}

// refresh rotates a refresh token: the old one is used up, a new pair of the same family is
// issued. A refresh token presented again after its use means it leaked or raced: the whole
// family is revoked (OAuth 2.0 Security BCP, refresh token rotation).
func (t *TokenService) refresh(ctx context.Context, ka *flightgraph.KeyAccess, form url.Values) (*tokenResponse, *oauthError) {
	raw := form.Get("refresh_token")
	if raw == "" {
		return nil, oerr(http.StatusBadRequest, "invalid_request", "refresh_token is required")
	}
	bad := oerr(http.StatusBadRequest, "invalid_grant", "the refresh token is invalid, expired or revoked")
	if CredentialKind(raw) != KindRefreshToken {
		return nil, bad
	}
	hash := HashCredential(raw)
	old, err := t.Store.Token(ctx, hash)
	if errIsNotFound(err) {
		return nil, bad
	} else if err != nil {
		return nil, t.internal(ctx, err)
	}
	now := t.Now().UTC()
	if old.Kind != flightgraph.TokenRefresh || old.KeyID != ka.Key.ID || old.RevokedAt != nil || !now.Before(old.ExpiresAt) {
		return nil, bad
	}
	sc, oe := scope(ka, old.Grant, form.Get("scope"))
	if oe != nil {
		return nil, oe
	}
	// A narrower scope may be asked for; never a wider one than the original grant's.
	for _, s := range sc {
		if !slices.Contains(strings.Fields(old.Scope), s) {
			return nil, oerr(http.StatusBadRequest, "invalid_scope", "scope %q exceeds the original grant", s)
		}
	}
	// Using up the old token and issuing the new pair is one transaction: a concurrent refresh
	// waits for it, finds the token used, and then revokes the family including the new pair.
	var (
		won  bool
		resp *tokenResponse
	)
	err = t.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if won, err = tx.UseRefreshToken(ctx, hash, now); err != nil || !won {
			return err
		}
		resp, err = t.issuePair(ctx, tx, ka.Key.ID, old.CustomerID, old.FamilyID, sc)
		return err
	})
	if err != nil {
		return nil, t.internal(ctx, err)
	}
	if !won {
		if err := t.Store.InTx(ctx, func(tx flightgraph.AccessTx) error { return tx.RevokeTokenFamily(ctx, old.FamilyID, now) }); err != nil {
			return nil, t.internal(ctx, err)
		}
		if t.Revoked != nil {
			t.Revoked(old.FamilyID)
		}
		if t.Log != nil {
			t.Log.WarnContext(ctx, "refresh token reused: family revoked", "key", ka.Key.ID, "family", old.FamilyID)
		}
		return nil, bad
	}
	return resp, nil
}
