package access

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flightgraph/flightgraph"
)

// DefaultCacheTTL is how long the guard trusts what it read about a key or token. Changes made
// through this process drop the entry at once; other replicas drop it at once too while they
// follow the access feed (Guard.Changes; see Follow), and within this time otherwise.
const DefaultCacheTTL = 5 * time.Second

// Guard is the one access middleware of both edges: it authenticates the call, puts the Caller
// in the context, authorizes the products the call touches, applies their limits and writes the
// limit headers. Handlers and resolvers never parse credentials.
type Guard struct {
	Store    flightgraph.AccessStore
	Limiter  Limiter
	Usage    *UsageRecorder
	Now      func() time.Time
	Log      *slog.Logger
	CacheTTL time.Duration
	// Changes, when set, tells the guard of the changes to access that other processes commit;
	// the cache is trusted only while it listens (see Follow).
	Changes flightgraph.AccessFeed
	// Uncharged bounds the calls that charge no API (see Admit); zero fields take
	// DefaultUncharged's.
	Uncharged UnchargedLimits
	// Refusals bounds the work done for refused requests, per client address (see
	// Authenticated); nil bounds nothing.
	Refusals *Refusals
	// Heavy bounds the heavy calls (flightgraph.Weight.Heavy) run at once; a heavy call takes
	// one of its slots before it is charged (see Admit). Nil refuses every heavy call: heavy
	// work never runs unbounded.
	Heavy *HeavySlots

	keys   sync.Map // key hash, or "id:" and key id → *cached
	tokens sync.Map // access token hash → *cached
	stores atomic.Int64
	// epoch counts the forgets, so that an entry read from the store before a forget is not
	// cached after it.
	epoch  atomic.Uint64
	feedUp atomic.Bool // Changes listens
}

// sweepEvery is how many cache fills pass between sweeps of stale entries: without them, every
// token ever used would stay in memory.
const sweepEvery = 1024

// lookup returns the entry cached under k in m while it is fresh and the cache is trusted, and
// the epoch to remember what is read instead with.
func (g *Guard) lookup(m *sync.Map, k string, now time.Time) (*cached, uint64) {
	epoch := g.epoch.Load()
	if g.Changes != nil && !g.feedUp.Load() {
		// The feed is down: a change committed by another replica may go unheard, so the
		// store is read on every call.
		return nil, epoch
	}
	if v, ok := m.Load(k); ok && now.Before(v.(*cached).expires) {
		return v.(*cached), epoch
	}
	return nil, epoch
}

// remember caches c under k in m, unless something was forgotten since epoch, when c was read
// (it may predate the change forgotten), and now and then drops the entries gone stale.
func (g *Guard) remember(m *sync.Map, k string, c *cached, now time.Time, epoch uint64) {
	if g.epoch.Load() != epoch || g.Changes != nil && !g.feedUp.Load() {
		return
	}
	m.Store(k, c)
	if g.epoch.Load() != epoch {
		// A forget ran meanwhile and may have looked before c was stored.
		m.CompareAndDelete(k, c)
		return
	}
	if g.stores.Add(1)%sweepEvery != 0 {
		return
	}
	for _, cache := range []*sync.Map{&g.keys, &g.tokens} {
		cache.Range(func(k, v any) bool {
			if !now.Before(v.(*cached).expires) {
				cache.Delete(k)
			}
			return true
		})
	}
}

// cached is what the guard read about a credential, and until when it trusts it.
type cached struct {
	access   *flightgraph.KeyAccess
	token    *flightgraph.Token
	expires  time.Time
	scopeSet map[string]bool
}

// Classifier tells what a request is charged (a REST route's product and weight). An error is
// answered as it is.
type Classifier func(r *http.Request) (Charge, error)

// Charge is what one call is charged: the products it calls, the calls it costs each of them, and
// whether it is heavy work (flightgraph.Weight).
type Charge struct {
	Products []string
	Calls    map[string]int // by product; absent or below 1: one call
	Heavy    bool
}

// Light is the Charge of one light call of each of products.
func Light(products ...string) Charge { return Charge{Products: products} }

// Failure writes an access error in the edge's own shape; the guard has set the status headers
// (WWW-Authenticate, Retry-After, limits) already.
type Failure func(w http.ResponseWriter, r *http.Request, err error)

// Pass is the guard's record of one request: who calls, why their credential failed if it did,
// and the products admitted so far. Authenticated puts it in the request's context, Admit fills
// it before any work starts, and Require reads it where the work is done: the second line, which
// refuses whatever the first line did not admit.
type Pass struct {
	Caller  *flightgraph.Caller
	AuthErr error // the credential's error, which matters only for calls that need it
	// bearer is the caller of the OAuth access token that came with the api-key (Caller), of the
	// same application: OAuth APIs are admitted with it, API-key APIs with Caller (callerFor).
	bearer *flightgraph.Caller
	header http.Header
	client string // the client's address (host), which names anonymous callers
	// creds are the request's credential headers, which a long-lived request (a subscription)
	// is checked again with (StillAdmitted).
	creds http.Header
	// refusals and hash are the guard's refusals' windows and the credential's hash there, in
	// which each operation of a long-lived connection takes a place of its own (ForOperation).
	refusals *Refusals
	hash     string

	mu       sync.Mutex
	admitted map[string]bool
	passed   bool // Admit let a call through: of products, or uncharged
	// onAdmit, when set, is called once Admit let a call through: its work is no refusal.
	onAdmit func()
	// refused is set by Refused: the request is a refusal whatever its answer's status.
	refused bool
	// heavy is the request's hold on a heavy-work slot, which the domain's heavy work reads
	// from the context; leave gives the slot back (release).
	heavy *flightgraph.HeavyWork
	leave func()
	// decisions are the limiter's decisions of the call, by product, admitted or refused.
	decisions map[string]Decision
	// current holds the callers a later check of the credential found (StillAdmitted), with
	// their plans as they are then: a long-lived request (a WebSocket connection) is admitted
	// and bounded by them, not by the plans its upgrade read.
	current atomic.Pointer[passCallers]
}

