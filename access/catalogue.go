package access

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/flightgraph/flightgraph"
)

// Products is the built-in catalogue of APIs. Public products have the Default plan; partner and
// internal ones a plan of their own. Synced into the store at start-up (SyncCatalogue). Their
// operations are not written here: the edges declare them (Service.Operations).
var Products = []*flightgraph.Product{
	{Slug: "opendata", Name: "Open Data", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthAPIKey,
		Description: "Reference data: airports, cities, countries and the offers reference data."},
	{Slug: "flightstatus", Name: "Flight Status", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthAPIKey,
		Description: "Operational flights and their status, by route, date or flight number."},
	{Slug: "inspire", Name: "Amenities", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthAPIKey,
		Description: "Aircraft configurations, cabins and their amenities; destination inspiration."},
	{Slug: "schedule", Name: "Network and Schedule", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthAPIKey,
		Description: "The network's routes and the flight schedule."},
	{Slug: "offers", Name: "Offers", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthOAuth,
		Grants:      []flightgraph.Grant{flightgraph.GrantClientCredentials},
		Description: "Flight offers: search, pricing, taxes, conditions and shopping carts."},
	{Slug: "baggage", Name: "Baggage allowance", Visibility: flightgraph.VisibilityPublic, Auth: flightgraph.AuthOAuth,
		Grants:      []flightgraph.Grant{flightgraph.GrantClientCredentials, flightgraph.GrantPassword},
		Description: "Baggage allowances before booking; loyalty allowances need a customer's password-grant token."},
	{Slug: "metasearch", Name: "Metasearch", Visibility: flightgraph.VisibilityPartner, Auth: flightgraph.AuthAPIKey,
		Description: "Availability and fares for metasearch partners."},
	{Slug: "cargo", Name: "Cargo", Visibility: flightgraph.VisibilityInternal, Auth: flightgraph.AuthOAuth,
		Grants:      []flightgraph.Grant{flightgraph.GrantClientCredentials},
		Description: "Cargo capacity and bookings, for internal staff."},
	{Slug: "flightops", Name: "Flight Operations", Visibility: flightgraph.VisibilityInternal, Auth: flightgraph.AuthAPIKey,
		Description: "Operations control's writes to flights (delays, gates, terminals, cancellations), for internal staff."},
}

// planOf is the one standard plan of each visibility: name, id suffix, call limits and operation
// bounds.
var planOf = map[flightgraph.Visibility]struct {
	suffix, name string
	limits       flightgraph.Limits
	query        flightgraph.QueryLimits
}{
	flightgraph.VisibilityPublic: {"default", flightgraph.DefaultPlan, flightgraph.DefaultLimits, flightgraph.DefaultQueryLimits},
	flightgraph.VisibilityPartner: {"partner", "Partner", flightgraph.Limits{PerSecond: 50, PerDay: 500_000},
		flightgraph.QueryLimits{MaxCost: 200_000, MaxDepth: 12, MaxAliases: 100, MaxRootFields: 20, MaxTokens: 5_000}},
	flightgraph.VisibilityInternal: {"internal", "Internal", flightgraph.Limits{PerSecond: 100, PerDay: 1_000_000},
		flightgraph.QueryLimits{MaxCost: 500_000, MaxDepth: 12, MaxAliases: 100, MaxRootFields: 20, MaxTokens: 5_000}},
}

// catalogue is the built-in catalogue, indexed once: the store holds a copy (SyncCatalogue) for
// the subscriptions to refer to, but nothing needs to read it back.
var catalogue = sync.OnceValue(func() (c struct {
	products []*flightgraph.Product // by slug
	bySlug   map[string]*flightgraph.Product
	plans    []*flightgraph.Plan // the standard plans, in the order of Products
}) {
	c.bySlug = map[string]*flightgraph.Product{}
	for _, p := range Products {
		c.bySlug[p.Slug] = p
		if v, ok := planOf[p.Visibility]; ok {
			c.plans = append(c.plans, &flightgraph.Plan{ID: "plan_" + p.Slug + "_" + v.suffix, Product: p.Slug, Name: v.name, Limits: v.limits, QueryLimits: v.query})
		}
	}
	c.products = slices.SortedFunc(slices.Values(Products), func(a, b *flightgraph.Product) int { return strings.Compare(a.Slug, b.Slug) })
	return c
})

// Audience names what a caller of role (a caller's Role; "" for anonymous callers) may see of the
// catalogue: the slugs of the APIs visible to it, in order, joined by commas. An answer that
// depends on nothing else of the caller (the OpenAPI document; the schema's introspection and
// SDL; validation's suggestions) is the same for every caller of one audience, and is cached by
// it: two roles that see the same APIs share it, and no role's answer is ever another's.
func Audience(role flightgraph.Role) string {
	var slugs []string
	for _, p := range catalogue().products {
		if p.VisibleTo(role) {
			slugs = append(slugs, p.Slug)
		}
	}
	return strings.Join(slugs, ",")
}

// product returns the built-in product with this slug, or nil.
func product(slug string) *flightgraph.Product { return catalogue().bySlug[slug] }

// standardPlans returns the standard plans of a product.
func standardPlans(product string) []*flightgraph.Plan {
	var out []*flightgraph.Plan
	for _, p := range catalogue().plans {
		if p.Product == product {
			out = append(out, p)
		}
	}
	return out
}

// standardPlan returns a product's standard plan of that name; ECodeNotFound if it has none.
func standardPlan(product, name string) (*flightgraph.Plan, error) {
	for _, p := range standardPlans(product) {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, flightgraph.Errorf(flightgraph.ECodeNotFound, "API %s has no plan %q", product, name)
}

// QueryLimits returns the bounds of a GraphQL operation that calls products, for the request's
// caller: the tightest of the caller's plans of those products (the Default plan's for a product
// it has no plan of). With no products it returns the most generous of the caller's plans (the
// Default plan's for a caller without any): what a document is held to before its products are
// known, while it is parsed.
func QueryLimits(ctx context.Context, products []string) flightgraph.QueryLimits {
	caller := flightgraph.CallerFromContext(ctx)
	if pass := PassFromContext(ctx); pass != nil && caller == pass.Caller {
		// The plans as the last check of a long-lived request's credential found them.
		caller, _ = pass.callers()
	}
	of := func(e *flightgraph.Entitlement) flightgraph.QueryLimits {
		if e == nil || e.Plan == nil {
			return flightgraph.DefaultQueryLimits
		}
		return e.Plan.QueryLimits.Or(flightgraph.DefaultQueryLimits)
	}
	if len(products) == 0 {
		l := flightgraph.DefaultQueryLimits
		for _, e := range caller.Products {
			l = l.Max(of(e))
		}
		return l
	}
	l := of(caller.Products[products[0]])
	for _, slug := range products[1:] {
		l = l.Min(of(caller.Products[slug]))
	}
	return l
}
