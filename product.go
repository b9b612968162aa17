package flightgraph

import "strconv"

// Visibility says who may see and use a product.
type Visibility string

const (
	VisibilityPublic   Visibility = "public"   // everyone
	VisibilityPartner  Visibility = "partner"  // partners, staff and operators
	VisibilityInternal Visibility = "internal" // staff and operators
)

// AuthKind is how a product's calls authenticate.
type AuthKind string

const (
	AuthAPIKey AuthKind = "api_key" // the api-key header alone
	AuthOAuth  AuthKind = "oauth"   // an OAuth 2.0 access token
)

// Grant is an OAuth 2.0 grant type.
type Grant string

const (
	GrantClientCredentials Grant = "client_credentials"
	GrantPassword          Grant = "password"
	GrantRefreshToken      Grant = "refresh_token"
)

// Product is an API offered on the portal.
type Product struct {
	Slug        string     `db:"slug"`
	Name        string     `db:"name"`
	Description string     `db:"description"`
	Visibility  Visibility `db:"visibility"`
	Auth        AuthKind   `db:"auth"`
	// Grants are the OAuth grants whose tokens this product accepts; empty for API-key products.
	Grants []Grant `db:"-"`
	// Operations name what the product offers, for the catalogue: what the edges declare of it
	// (see Operation), grouped per edge.
	Operations []string `db:"-"`
}

// An Operation is one way to call an API product, declared once where it is served: a REST route
// (rest.Routes: "GET /opendata/flightstatus") or a GraphQL root field or entity type
// (schema.graphql's @api: "query flights", "entity Airport"). The guard's product tables, the
// catalogue's operation lists, the OpenAPI document and the ping routes all follow from these
// declarations.
type Operation struct {
	Product string
	Edge    string // "GET" and the like for REST; "query" or "entity" for GraphQL
	Name    string // the path for REST; the field or type for GraphQL
	// Title is the operation's name in the original's reference where the path does not say
	// it ("Base Allowances"); the catalogue shows it after the path.
	Title string
	Weight
}

// Weight is what one call of an operation costs the replica, declared with the operation (a REST
// route's, a GraphQL field's @api): the calls it is charged against its plan, and whether it is
// heavy work. Most operations are light and cost one call. A heavy one reads and prices a month
// of an origin's flights, or a calendar's days, hundreds of times a flight's work: it costs more
// calls, and runs only in one of the replica's heavy-work slots, taken before it is charged, so
// that a replica at capacity refuses it at once and uncharged instead of queueing it.
type Weight struct {
	Calls int  // calls charged for one call; 0 means 1
	Heavy bool // runs in a heavy-work slot (HeavyWork)
}

// Charged is the calls one call of weight w is charged: at least one.
func (w Weight) Charged() int { return max(w.Calls, 1) }

// OperationLists are the catalogue's operation lists of ops, per product: each REST route on its
// own (with its Title after " — " when it has one), the GraphQL fields of a kind in one line ("query flight, flights"), in the order of ops.
func OperationLists(ops []Operation) map[string][]string {
	out := map[string][]string{}
	line := map[[2]string]int{} // product and GraphQL kind → index of its line
	for _, op := range ops {
		switch op.Edge {
		case "query", "mutation", "entity":
			k := [2]string{op.Product, op.Edge}
			if i, ok := line[k]; ok {
				out[op.Product][i] += ", " + op.Name
				continue
			}
			line[k] = len(out[op.Product])
			out[op.Product] = append(out[op.Product], op.Edge+" "+op.Name)
		default:
			line := op.Edge + " " + op.Name
			if op.Title != "" {
				line += " — " + op.Title
			}
			out[op.Product] = append(out[op.Product], line)
		}
	}
	return out
}

// AllowsGrant reports whether a token of grant g may call the product.
func (p *Product) AllowsGrant(g Grant) bool {
	for _, x := range p.Grants {
		if x == g {
			return true
		}
	}
	return false
}

// VisibleTo reports whether an account of role r (or an anonymous visitor, role "") sees the
// product.
func (p *Product) VisibleTo(r Role) bool {
	switch p.Visibility {
	case VisibilityPublic:
		return true
	case VisibilityPartner:
		return r == RolePartner || r == RoleStaff || r == RoleOperator
	case VisibilityInternal:
		return r == RoleStaff || r == RoleOperator
	}
	return false
}

// DefaultPlan is the name of the plan every public product has.
const DefaultPlan = "Default"

// Limits are a plan's call limits.
type Limits struct {
	PerSecond int `db:"per_second"`
	PerDay    int `db:"per_day"`
}

// DefaultLimits are the Default plan's: 5 calls per second, 5000 per day.
var DefaultLimits = Limits{PerSecond: 5, PerDay: 5000}

// Plan is a set of limits on one product. Custom plans are granted by operators to one
// subscription when they approve a limit increase.
type Plan struct {
	ID      string `db:"id"`
	Product string `db:"product"`
	Name    string `db:"name"`
	Custom  bool   `db:"custom"`
	Limits
	// QueryLimits bound each GraphQL operation that calls the product; zero fields take
	// DefaultQueryLimits' (QueryLimits.Or).
	QueryLimits
}