type passCallers struct{ caller, bearer *flightgraph.Caller }

// callers returns the pass's caller and bearer: as the last check found them, else as the
// request authenticated them.
func (p *Pass) callers() (caller, bearer *flightgraph.Caller) {
	if c := p.current.Load(); c != nil {
		return c.caller, c.bearer
	}
	return p.Caller, p.bearer
}

// Decisions returns the limiter's decisions of the request's call, by product (see Admit).
func (p *Pass) Decisions() map[string]Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.decisions)
}

// release gives back the heavy-work slot the request holds, if it holds one: its work is over.
func (p *Pass) release() {
	p.mu.Lock()
	leave := p.leave
	p.leave = nil
	p.mu.Unlock()
	if leave != nil {
		p.heavy.Hold(false)
		leave()
	}
}

// served reports whether Admit let the request's call through.
func (p *Pass) served() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.passed
}

// NewPass returns the pass of a caller whose credential failed with authErr (nil if it did not);
// Admit writes the limit and challenge headers on header.
func NewPass(caller *flightgraph.Caller, authErr error, header http.Header) *Pass {
	if header == nil {
		header = http.Header{}
	}
	return &Pass{Caller: caller, AuthErr: authErr, header: header, heavy: flightgraph.NewHeavyWork()}
}

type passKey struct{}

// WithPass returns ctx carrying p, its caller and its hold on heavy work; the caller is noted in
// the request's record (flightgraph.Record), if it has one.
func WithPass(ctx context.Context, p *Pass) context.Context {
	flightgraph.RecordFromContext(ctx).NoteCaller(p.Caller)
	ctx = flightgraph.WithHeavyWork(flightgraph.WithCaller(ctx, p.Caller), p.heavy)
	return context.WithValue(ctx, passKey{}, p)
}

// PassFromContext returns the request's pass, or nil when the guard did not authenticate it.
func PassFromContext(ctx context.Context) *Pass {
	p, _ := ctx.Value(passKey{}).(*Pass)
	return p
}

// Authenticated authenticates every request and puts its Pass, its caller and its client address
// (flightgraph.ClientAddressFromContext) in the context. It
// decides nothing else, except that a request whose credential could not be checked because a
// backing service failed (the database did not answer) is refused at once with fail: it must not
// go on as anonymous, which would tell a signed-in user to sign in again.
//
// The guard's Refusals bound the work done for refused requests (see Refusals): a request takes
// a place in its client address's second before any work unless its credential authenticated
// lately, and gives it back once it authenticated or, without a credential, was served; a
// credential that authenticated lately is held to its own refusals instead, checked before it is
// looked up. A preflight (OPTIONS) is answered as anonymous without
// looking at its credentials, which browsers do not send on one.
func (g *Guard) Authenticated(fail Failure) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			client := clientAddress(r)
			// Once, for whatever bounds work per client downstream (the mail budget).
			r = r.WithContext(flightgraph.WithClientAddress(r.Context(), client))
			if r.Method == http.MethodOptions {
				g.serve(w, r, next, client, &flightgraph.Caller{Kind: flightgraph.CallerAnonymous}, nil)
				return
			}
			sw := statusOf(w)
			pass, end, err := g.enter(r, client, sw.Header())
			if err != nil {
				fail(w, r, err)
				return
			}
			defer pass.release()
			next.ServeHTTP(sw, r.WithContext(WithPass(r.Context(), pass)))
			end(sw.Status)
		})
	}
}

