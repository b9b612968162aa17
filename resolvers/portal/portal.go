package portal

import (
	"context"
	"fmt"
	"strings"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/portal"
)

func authPayload(s *access.Session, err error) (*portal.AuthPayload, error) {
	if err != nil {
		return nil, err
	}
	return &portal.AuthPayload{Token: s.Token, Account: s.Account}, nil
}

// signUp answers the same payload for every address that passes validation.
func (r *Resolver) signUp(ctx context.Context, in flightgraph.SignUpInput) (*portal.SignUpPayload, error) {
	if err := r.Access.SignUp(ctx, in); err != nil {
		return nil, err
	}
	return &portal.SignUpPayload{Message: access.SignUpAnswer}, nil
}

func (r *Resolver) me(ctx context.Context) (*portal.Me, error) {
	acc, err := r.Access.Me(ctx)
	if err != nil {
		return nil, err
	}
	apps, err := r.Access.Applications(ctx)
	if err != nil {
		return nil, err
	}
	return &portal.Me{Account: acc, Applications: apps}, nil
}

// applicationsPage is the page first, offset of the applications me read whole: an account has
// at most access.MaxApplications.
func applicationsPage(me *portal.Me, first, offset *int) ([]*flightgraph.Application, error) {
	f, o := access.MaxApplications, 0
	if first != nil {
		f = *first
	}
	if offset != nil {
		o = *offset
	}
	if f < 1 || f > access.MaxApplications {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "first", "first must be 1 to %d", access.MaxApplications)
	}
	if o < 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "offset", "offset must not be negative")
	}
	apps := me.Applications
	if o >= len(apps) {
		return []*flightgraph.Application{}, nil
	}
	return apps[o:min(len(apps), o+f)], nil
}

// accounts reads the accounts of a page in the request's batch (graph.Loaders.Accounts).
func accounts(ctx context.Context) access.AccountLoader {
	l := graph.For(ctx).Accounts
	if l == nil {
		return nil
	}
	return func(ctx context.Context, id string) (*flightgraph.Account, error) { return graph.Load(ctx, l, id) }
}

// appKeys lists an application's keys; their plaintext halves are never kept, so lists show hints.
func (r *Resolver) appKeys(ctx context.Context, app *flightgraph.Application) ([]*flightgraph.NewKey, error) {
	keys, err := graph.Load(ctx, graph.For(ctx).AppKeys, app.ID)
	if err != nil {
		return nil, err
	}
	out := make([]*flightgraph.NewKey, len(keys))
	for i, k := range keys {
		out[i] = &flightgraph.NewKey{Key: k}
	}
	return out, nil
}

func apiKey(k *flightgraph.NewKey) string {
	if k.APIKey != "" {
		return k.APIKey
	}
	return k.Hint
}

func secret(k *flightgraph.NewKey) *string {
	if k.Secret == "" {
		return nil
	}
	return &k.Secret
}

// plan is a subscription's plan, read with the request's other subscriptions' (graph.Loaders.Plans):
// a page of subscriptions asked for their names and limits read a plan per field and subscription.
func plan(ctx context.Context, s *flightgraph.Subscription) (*flightgraph.Plan, error) {
	p, err := graph.Load(ctx, graph.For(ctx).Plans, s.PlanID)
	if err == nil && p == nil {
		err = fmt.Errorf("portal: subscription %s has no plan %s", s.ID, s.PlanID)
	}
	return p, err
}

func (r *Resolver) planName(ctx context.Context, s *flightgraph.Subscription) (string, error) {
	p, err := plan(ctx, s)
	if err != nil {
		return "", err
	}
	return p.DisplayName(), nil
}

func (r *Resolver) limits(ctx context.Context, s *flightgraph.Subscription) (*flightgraph.Limits, error) {
	p, err := plan(ctx, s)
	if err != nil {
		return nil, err
	}
	return &p.Limits, nil
}

func (r *Resolver) queryLimits(ctx context.Context, s *flightgraph.Subscription) (*flightgraph.QueryLimits, error) {
	p, err := plan(ctx, s)
	if err != nil {
		return nil, err
	}
	q := p.QueryLimits.Or(flightgraph.DefaultQueryLimits)
	return &q, nil
}

func (r *Resolver) usageToday(ctx context.Context, s *flightgraph.Subscription) (int, error) {
	n, err := graph.Load(ctx, graph.For(ctx).Usage, s.ID)
	return int(n), err
}

// usage is the last days of a subscription's usage history. The loader holds each history
// whole, so that fields asking for different days share one batch; days is checked first.
func (r *Resolver) usage(ctx context.Context, s *flightgraph.Subscription, days int) ([]*flightgraph.DailyUsage, error) {
	if err := flightgraph.ValidateUsageDays(days); err != nil {
		return nil, err
	}
	h, err := graph.Load(ctx, graph.For(ctx).UsageHistory, s.ID)
	if err != nil {
		return nil, err
	}
	return h[max(len(h)-days, 0):], nil
}

// limitRequests is the newest first of a subscription's limit requests; the loader holds the
// newest access.MaxLimitRequests, as usage holds the whole history.
func (r *Resolver) limitRequests(ctx context.Context, s *flightgraph.Subscription, first int) ([]*flightgraph.LimitIncreaseRequest, error) {
	if err := access.ValidateLimitRequests(first); err != nil {
		return nil, err
	}
	reqs, err := graph.Load(ctx, graph.For(ctx).LimitRequests, s.ID)
	if err != nil {
		return nil, err
	}
	return reqs[:min(first, len(reqs))], nil
}

func (r *Resolver) requestKey(ctx context.Context, in portal.RequestKeyInput) (*portal.KeyPayload, error) {
	k, _, err := r.Access.RequestKey(ctx, access.KeyRequest{ApplicationID: in.ApplicationID, API: in.API, Plan: deref(in.Plan), RequestToken: deref(in.RequestToken)})
	if err != nil {
		return nil, err
	}
	return &portal.KeyPayload{Key: k}, nil
}

func (r *Resolver) rotate(ctx context.Context, keyID string) (*portal.KeyPayload, error) {
	k, err := r.Access.RotateKeySecret(ctx, keyID)
	if err != nil {
		return nil, err
	}
	return &portal.KeyPayload{Key: k}, nil
}

func (r *Resolver) revokeKey(ctx context.Context, keyID string) (*flightgraph.NewKey, error) {
	k, err := r.Access.RevokeKey(ctx, keyID)
	if err != nil {
		return nil, err
	}
	return &flightgraph.NewKey{Key: k}, nil
}

func (r *Resolver) reviewLimit(ctx context.Context, id string, approve bool, perSecond, perDay *int, queries *flightgraph.QueryLimits, reply string) (*flightgraph.LimitIncreaseRequest, error) {
	return r.Access.ReviewLimitIncrease(ctx, access.LimitReview{ID: id, Approve: approve, Reply: reply,
		Limits: flightgraph.Limits{PerSecond: deref(perSecond), PerDay: deref(perDay)}, Queries: deref(queries)})
}

func (r *Resolver) limitRequestSubscription(ctx context.Context, req *flightgraph.LimitIncreaseRequest) (*flightgraph.Subscription, error) {
	return r.Access.LimitRequestSubscription(ctx, req)
}

func apiAuth(p *flightgraph.Product) portal.APIAuth {
	return portal.APIAuth(strings.ToUpper(string(p.Auth)))
}

func grants(p *flightgraph.Product) []string {
	out := make([]string, len(p.Grants))
	for i, g := range p.Grants {
		out[i] = string(g)
	}
	return out
}

func ok(err error) (bool, error) { return err == nil, err }
