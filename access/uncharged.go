package access

import (
	"context"

	"github.com/flightgraph/flightgraph"
)

// UnchargedLimits bound the calls that charge no API: the portal's operations, introspection,
// _service, /openapi.json and the token endpoint's grants. They answer from the database or from
// the schema like any API, and a caller could otherwise repeat them without end.
//
// A portal account's sessions, keys, trial keys and tokens share one budget (PerAccount), so that
// making more keys or signing in again buys nothing (an account may hold 100 keys); each
// credential spends at most its share of it (PerCredential: a session, or a key with its trial
// keys, tokens and grants), so that whoever holds one key (embedded in a web page, or a
// customer's token) cannot spend the whole budget of the account, whose owner needs the portal
// to revoke that key. Each client address has a budget too: for the calls of anonymous callers
// (PerAddress), and apart for those of callers with an account (PerSignedInAddress), so that
// accounts made by one client do not add up, and a neighbour behind the same NAT sending
// anonymous calls does not hold signed-in ones back. A key or token that is approved for no API
// gets no uncharged call at all (NotApprovedForAny).
type UnchargedLimits struct {
	PerAccount, PerCredential, PerAddress, PerSignedInAddress flightgraph.Limits
}

// DefaultUncharged are the limits of uncharged calls unless a Guard says otherwise: per account,
// four times the Default plan's rate, of which one credential may spend half; per client address,
// about what the password hashes of sign-ins can serve for anonymous callers, and twice an
// account's budget for signed-in ones. None has a daily quota: these calls leave no durable count
// to keep one by (the limiter forgets an idle name), and behind a proxy or a NAT one address is
// many people, whom a quota spent by one of them would shut out of signing in.
var DefaultUncharged = UnchargedLimits{
	PerAccount:         flightgraph.Limits{PerSecond: 20, PerDay: noDailyQuota},
	PerCredential:      flightgraph.Limits{PerSecond: 10, PerDay: noDailyQuota},
	PerAddress:         flightgraph.Limits{PerSecond: 20, PerDay: noDailyQuota},
	PerSignedInAddress: flightgraph.Limits{PerSecond: 40, PerDay: noDailyQuota},
}

// noDailyQuota is the per-day limit of limits that have none.
const noDailyQuota = 1_000_000_000

// or returns u with its zero fields taken from d.
func (u UnchargedLimits) or(d UnchargedLimits) UnchargedLimits {
	pick := func(a, b flightgraph.Limits) flightgraph.Limits {
		if a == (flightgraph.Limits{}) {
			return b
		}
		return a
	}
	return UnchargedLimits{PerAccount: pick(u.PerAccount, d.PerAccount), PerCredential: pick(u.PerCredential, d.PerCredential),
		PerAddress: pick(u.PerAddress, d.PerAddress), PerSignedInAddress: pick(u.PerSignedInAddress, d.PerSignedInAddress)}
}

// budget is one window an uncharged call takes a place in: the limiter's name and its limits.
type budget struct {
	name   string
	limits flightgraph.Limits
}

// budgets returns the windows an uncharged call of caller from the client address takes a place
// in, in the order they are asked: the credential's share first, so that a call refused there
// spends nothing of its account's (a leaked key spends at most its share); then the account's;
// then the address's, which so gets at most an account's budget from each account, and leaves the
// rest to the address's other accounts.
func (u UnchargedLimits) budgets(caller *flightgraph.Caller, address string) []budget {
	u = u.or(DefaultUncharged)
	var credential string
	switch {
	case caller.Kind == flightgraph.CallerSession:
		credential = "session:" + caller.SessionHash
	case caller.KeyID != "":
		credential = "key:" + caller.KeyID // the key's trial keys and tokens are the key
	default:
		return []budget{{"uncharged:address:" + address, u.PerAddress}}
	}
	b := []budget{{"uncharged:" + credential, u.PerCredential}}
	if caller.Account != nil {
		b = append(b, budget{"uncharged:account:" + caller.Account.ID, u.PerAccount})
	}
	return append(b, budget{"uncharged:signed-in:address:" + address, u.PerSignedInAddress})
}

// admitBudgets admits one call in each budget in turn and returns the decision to show: the
// refusal of the first budget that refuses (the later ones are not asked), else the admission
// whose second has the fewest calls left, which is the one the caller must pace itself by. A
// call refused by a later budget keeps its place in the earlier ones: the limiters count on
// admission, and that only makes those budgets stricter for a caller already over one of them.
func admitBudgets(ctx context.Context, l Limiter, budgets []budget) (Decision, error) {
	var shown Decision
	for i, b := range budgets {
		d, err := l.Admit(ctx, b.name, b.limits, 1)
		if err != nil || !d.Allowed {
			return d, err
		}
		if i == 0 || d.Limits.PerSecond-d.SecondUsed < shown.Limits.PerSecond-shown.SecondUsed {
			shown = d
		}
	}
	return shown, nil
}

// admitUncharged holds a call of no product to its caller's uncharged budgets and writes the
// limit headers; a key or token approved for no API is refused (NotApprovedForAny).
func (g *Guard) admitUncharged(ctx context.Context, pass *Pass) error {
	// The caller as the last check of a long-lived request's credential found it (Readmit).
	caller, _ := pass.callers()
	if err := NotApprovedForAny(caller); err != nil {
		return err
	}
	d, err := admitBudgets(ctx, g.Limiter, g.Uncharged.budgets(caller, pass.client))
	if err != nil {
		return err
	}
	if err := limited(pass.header, d); err != nil {
		return err
	}
	pass.admit(nil)
	return nil
}

// NotApprovedForAny refuses the uncharged calls of a key or token that is approved for no API its
// account may see (ECodeNotApproved): a key nobody approved yet, a token whose subscriptions were
// all revoked. Requesting keys is free and needs no operator, so such keys would otherwise buy an
// account introspections and schema downloads by the hundred; what the portal needs of an account
// that nothing was approved for yet runs on its session, and /openapi.json answers without any
// credential. Sessions and anonymous callers are not refused here.
func NotApprovedForAny(caller *flightgraph.Caller) error {
	if caller.Kind != flightgraph.CallerKey && caller.Kind != flightgraph.CallerToken {
		return nil
	}
	for slug := range caller.Products {
		if p := product(slug); p != nil && p.VisibleTo(caller.Role()) {
			return nil
		}
	}
	return flightgraph.Errorf(flightgraph.ECodeNotApproved, "the key is approved for no API yet: calls that charge no API (introspection, _service, /openapi.json, the portal's) take a key or token approved for at least one, or a portal session; /openapi.json and the portal's apis answer without credentials too")
}