// enter authenticates the credential of r's headers (api-key, Authorization) for a request of
// client, and returns the request's pass and end, to call with the status it answered once its
// work is over (which settles its place; pass.release gives back its heavy-work slot); or the
// error that refuses it at once (its refusals' window is full, or the credential could not be
// checked because a backing service failed). A credential that is
// refused gives a pass of an anonymous caller with the credential's error (AuthErr). header is
// where Admit writes the limit and challenge headers.
//
// One place is held for the request's work: in its credential's window when the credential
// authenticated lately, else in its client address's (see Authenticated).
func (g *Guard) enter(r *http.Request, client string, header http.Header) (*Pass, func(status int), error) {
	hash := credentialHash(r)
	recent := g.Refusals.Recent(hash)
	done, refusedNow := g.Refusals.Reserve(r.Context(), client, hash)
	if refusedNow != nil {
		return nil, nil, refusedNow
	}
	creds := http.Header{"Api-Key": r.Header.Values("api-key"), "Authorization": r.Header.Values("Authorization")}
	caller := &flightgraph.Caller{Kind: flightgraph.CallerAnonymous}
	var bearer *flightgraph.Caller
	if hash != "" {
		var authErr error
		if caller, bearer, authErr = g.authenticate(r); authErr != nil {
			// A lookup that failed, or was abandoned, keeps its place. A credential
			// refused is no longer one that authenticated lately; one that could not be
			// checked still is, and must not go on as anonymous, which would tell a
			// signed-in user to sign in again.
			done(true)
			if flightgraph.Lookup(flightgraph.ErrorCode(authErr)).Status >= http.StatusInternalServerError {
				return nil, nil, authErr
			}
			g.Refusals.Failed(hash)
			pass := NewPass(caller, authErr, header)
			pass.client, pass.creds, pass.refusals, pass.hash = client, creds, g.Refusals, hash
			return pass, func(int) {}, nil
		}
		if !recent {
			// It authenticated: its address's place is free for the next, and its own
			// window holds its work from here.
			done(false)
			g.Refusals.Authenticated(hash)
			if done, refusedNow = g.Refusals.ReserveCredential(r.Context(), hash); refusedNow != nil {
				return nil, nil, refusedNow
			}
		}
	}
	// The place is held until the call is admitted (its body read, parsed and checked),
	// not while it runs, so that a credential's calls in parallel do not fill it; and
	// those that find it full of calls being admitted wait for them (Refusals.Reserve).
	var once sync.Once
	settle := func(refused bool) { once.Do(func() { done(refused) }) }
	pass := NewPass(caller, nil, header)
	pass.client, pass.onAdmit, pass.bearer = client, func() { settle(false) }, bearer
	pass.creds, pass.refusals, pass.hash = creds, g.Refusals, hash
	return pass, func(status int) { settle(refused(pass, status)) }, nil
}

// credentialHash is the hash the refusals know the request's credential by (CredentialHash): its
// api-key, or its bearer token whatever the scheme's spelling, or the Authorization header as sent
// when it is no bearer token (it never authenticates); "" when it names none.
func credentialHash(r *http.Request) string {
	if key := r.Header.Get("api-key"); key != "" {
		return CredentialHash(key)
	}
	auth := r.Header.Get("Authorization")
	if scheme, token, ok := strings.Cut(auth, " "); ok && strings.EqualFold(scheme, "Bearer") {
		return CredentialHash(token)
	}
	if auth != "" {
		return CredentialHash(auth)
	}
	return ""
}

// serve serves next with the caller's pass in the context, and returns the pass.
func (g *Guard) serve(w http.ResponseWriter, r *http.Request, next http.Handler, client string, caller *flightgraph.Caller, authErr error) *Pass {
	pass := NewPass(caller, authErr, w.Header())
	pass.client = client
	defer pass.release()
	next.ServeHTTP(w, r.WithContext(WithPass(r.Context(), pass)))
	return pass
}

// StatusWriter remembers the status an answer started with. The server's access log wraps every
// answer in one; the guard reads it, and wraps only an answer that has none.
type StatusWriter struct {
	http.ResponseWriter
	Status int
}

// statusOf returns w as a StatusWriter: itself, or w wrapped.
func statusOf(w http.ResponseWriter) *StatusWriter {
	if sw, ok := w.(*StatusWriter); ok {
		return sw
	}
	return &StatusWriter{ResponseWriter: w}
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.Status == 0 {
		w.Status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Middleware guards next with a product list known from the request alone (a REST route):
// Authenticated, then Admit of what classify names. The handler behind it is expected to Require
// its product too.
func (g *Guard) Middleware(classify Classifier, fail Failure) func(http.Handler) http.Handler {
	authenticated := g.Authenticated(fail)
	return func(next http.Handler) http.Handler {
		return authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			charge, err := classify(r)
			if err == nil {
				err = g.Admit(r.Context(), charge)
			}
			if err != nil {
				fail(w, r, err)
				return
			}
			if len(charge.Products) == 1 {
				r = r.WithContext(AsCallerOf(r.Context(), charge.Products[0]))
			}
			next.ServeHTTP(w, r)
		}))
	}
}

// authenticate establishes the callers of a request: that of its credential (Authenticate), and,
// when it carries an api-key and an OAuth access token together, the token's too, so that one
// operation can call API-key and OAuth APIs. A pair is one credential: both must authenticate, and
// belong to the same application, or neither is used.
func (g *Guard) authenticate(r *http.Request) (caller, bearer *flightgraph.Caller, err error) {
	caller, err = g.Authenticate(r)
	token, paired := pairedToken(r)
	if err != nil || !paired {
		return caller, nil, err
	}
	if bearer, err = g.bearerCaller(r.Context(), token); err != nil {
		return bearer, nil, err
	}
	if bearer.ApplicationID != caller.ApplicationID {
		return &flightgraph.Caller{Kind: flightgraph.CallerAnonymous}, nil, flightgraph.Errorf(flightgraph.ECodeWrongCredential,
			"the api-key and the bearer token belong to different applications: send a token issued to this application's key")
	}
	return caller, bearer, nil
}

