package access

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/flightgraph/flightgraph"
)

// StillAdmitted checks again, as a new call would be, that the credential of the request whose
// pass ctx carries may still call the product name: a subscription lives long, and a revoked key, an ended
// trial key or a demoted account must close it; so must a WebSocket connection's later operations
// (graph.Gate's Recheck). It reads the guard's cache, which the access
// feed empties of a key the moment any replica changes it, so the check costs no SQL round trip
// while nothing changes. It returns ECodeSubscriptionRevoked when the credential no longer may,
// and a backing service's failure as it is.
func (g *Guard) StillAdmitted(ctx context.Context, name string) error {
	caller, bearer, err := g.stillAuthenticated(ctx)
	if err != nil {
		return err
	}
	if p := product(name); p == nil || !p.VisibleTo(caller.Role()) {
		// A staff account demoted since: an internal API is no longer its to call.
		return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the credential no longer opens %s", name)
	}
	if caller.Products[name] == nil && (bearer == nil || bearer.Products[name] == nil) {
		return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the credential no longer opens %s", name)
	}
	// The request's later calls are admitted with the plans as they are now (Pass.callers).
	PassFromContext(ctx).current.Store(&passCallers{caller: caller, bearer: bearer})
	return nil
}

// stillAuthenticated authenticates the credential of ctx's pass again, as a new call would be,
// and returns its callers as they are now; ECodeSubscriptionRevoked when it no longer
// authenticates, or its account's audience changed since (a staff account demoted, a partner made
// a developer): the request was opened on the schema of its former audience, whose fields it must
// no longer be served.
func (g *Guard) stillAuthenticated(ctx context.Context) (caller, bearer *flightgraph.Caller, _ error) {
	pass := PassFromContext(ctx)
	if pass == nil || pass.creds == nil {
		return nil, nil, flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the subscription has no credential to check")
	}
	r, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, "/", nil)
	if err != nil {
		return nil, nil, err
	}
	r.Header = pass.creds
	caller, bearer, err = g.authenticate(r)
	if err != nil {
		if flightgraph.Lookup(flightgraph.ErrorCode(err)).Status >= http.StatusInternalServerError {
			return nil, nil, err
		}
		return nil, nil, flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the credential is no longer valid: %s", flightgraph.ErrorMessage(err))
	}
	if pass.Caller != nil && Audience(pass.Caller.Role()) != Audience(caller.Role()) {
		return nil, nil, flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the account's role changed since the stream was opened")
	}
	return caller, bearer, nil
}

// Readmit checks again, for each of products that the credential of ctx's pass opened when it
// was authenticated, that it still does (StillAdmitted): an operation on a long-lived
// connection (a WebSocket's) runs on the caller its upgrade found, which a revocation, an ended
// trial or a demotion since must not keep. A product the credential did not open is left to
// Admit, which refuses it with its usual code. An operation that calls none of them (one that
// charges no API: an introspection) has the credential itself checked again, that it still
// authenticates for the same audience, and is then held to its callers as they are now (Admit's
// uncharged rules: a key approved for nothing any more is refused as over HTTP); without it, a
// revoked key's or a demoted account's connection went on reading its former audience's schema.
func (g *Guard) Readmit(ctx context.Context, products []string) error {
	pass := PassFromContext(ctx)
	if pass == nil || pass.Caller == nil {
		return nil
	}
	checked := false
	for _, p := range products {
		if pass.Caller.Products[p] == nil && (pass.bearer == nil || pass.bearer.Products[p] == nil) {
			continue
		}
		if err := g.StillAdmitted(ctx, p); err != nil {
			return err
		}
		checked = true
	}
	if checked || pass.AuthErr != nil || pass.Caller.Kind == flightgraph.CallerAnonymous {
		// An anonymous caller, or a credential refused already, is Admit's to refuse.
		return nil
	}
	caller, bearer, err := g.stillAuthenticated(ctx)
	if err != nil {
		return err
	}
	pass.current.Store(&passCallers{caller: caller, bearer: bearer})
	return nil
}

