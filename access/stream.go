package access

import (
	"context"
	"net/http"

	"github.com/flightgraph/flightgraph"
)

// StillAdmitted checks again, as a new call would be, that the credential of the request whose
// pass ctx carries may still call product: a subscription lives long, and a revoked key, an ended
// trial key or a demoted account must close it. It reads the guard's cache, which the access
// feed empties of a key the moment any replica changes it, so the check costs no SQL round trip
// while nothing changes. It returns ECodeSubscriptionRevoked when the credential no longer may,
// and a backing service's failure as it is.
func (g *Guard) StillAdmitted(ctx context.Context, product string) error {
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
	if caller.Products[product] == nil && (bearer == nil || bearer.Products[product] == nil) {
		return flightgraph.Errorf(flightgraph.ECodeSubscriptionRevoked, "the credential no longer opens %s", product)
	}
	return nil
}