// pairedToken returns the bearer token of a request that carries an api-key too, which must be an
// access token: anything else there fails as a bearer token does alone. A portal session beside
// an api-key, or an Authorization of another scheme, is not read, as ever.
func pairedToken(r *http.Request) (string, bool) {
	if r.Header.Get("api-key") == "" {
		return "", false
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || CredentialKind(token) == KindSession {
		return "", false
	}
	return token, true
}

// callerFor returns the caller a product's calls are admitted with: the bearer token's for an
// OAuth API when the request paired one with its api-key, else the request's caller.
func (p *Pass) callerFor(prod *flightgraph.Product) *flightgraph.Caller {
	caller, bearer := p.callers()
	if bearer != nil && prod.Auth == flightgraph.AuthOAuth {
		return bearer
	}
	return caller
}

// AsCallerOf returns ctx whose caller (flightgraph.CallerFromContext) is the one the product slug
// is admitted with (see callerFor), so that the work of an OAuth API called with a paired token
// reads the token's customer and grant. Without a pair it is ctx.
func AsCallerOf(ctx context.Context, slug string) context.Context {
	pass := PassFromContext(ctx)
	p := product(slug)
	if pass == nil || pass.bearer == nil || p == nil {
		return ctx
	}
	return flightgraph.WithCaller(ctx, pass.callerFor(p))
}

// Authenticate establishes the caller from the api-key header or the bearer token, whose kind
// its prefix tells. A request without credentials is anonymous; bad credentials give an
// anonymous caller and the error, which matters only if the call needs the credential. (An
// api-key comes first; authenticate reads an access token sent with it.)
func (g *Guard) Authenticate(r *http.Request) (*flightgraph.Caller, error) {
	ctx := r.Context()
	if key := r.Header.Get("api-key"); key != "" {
		return g.keyCaller(ctx, key)
	}
	anon := anonymous()
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return anon, nil
	}
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return anon, flightgraph.Errorf(flightgraph.ECodeInvalidToken, "the Authorization header must be 'Bearer <token>'")
	}
	return g.bearerCaller(r.Context(), token)
}

// bearerCaller authenticates a bearer token: an access token, or a portal session.
func (g *Guard) bearerCaller(ctx context.Context, token string) (*flightgraph.Caller, error) {
	switch CredentialKind(token) {
	case KindAccessToken:
		return g.tokenCaller(ctx, token)
	case KindSession:
		hash := HashCredential(token)
		acc, err := g.Store.AccountBySession(ctx, hash, g.Now())
		if errIsNotFound(err) {
			return anonymous(), flightgraph.Errorf(flightgraph.ECodeNotSignedIn, "the portal session is unknown or expired: sign in again")
		} else if err != nil {
			return anonymous(), err
		}
		return &flightgraph.Caller{Kind: flightgraph.CallerSession, Account: acc, SessionHash: hash}, nil
	case KindAPIKey, KindTrialKey:
		return anonymous(), flightgraph.Errorf(flightgraph.ECodeInvalidToken, "an API key is not a bearer token: send it in the api-key header, or exchange it for a token at /oauthcust/oauth/token")
	}
	return anonymous(), flightgraph.Errorf(flightgraph.ECodeInvalidToken, "the bearer token is malformed")
}

func (g *Guard) ttl() time.Duration { return ttl(g.CacheTTL, DefaultCacheTTL) }

// keyAccess reads what the guard needs of a key, by its hash or by "id:<key id>", from its cache
// when fresh.
func (g *Guard) keyAccess(ctx context.Context, ref string, now time.Time) (*flightgraph.KeyAccess, error) {
	return g.cachedKey(ctx, ref, now, func() (*flightgraph.KeyAccess, error) {
		if id, ok := strings.CutPrefix(ref, "id:"); ok {
			return g.Store.KeyAccessByID(ctx, id)
		}
		return g.Store.KeyAccess(ctx, ref)
	})
}

// trialAccess is keyAccess for a trial key, by its hash: the key's access, while the trial lasts.
func (g *Guard) trialAccess(ctx context.Context, hash string, now time.Time) (*flightgraph.KeyAccess, error) {
	return g.cachedKey(ctx, hash, now, func() (*flightgraph.KeyAccess, error) { return g.Store.TrialKeyAccess(ctx, hash, now) })
}

// cachedKey returns the key access cached under ref while it is fresh, else what read returns,
// which it caches. An entry lives the cache's TTL and, for a trial key, no longer than the trial:
// the store refuses an expired trial, and the cache must not outlive that refusal. The entry
// names the key, so that a change to the key (Forget) drops its trials' entries too.
func (g *Guard) cachedKey(ctx context.Context, ref string, now time.Time, read func() (*flightgraph.KeyAccess, error)) (*flightgraph.KeyAccess, error) {
	c, epoch := g.lookup(&g.keys, ref, now)
	if c != nil {
		return c.access, nil
	}
	ka, err := read()
	if err != nil {
		return nil, err
	}
	expires := now.Add(g.ttl())
	if ka.Trial() && ka.TrialExpiresAt.Before(expires) {
		expires = ka.TrialExpiresAt
	}
	g.remember(&g.keys, ref, &cached{access: ka, expires: expires}, now, epoch)
	return ka, nil
}

// activeKey is keyAccess for a key that must be active: an unknown or inactive key is bad.
func (g *Guard) activeKey(ctx context.Context, ref string, now time.Time, bad func() error) (*flightgraph.KeyAccess, error) {
	ka, err := g.keyAccess(ctx, ref, now)
	return active(ka, err, bad)
}