// CredentialOf names the credential of ctx's pass and the audience it was admitted for, as a
// digest (never the secret itself): the streams of one credential are checked again together
// (live.Service's Credential), one check for them all. "" when ctx carries no credential.
func CredentialOf(ctx context.Context) string {
	pass := PassFromContext(ctx)
	if pass == nil || pass.creds == nil {
		return ""
	}
	h := sha256.New()
	for _, k := range []string{"Api-Key", "Authorization"} {
		for _, v := range pass.creds[k] {
			fmt.Fprintf(h, "%s:%d:%s\n", k, len(v), v)
		}
	}
	if pass.Caller != nil {
		io.WriteString(h, Audience(pass.Caller.Role()))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Opened returns the products the credential of ctx's pass opened when it was authenticated.
func Opened(ctx context.Context) []string {
	pass := PassFromContext(ctx)
	if pass == nil {
		return nil
	}
	var out []string
	for _, c := range []*flightgraph.Caller{pass.Caller, pass.bearer} {
		if c == nil {
			continue
		}
		for p := range c.Products {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// The names a graphql-transport-ws client's connection_init payload (graphql-ws's
// connectionParams) carries the credential under, for clients that cannot set a WebSocket's
// headers (a browser's): the api-key as "api-key" or "apiKey", an OAuth access token as
// "Authorization" or "authorization" ("Bearer <token>"), the headers' names and values. Any other
// member of the payload is not read.
var initNames = map[string]string{"api-key": "Api-Key", "apiKey": "Api-Key", "Authorization": "Authorization", "authorization": "Authorization"}

// InitCredentials reads the credential of a connection_init payload (see initNames) as the
// headers that would carry it (api-key, Authorization); an empty value is none, as an empty
// header is. A member that is not a string, or two spellings of one header with different
// values, refuse the payload with ECodeBadBody: a payload that could be read two ways is not
// read at all.
func InitCredentials(payload map[string]any) (http.Header, error) {
	creds := http.Header{}
	for name, v := range payload {
		header, ok := initNames[name]
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, flightgraph.Errorf(flightgraph.ECodeBadBody, "connection_init's payload: %s must be a string", name)
		}
		if s == "" {
			continue
		}
		if prev := creds.Get(header); prev != "" && prev != s {
			return nil, flightgraph.Errorf(flightgraph.ECodeBadBody, "connection_init's payload names the %s credential twice, with different values: send one", header)
		}
		creds.Set(header, s)
	}
	return creds, nil
}

// named reports whether creds (api-key, Authorization headers) name a credential.
func named(creds http.Header) bool {
	return creds.Get("Api-Key") != "" || creds.Get("Authorization") != ""
}

// Connect authenticates the credential that a WebSocket connection presents in its
// connection_init (creds, from InitCredentials), after its upgrade passed Authenticated, and
// returns the context its operations run in. It is Authenticated's work, by the same code
// (enter): the credential takes a place in the refusals' windows (the upgrade's own place, which
// its anonymous request held, is given back first: the connection's work is the credential's
// now), a credential that is refused keeps it, and the connection's pass, with the credential's
// caller, goes into the context, where the Gate, Readmit and StillAdmitted find it exactly as they
// find a pass of headers.
//
// It fails closed: a connection with a credential neither in its upgrade's headers nor in creds
// is refused ECodeMissingCredentials; one whose payload names a credential other than its
// headers' is refused ECodeWrongCredential (two credentials that disagree are none); a credential
// refused, in the payload or the upgrade's headers, gives its error (ECodeInvalidKey, ECodeInvalidToken, …), a full refusals' window
// ECodePerSecondLimit. Every refusal is counted as one (Refused). A payload that repeats the
// headers' credential changes nothing. The pass lives as long as ctx (the upgrade's request).
func (g *Guard) Connect(ctx context.Context, creds http.Header) (context.Context, error) {
	upgrade := PassFromContext(ctx)
	if upgrade == nil {
		return ctx, errNoPass
	}
	inHeaders := named(upgrade.creds)
	switch {
	case !named(creds) && inHeaders:
		// A headers' credential that was refused (the upgrade's enter counted it) refuses the
		// connection at once, as the same credential in the payload does.
		return ctx, upgrade.AuthErr
	case !named(creds):
		Refused(ctx)
		return ctx, flightgraph.Errorf(flightgraph.ECodeMissingCredentials,
			"the connection takes a credential: an api-key (or an OAuth access token as Authorization: Bearer) in connection_init's payload or the upgrade's headers")
	case inHeaders:
		if upgrade.creds.Get("Api-Key") == creds.Get("Api-Key") && upgrade.creds.Get("Authorization") == creds.Get("Authorization") {
			return ctx, upgrade.AuthErr
		}
		Refused(ctx)
		return ctx, flightgraph.Errorf(flightgraph.ECodeWrongCredential,
			"connection_init's payload and the upgrade's headers carry different credentials: send one of them")
	}
	upgrade.mu.Lock()
	onAdmit := upgrade.onAdmit
	upgrade.mu.Unlock()
	if onAdmit != nil {
		onAdmit()
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	if err != nil {
		return ctx, err
	}
	r.Header = creds
	pass, end, err := g.enter(r, upgrade.client, nil)
	if err != nil {
		return ctx, err
	}
	if pass.AuthErr != nil {
		return ctx, pass.AuthErr // enter kept its place
	}
	context.AfterFunc(ctx, func() {
		end(http.StatusSwitchingProtocols)
		pass.release()
	})
	return WithPass(ctx, pass), nil
}

// ForOperation returns ctx with a pass of its own for one operation of a long-lived connection
// (a WebSocket's), made from the connection's pass in ctx: the same caller, credential and client,
// but the products admitted for this operation alone, a hold on heavy work of its own, and a
// place of its own in the refusals' windows (the credential's when it authenticated lately, else
// the client address's), taken before any work as a request's is (Refusals.Reserve), given back
// once the operation is admitted, kept when it is refused (Refused, before end). end gives back
// the heavy-work slot and settles the place when the operation is over. With the connection's
// pass itself, the first heavy operation held its heavy-work slot until the connection closed
// (the key's other heavy calls refused meanwhile), the connection's later heavy operations ran
// on it without taking any, and its refused operations counted nowhere: one connection could send
// documents that do not validate, or calls of APIs it may not make, without end. A full window
// refuses the operation with ECodePerSecondLimit (and its wait) before anything of it is read.
// Without a pass in ctx it returns ctx: Admit then refuses, as it refuses whatever no guard
// authenticated.
func ForOperation(ctx context.Context) (_ context.Context, end func(), _ error) {
	conn := PassFromContext(ctx)
	if conn == nil {
		return ctx, func() {}, nil
	}
	done, refusedNow := conn.refusals.Reserve(ctx, conn.client, conn.hash)
	if refusedNow != nil {
		return ctx, func() {}, refusedNow
	}
	var once sync.Once
	settle := func(refused bool) { once.Do(func() { done(refused) }) }
	conn.mu.Lock()
	connAdmit := conn.onAdmit
	conn.mu.Unlock()
	p := NewPass(conn.Caller, conn.AuthErr, nil)
	p.bearer, p.client, p.creds, p.refusals, p.hash = conn.bearer, conn.client, conn.creds, conn.refusals, conn.hash
	p.onAdmit = func() {
		if connAdmit != nil {
			connAdmit()
		}
		settle(false)
	}
	return WithPass(ctx, p), func() {
		p.release()
		settle(refused(p, 0))
	}, nil
}