// QueryLimits bound one GraphQL operation, checked before any resolver runs. Cost counts the
// objects the operation can build: every object 1, scalars 0, a list field multiplied by its size
// (its first argument, or the size the schema declares with @listSize). Depth is the nesting of
// fields; aliases and root fields are counted with every fragment expanded; tokens are the lexical
// tokens of the document, which bound the work of parsing and validating it.
type QueryLimits struct {
	MaxCost       int `db:"max_cost" json:"maxCost"`
	MaxDepth      int `db:"max_depth" json:"maxDepth"`
	MaxAliases    int `db:"max_aliases" json:"maxAliases"`
	MaxRootFields int `db:"max_root_fields" json:"maxRootFields"`
	MaxTokens     int `db:"max_tokens" json:"maxTokens"`
}

// DefaultQueryLimits are the Default plan's. The front-end team's Departures board (flights with
// their legs, airports, aircraft, cabins and amenities) costs about 160 per flight, so a board of
// 100 flights fits; a cycle of the schema (city → airports → city …) nine levels deep costs
// billions.
var DefaultQueryLimits = QueryLimits{MaxCost: 20_000, MaxDepth: 10, MaxAliases: 30, MaxRootFields: 10, MaxTokens: 2_000}

// Or returns q with each zero field taken from d.
func (q QueryLimits) Or(d QueryLimits) QueryLimits {
	pick := func(a, b int) int {
		if a > 0 {
			return a
		}
		return b
	}
	return QueryLimits{MaxCost: pick(q.MaxCost, d.MaxCost), MaxDepth: pick(q.MaxDepth, d.MaxDepth), MaxAliases: pick(q.MaxAliases, d.MaxAliases),
		MaxRootFields: pick(q.MaxRootFields, d.MaxRootFields), MaxTokens: pick(q.MaxTokens, d.MaxTokens)}
}

// Min returns the tighter of q and o, field by field.
func (q QueryLimits) Min(o QueryLimits) QueryLimits {
	return QueryLimits{MaxCost: min(q.MaxCost, o.MaxCost), MaxDepth: min(q.MaxDepth, o.MaxDepth), MaxAliases: min(q.MaxAliases, o.MaxAliases),
		MaxRootFields: min(q.MaxRootFields, o.MaxRootFields), MaxTokens: min(q.MaxTokens, o.MaxTokens)}
}

// Max returns the more generous of q and o, field by field.
func (q QueryLimits) Max(o QueryLimits) QueryLimits {
	return QueryLimits{MaxCost: max(q.MaxCost, o.MaxCost), MaxDepth: max(q.MaxDepth, o.MaxDepth), MaxAliases: max(q.MaxAliases, o.MaxAliases),
		MaxRootFields: max(q.MaxRootFields, o.MaxRootFields), MaxTokens: max(q.MaxTokens, o.MaxTokens)}
}

// MaxQueryLimits are the most any plan allows, standard or granted by an operator: past them, one
// operation's parsing, validation or result costs more than a request's deadline is meant to
// cover. The GraphQL parser is held to them before the caller's plan is known.
var MaxQueryLimits = QueryLimits{MaxCost: 1_000_000, MaxDepth: 15, MaxAliases: 100, MaxRootFields: 20, MaxTokens: 10_000}

// Validate checks bounds an operator grants: each set field between floor's (a plan's current
// bounds, the Default plan's at least) and MaxQueryLimits' (a zero field is not set): a grant
// raises bounds, never lowers them. It returns ECodeInvalidParameter.
func (q QueryLimits) Validate(floor QueryLimits) error {
	floor = floor.Or(DefaultQueryLimits).Max(DefaultQueryLimits)
	for _, f := range []struct {
		name           string
		v, least, most int
	}{
		{"maxCost", q.MaxCost, floor.MaxCost, MaxQueryLimits.MaxCost},
		{"maxDepth", q.MaxDepth, floor.MaxDepth, MaxQueryLimits.MaxDepth},
		{"maxAliases", q.MaxAliases, floor.MaxAliases, MaxQueryLimits.MaxAliases},
		{"maxRootFields", q.MaxRootFields, floor.MaxRootFields, MaxQueryLimits.MaxRootFields},
		{"maxTokens", q.MaxTokens, floor.MaxTokens, MaxQueryLimits.MaxTokens},
	} {
		if f.v != 0 && (f.v < f.least || f.v > f.most) {
			return ParamErrorf(ECodeInvalidParameter, "queryLimits."+f.name, "%s must be between %d and %d, got %d", f.name, f.least, f.most, f.v)
		}
	}
	return nil
}

// CustomPlanName is the name of a custom plan with limits l, in the words people read on My
// Account and in mails: "Custom: 20/s, 200,000/day".
func CustomPlanName(l Limits) string {
	return "Custom: " + thousands(l.PerSecond) + "/s, " + thousands(l.PerDay) + "/day"
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// DisplayName is the plan's name as people read it: a custom plan's says its limits (plans
// granted before custom plans were so named carry the subscription's id in their stored name).
func (p *Plan) DisplayName() string {
	if p.Custom {
		return CustomPlanName(p.Limits)
	}
	return p.Name
}

// Validate checks a plan's limits; it returns ECodeInvalidParameter.
func (l Limits) Validate() error {
	if l.PerSecond < 1 || l.PerSecond > 10000 {
		return ParamErrorf(ECodeInvalidParameter, "perSecond", "calls per second must be between 1 and 10000, got %d", l.PerSecond)
	}
	if l.PerDay < l.PerSecond || l.PerDay > 1_000_000_000 {
		return ParamErrorf(ECodeInvalidParameter, "perDay", "calls per day must be between the calls per second and 1000000000, got %d", l.PerDay)
	}
	return nil
}