// active returns ka if the key is active; bad's error if it is not, or was not found.
func active(ka *flightgraph.KeyAccess, err error, bad func() error) (*flightgraph.KeyAccess, error) {
	if errIsNotFound(err) || err == nil && ka.Key.Status != flightgraph.KeyActive {
		return nil, bad()
	}
	return ka, err
}

// anonymous is the caller of a request without credentials, or with credentials refused.
func anonymous() *flightgraph.Caller { return &flightgraph.Caller{Kind: flightgraph.CallerAnonymous} }

// invalidKey and invalidToken are the refusals of an api-key and of an access token that do not
// authenticate, whatever the reason: malformed, unknown, inactive or expired alike. Each call
// makes a new one, and only a refusal makes one.
func invalidKey() error {
	return flightgraph.Errorf(flightgraph.ECodeInvalidKey, "the api-key is malformed, unknown or revoked")
}

func invalidToken() error {
	return flightgraph.Errorf(flightgraph.ECodeInvalidToken, "the access token is unknown, expired or revoked")
}

// keyCaller authenticates the api-key header: a key, or a trial key as its key. Either is the
// same caller, so that a trial key's calls are limited and counted as the key's.
func (g *Guard) keyCaller(ctx context.Context, key string) (*flightgraph.Caller, error) {
	now := g.Now()
	var (
		ka  *flightgraph.KeyAccess
		err error
	)
	switch CredentialKind(key) {
	case KindAPIKey:
		ka, err = g.activeKey(ctx, HashCredential(key), now, invalidKey)
	case KindTrialKey:
		ka, err = g.trialAccess(ctx, HashCredential(key), now)
		ka, err = active(ka, err, invalidKey)
	default:
		return anonymous(), invalidKey()
	}
	if err != nil {
		return anonymous(), err
	}
	return &flightgraph.Caller{Kind: flightgraph.CallerKey, KeyID: ka.Key.ID, ApplicationID: ka.Application.ID,
		Account: ka.Account, Products: ka.Products}, nil
}

func (g *Guard) tokenCaller(ctx context.Context, token string) (*flightgraph.Caller, error) {
	anon := anonymous()
	now := g.Now()
	hash := HashCredential(token)
	c, epoch := g.lookup(&g.tokens, hash, now)
	if c == nil {
		tk, err := g.Store.Token(ctx, hash)
		if errIsNotFound(err) {
			return anon, invalidToken()
		} else if err != nil {
			return anon, err
		}
		c = &cached{token: tk, expires: now.Add(g.ttl()), scopeSet: map[string]bool{}}
		for _, s := range strings.Fields(tk.Scope) {
			c.scopeSet[s] = true
		}
		g.remember(&g.tokens, hash, c, now, epoch)
	}
	tk := c.token
	if tk.Kind != flightgraph.TokenAccess || tk.RevokedAt != nil || !now.Before(tk.ExpiresAt) {
		return anon, invalidToken()
	}
	ka, err := g.activeKey(ctx, "id:"+tk.KeyID, now, invalidToken)
	if err != nil {
		return anon, err
	}
	products := make(map[string]*flightgraph.Entitlement, len(c.scopeSet))
	for slug, e := range ka.Products {
		if c.scopeSet[slug] {
			products[slug] = e
		}
	}
	return &flightgraph.Caller{Kind: flightgraph.CallerToken, KeyID: ka.Key.ID, ApplicationID: ka.Application.ID, Account: ka.Account,
		CustomerID: tk.CustomerID, Grant: tk.Grant, Products: products}, nil
}

// Forget drops what the guard cached about a key and its tokens, after a change to its access.
func (g *Guard) Forget(keyID string) {
	g.epoch.Add(1)
	g.keys.Range(func(k, v any) bool {
		if v.(*cached).access.Key.ID == keyID {
			g.keys.Delete(k)
		}
		return true
	})
	g.tokens.Range(func(k, v any) bool {
		if v.(*cached).token.KeyID == keyID {
			g.tokens.Delete(k)
		}
		return true
	})
}

// ForgetFamily drops the cached tokens of a revoked token family.
func (g *Guard) ForgetFamily(familyID string) {
	g.epoch.Add(1)
	g.tokens.Range(func(k, v any) bool {
		if v.(*cached).token.FamilyID == familyID {
			g.tokens.Delete(k)
		}
		return true
	})
}

// forgetAll drops everything the guard cached.
func (g *Guard) forgetAll() {
	g.epoch.Add(1)
	g.keys.Clear()
	g.tokens.Clear()
}

