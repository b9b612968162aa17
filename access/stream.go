package access

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"

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
	pass := PassFromContext(ctx)
	if pass == nil || pass.creds == nil {
		return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the subscription has no credential to check")
	}
	r, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, "/", nil)
	if err != nil {
		return err
	}
	r.Header = pass.creds
	caller, bearer, err := g.authenticate(r)
	if err != nil {
		if flightgraph.Lookup(flightgraph.ErrorCode(err)).Status >= http.StatusInternalServerError {
			return err
		}
		return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the credential is no longer valid: %s", flightgraph.ErrorMessage(err))
	}
	if pass.Caller != nil && Audience(pass.Caller.Role()) != Audience(caller.Role()) {
		// The account's role changed since (a staff account demoted, a partner made a
		// developer): the stream was opened on the schema of its former audience, whose
		// fields it must no longer be served.
		return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the account's role changed since the stream was opened")
	}
	if p := product(name); p == nil || !p.VisibleTo(caller.Role()) {
		// A staff account demoted since: an internal API is no longer its to call.
		return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the credential no longer opens %s", name)
	}
	if caller.Products[name] == nil && (bearer == nil || bearer.Products[name] == nil) {
		return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the credential no longer opens %s", name)
	}
	// The request's later calls are admitted with the plans as they are now (Pass.callers).
	pass.current.Store(&passCallers{caller: caller, bearer: bearer})
	return nil
}

// Readmit checks again, for each of products that the credential of ctx's pass opened when it
// was authenticated, that it still does (StillAdmitted): an operation on a long-lived
// connection (a WebSocket's) runs on the caller its upgrade found, which a revocation, an ended
// trial or a demotion since must not keep. A product the credential did not open is left to
// Admit, which refuses it with its usual code.
func (g *Guard) Readmit(ctx context.Context, products []string) error {
	pass := PassFromContext(ctx)
	if pass == nil || pass.Caller == nil {
		return nil
	}
	for _, p := range products {
		if pass.Caller.Products[p] == nil && (pass.bearer == nil || pass.bearer.Products[p] == nil) {
			continue
		}
		if err := g.StillAdmitted(ctx, p); err != nil {
			return err
		}
	}
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