// Admit authorizes the call of each product of c for the request's caller (its Pass), applies
// the products' limits, counts the call in their usage and writes the limit headers; the products
// it admits are recorded in the Pass for Require. A call costs each product c.Calls of it (at
// least one), and is counted only once every product admitted it. A heavy call first takes a
// slot of Heavy for the request (given back when the request ends), so that a replica at capacity
// sheds it before it is charged (HeavySlots). A call of no product is held to the uncharged limits
// of its caller instead (and not counted in any usage). Without a Pass it refuses: nothing
// authenticated the request.
func (g *Guard) Admit(ctx context.Context, c Charge) error {
	pass := PassFromContext(ctx)
	if pass == nil {
		return errNoPass
	}
	h := pass.header
	caller, _ := pass.callers()
	if len(c.Products) == 0 {
		if c.Heavy {
			return errors.New("access: a heavy call that charges no API")
		}
		return g.admitUncharged(ctx, pass)
	}
	for _, slug := range c.Products {
		p := product(slug)
		if p == nil || !p.VisibleTo(caller.Role()) {
			// Partner and internal APIs are invisible to everyone else: the same answer as a
			// path that does not exist.
			return flightgraph.UnknownPath()
		}
		if err := authorize(h, pass.callerFor(p), pass.AuthErr, p); err != nil {
			return pairing(err, c.Products, pass)
		}
	}
	if c.Heavy {
		if err := g.enterHeavy(ctx, pass, false); err != nil {
			return err // shed, uncharged: the edge writes its Retry-After
		}
	}
	admitted := make([]flightgraph.Usage, 0, len(c.Products))
	for _, slug := range c.Products {
		e := pass.callerFor(product(slug)).Products[slug]
		d, err := g.Limiter.Admit(ctx, e.SubscriptionID, e.Plan.Limits, c.Calls[slug])
		if err == nil {
			pass.mu.Lock()
			if pass.decisions == nil {
				pass.decisions = map[string]Decision{}
			}
			pass.decisions[slug] = d
			pass.mu.Unlock()
			err = limited(h, d)
		}
		if err != nil {
			// Refused: the slot is for calls that run. (A product that admitted the call
			// before another refused it keeps it counted, as ever: the refusal is the plan's.)
			pass.release()
			return err
		}
		admitted = append(admitted, flightgraph.Usage{SubscriptionID: e.SubscriptionID, Day: d.At.UTC().Format(flightgraph.DateLayout),
			Calls: int64(max(c.Calls[slug], 1))})
	}
	calls := 0
	for _, u := range admitted {
		calls += int(u.Calls)
		if g.Usage != nil {
			g.Usage.Add(u.SubscriptionID, u.Day, int(u.Calls))
		}
	}
	flightgraph.RecordFromContext(ctx).NoteCharge(c.Products, calls)
	pass.admit(c.Products)
	return nil
}

// pairing adds to the refusal of an operation that calls API-key and OAuth APIs together, for a
// want of one credential's kind, how to send both.
func pairing(err error, products []string, pass *Pass) error {
	var fe *flightgraph.Error
	if pass.bearer != nil || !errors.As(err, &fe) || fe.Code != flightgraph.ECodeMissingCredentials && fe.Code != flightgraph.ECodeWrongCredential {
		return err
	}
	kinds := map[flightgraph.AuthKind]bool{}
	for _, slug := range products {
		if p := product(slug); p != nil {
			kinds[p.Auth] = true
		}
	}
	if !kinds[flightgraph.AuthAPIKey] || !kinds[flightgraph.AuthOAuth] {
		return err
	}
	return flightgraph.Errorf(fe.Code, "%s; the operation calls API-key and OAuth APIs: send the api-key header and an access token issued to the same key (Authorization: Bearer) together", fe.Message)
}

// EnterHeavy takes a heavy-work slot for the request of ctx when it holds none, as Admit does for
// a heavy call: for a call admitted as light work that turns out to need one (a heavy REST route
// or GraphQL quote that a kept answer was to answer admits the call without one). Its errors are
// Admit's for a slot, but the call was charged when it was admitted, and a shed call's message
// says so.
func (g *Guard) EnterHeavy(ctx context.Context) error {
	pass := PassFromContext(ctx)
	if pass == nil {
		return errNoPass
	}
	return g.enterHeavy(ctx, pass, true)
}

// enterHeavy takes a heavy-work slot for the request of pass, once: a caller is known by its key,
// else its application, else its client address. A shed call's message says whether the call was
// charged: as a rule not (Admit takes the slot before it charges), but a call admitted for a kept
// answer that went before it was served was (EnterHeavy).
func (g *Guard) enterHeavy(ctx context.Context, pass *Pass, charged bool) error {
	if g.Heavy == nil {
		return errors.New("access: a heavy call, and no heavy-work slots to run it in")
	}
	pass.mu.Lock()
	holding := pass.leave != nil
	pass.mu.Unlock()
	if holding {
		return nil
	}
	caller := pass.Caller
	who := caller.KeyID
	if who == "" {
		who = caller.ApplicationID
	}
	if who == "" {
		who = "address:" + pass.client
	}
	leave, err := g.Heavy.Enter(ctx, who)
	var fe *flightgraph.Error
	if errors.As(err, &fe) && (fe.Code == flightgraph.ECodeShed || fe.Code == flightgraph.ECodeHeavyTurn) {
		said := *fe
		if charged {
			said.Message += " This call was charged: it was admitted for a kept answer, which went before it could be served."
		} else {
			said.Message += " This call was not charged."
		}
		return &said
	}
	if err != nil {
		return err
	}
	pass.mu.Lock()
	pass.leave = leave
	pass.mu.Unlock()
	pass.heavy.Hold(true)
	return nil
}

// admit records that Admit let a call of products through, and tells onAdmit.
func (p *Pass) admit(products []string) {
	p.mu.Lock()
	p.passed = true
	if p.admitted == nil {
		p.admitted = make(map[string]bool, len(products))
	}
	for _, slug := range products {
		p.admitted[slug] = true
	}
	onAdmit := p.onAdmit
	p.mu.Unlock()
	if onAdmit != nil {
		onAdmit()
	}
}

// limited writes the limit headers of a decision and returns the refusal it is, if it is one.
func limited(h http.Header, d Decision) error {
	setLimitHeaders(h, d)
	if d.Allowed {
		return nil
	}
	h.Set("Retry-After", strconv.Itoa(flightgraph.Seconds(d.RetryAfter)))
	msg := fmt.Sprintf("over the limit of %d calls per second", d.Limits.PerSecond)
	switch {
	case d.Code != flightgraph.ECodePerDayLimit:
	case d.RetryAfter < d.DayReset.Sub(d.At):
		// The Redis limiter's refusal for the day's calls that leases hold and may give back.
		msg = fmt.Sprintf("at the limit of %d calls per day for now: calls reserved for requests in flight may be given back within a second", d.Limits.PerDay)
	default:
		msg = fmt.Sprintf("over the limit of %d calls per day; it resets at %s", d.Limits.PerDay, d.DayReset.Format(time.RFC3339))
	}
	// The wait in the body too (GraphQL's extensions.retryAfter), for clients behind a gateway
	// that drops the header.
	err := flightgraph.Errorf(d.Code, "%s", msg)
	err.RetryAfter = d.RetryAfter
	return err
}

// errNoPass refuses work that no guard authenticated: a wiring defect, which must fail closed.
var errNoPass = flightgraph.Errorf(flightgraph.ECodeNotApproved, "the call was not admitted")

// RequireCaller refuses an anonymous request, for what any authenticated caller may do (the
// schema's introspection): with its credential's error if it had one that failed.
func RequireCaller(ctx context.Context) error {
	pass := PassFromContext(ctx)
	if pass == nil {
		return errNoPass
	}
	if pass.Caller.Kind != flightgraph.CallerAnonymous {
		return nil
	}
	if pass.AuthErr != nil {
		return pass.AuthErr
	}
	return flightgraph.Errorf(flightgraph.ECodeMissingCredentials, "this takes an api-key, a bearer token or a portal session")
}

// Require is the second line of access: it refuses a product that the request's Pass has not
// admitted, with the error the first line would have given (AUTH_401.* for a missing or bad
// credential, AUTH_403.* otherwise). Where the work is done (a GraphQL field, a REST handler) it
// catches what an admission decided from the wrong list of products would let through.
func Require(ctx context.Context, slug string) error {
	pass := PassFromContext(ctx)
	if pass == nil {
		return errNoPass
	}
	pass.mu.Lock()
	ok := pass.admitted[slug]
	pass.mu.Unlock()
	if ok {
		return nil
	}
	p := product(slug)
	if p == nil || !p.VisibleTo(pass.Caller.Role()) {
		return flightgraph.UnknownPath()
	}
	if err := authorize(http.Header{}, pass.callerFor(p), pass.AuthErr, p); err != nil {
		return err
	}
	return flightgraph.Errorf(flightgraph.ECodeNotApproved, "the call was not admitted for %s", p.Name)
}

// authorize checks that the caller may call p, and sets the RFC 6750 challenge when not.
func authorize(h http.Header, caller *flightgraph.Caller, authErr error, p *flightgraph.Product) error {
	challenge := func(errCode, desc string) {
		v := `Bearer realm="flightgraph"`
		if errCode != "" {
			v += fmt.Sprintf(`, error=%q, error_description=%q`, errCode, desc)
		}
		h.Set("WWW-Authenticate", v)
	}
	if authErr != nil {
		var fe *flightgraph.Error
		if errors.As(authErr, &fe) && fe.Code == flightgraph.ECodeInvalidToken {
			challenge("invalid_token", fe.Message)
		} else if errors.As(authErr, &fe) && fe.Code == flightgraph.ECodeInvalidKey {
			h.Set("WWW-Authenticate", apiKeyChallenge)
		}
		return authErr
	}
	switch {
	case caller.Kind == flightgraph.CallerAnonymous || caller.Kind == flightgraph.CallerSession:
		if p.Auth == flightgraph.AuthOAuth {
			challenge("", "")
			return flightgraph.Errorf(flightgraph.ECodeMissingCredentials, "%s takes an OAuth 2.0 access token: Authorization: Bearer <token> from /oauthcust/oauth/token", p.Name)
		}
		h.Set("WWW-Authenticate", apiKeyChallenge)
		return flightgraph.Errorf(flightgraph.ECodeMissingCredentials, "%s takes an api-key header", p.Name)
	case p.Auth == flightgraph.AuthOAuth && caller.Kind == flightgraph.CallerKey:
		// A credential of the other kind is the catalogue's AUTH_403.001 ("this API takes
		// another kind of credential"), as a bearer token on an API-key API is: the caller
		// sent one, so it is not a missing credential (AUTH_401.000).
		challenge("", "")
		return flightgraph.Errorf(flightgraph.ECodeWrongCredential, "%s takes an OAuth 2.0 access token, not the api-key: exchange the key and secret at /oauthcust/oauth/token", p.Name)
	case p.Auth == flightgraph.AuthAPIKey && caller.Kind == flightgraph.CallerToken:
		return flightgraph.Errorf(flightgraph.ECodeWrongCredential, "%s takes the api-key header, not a bearer token", p.Name)
	case p.Auth == flightgraph.AuthOAuth && !p.AllowsGrant(caller.Grant):
		challenge("insufficient_scope", "grant not allowed")
		return flightgraph.Errorf(flightgraph.ECodeWrongCredential, "%s does not take tokens of the %s grant", p.Name, caller.Grant)
	}
	if caller.Products[p.Slug] == nil {
		if caller.Kind == flightgraph.CallerToken {
			challenge("insufficient_scope", "the token does not cover "+p.Slug)
		}
		return flightgraph.Errorf(flightgraph.ECodeNotApproved, "the key is not approved for %s: request it on the portal and wait for approval", p.Name)
	}
	return nil
}

// apiKeyChallenge is the WWW-Authenticate challenge of API-key products: every 401 must name a
// scheme (RFC 9110 §11.6.1), and the api-key header has no registered one.
const apiKeyChallenge = `ApiKey realm="flightgraph", header="api-key"`

// setLimitHeaders writes the IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers) and
// the legacy gateway's usage headers, which older clients read.
// LimitStatus is what a limiter's decision tells a client of its plan's limits, as the limit
// headers tell it (setLimitHeaders), for answers whose headers a gateway may drop: GraphQL's
// extensions.limits.
type LimitStatus struct {
	Second LimitWindow `json:"second"`
	Day    LimitWindow `json:"day"`
}

// LimitWindow is one window of a plan's limits: its size, the calls left in it, and the seconds
// until it resets (the oldest call of the second leaves it; the UTC day ends).
type LimitWindow struct {
	Limit     int64 `json:"limit"`
	Remaining int64 `json:"remaining"`
	Reset     int   `json:"reset"`
}

// StatusOf returns what d tells of its limits.
func StatusOf(d Decision) LimitStatus {
	return LimitStatus{
		Second: LimitWindow{Limit: int64(d.Limits.PerSecond), Remaining: int64(max(d.Limits.PerSecond-d.SecondUsed, 0)), Reset: flightgraph.Seconds(d.SecondReset)},
		Day:    LimitWindow{Limit: int64(d.Limits.PerDay), Remaining: max(int64(d.Limits.PerDay)-d.DayUsed, 0), Reset: int(d.DayReset.Sub(d.At).Seconds() + 0.999)},
	}
}

// setLimitHeaders writes d's limit headers. Every answer carries them, so they are built without
// fmt and stored under their canonical names (what Header.Set would store) without canonicalising
// them again; TestLimitHeaders holds their names and values.
func setLimitHeaders(h http.Header, d Decision) {
	secLeft := max(d.Limits.PerSecond-d.SecondUsed, 0)
	dayLeft := max(int64(d.Limits.PerDay)-d.DayUsed, 0)
	dayReset := int64(d.DayReset.Sub(d.At).Seconds() + 0.999)
	secReset := int64(flightgraph.Seconds(d.SecondReset))
	// One buffer holds every value, and one array their slices: 3 allocations for 7 headers.
	b := make([]byte, 0, 224)
	var at [6]int // where each value but the last ends
	b = append(b, `"second";q=`...)
	b = strconv.AppendInt(b, int64(d.Limits.PerSecond), 10)
	b = append(b, `;w=1, "day";q=`...)
	b = strconv.AppendInt(b, int64(d.Limits.PerDay), 10)
	b = append(b, `;w=86400`...)
	at[0] = len(b)
	b = append(b, `"second";r=`...)
	b = strconv.AppendInt(b, int64(secLeft), 10)
	b = append(b, `;t=`...)
	b = strconv.AppendInt(b, secReset, 10)
	b = append(b, `, "day";r=`...)
	b = strconv.AppendInt(b, dayLeft, 10)
	b = append(b, `;t=`...)
	b = strconv.AppendInt(b, dayReset, 10)
	at[1] = len(b)
	b = strconv.AppendInt(b, int64(d.Limits.PerSecond), 10)
	at[2] = len(b)
	b = strconv.AppendInt(b, int64(d.SecondUsed), 10)
	at[3] = len(b)
	b = strconv.AppendInt(b, int64(d.Limits.PerDay), 10)
	at[4] = len(b)
	b = strconv.AppendInt(b, d.DayUsed, 10)
	at[5] = len(b)
	all := string(b)
	v := [...]string{all[:at[0]], all[at[0]:at[1]], all[at[1]:at[2]], all[at[2]:at[3]], all[at[3]:at[4]], all[at[4]:at[5]], planQuotaReset(d.DayReset)}
	vs := v[:] // escapes: one array for the seven
	for i, k := range [...]string{"Ratelimit-Policy", "Ratelimit", "X-Packagekey-Qps-Allotted", "X-Packagekey-Qps-Current",
		"X-Packagekey-Quota-Allotted", "X-Packagekey-Quota-Current", "X-Plan-Quota-Reset"} {
		h[k] = vs[i : i+1 : i+1]
	}
}

// planQuotaReset is X-Plan-Quota-Reset's value for a day's reset: the same for every call of a
// day, so the last one is kept.
func planQuotaReset(t time.Time) string {
	if last := lastQuotaReset.Load(); last != nil && last.at.Equal(t) {
		return last.text
	}
	r := &quotaReset{at: t, text: t.UTC().Format("Monday, January 2, 2006 3:04:05 PM GMT")}
	lastQuotaReset.Store(r)
	return r.text
}

type quotaReset struct {
	at   time.Time
	text string
}

var lastQuotaReset atomic.Pointer[quotaReset]
