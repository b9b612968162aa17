package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// The operators' desk: pending subscriptions and limit requests to decide, accounts' roles, and
// the audit log. The portal's API refuses all of it to anyone but an operator; the pages only
// leave out the link for others.

const operatorsQuery = `query($email: String, $role: Role, $first: Int!, $offset: Int!, $action: String, $actor: String, $targetType: String, $targetId: String) {
  me { ` + meFields + ` }
  pendingSubscriptions { id api plan createdAt
    application { name description website callbackUrl owner { email name } } }
  limitIncreaseRequests(status: PENDING) { id description estimatedPerSecond estimatedPerDay createdAt
    subscription { id api plan limits { perSecond perDay } application { name owner { email } } } }
  accessRequests(status: PENDING) { id api apiName description expectedUse createdAt account { name email role } }
  apis { slug visibility }
  accounts(first: 50, email: $email, role: $role) { id email name role createdAt }
  auditActions
  auditLog(first: $first, offset: $offset, action: $action, actor: $actor, targetType: $targetType, targetId: $targetId) {
    at actor action targetType targetId before after }
}`

type operatorsData struct {
	Me                   *struct{ Account account }
	PendingSubscriptions []struct {
		ID, API, Plan, CreatedAt string
		Application              struct {
			Name, Description, Website, CallbackURL string
			Owner                                   struct{ Email, Name string }
		}
	}
	LimitIncreaseRequests []struct {
		ID, Description, CreatedAt          string
		EstimatedPerSecond, EstimatedPerDay int
		Subscription                        struct {
			ID, API, Plan string
			Limits        struct{ PerSecond, PerDay int }
			Application   struct {
				Name  string
				Owner struct{ Email string }
			}
		}
	}
	// AccessRequests are the pending requests for partner and internal APIs; Role is the
	// least role that opens the API, which the answer's form pre-selects.
	AccessRequests []accessRequest
	APIs           []api
	Accounts       []struct{ ID, Email, Name, Role, CreatedAt string }
	AuditActions   []string
	AuditLog       []struct{ At, Actor, Action, TargetType, TargetID, Before, After string }
	// The audit log's page.
	Offset, Next, Prev int
	Query              url.Values
	Pages              func(offset int) string // the audit log's page at offset, with the filters
}

// auditPage is how many audit entries a page shows.
const auditPage = 50

func (p *Portal) operators(w http.ResponseWriter, r *http.Request) {
	p.operatorsPage(w, r, page{Notice: notice(r)})
}

func (p *Portal) operatorsPage(w http.ResponseWriter, r *http.Request, pg page) {
	q := r.URL.Query()
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(0, min(offset, 1_000_000))
	vars := map[string]any{"first": auditPage, "offset": offset}
	// The filters: each only when given, as the API takes them.
	for _, k := range []string{"email", "action", "actor", "targetType", "targetId"} {
		if v := q.Get(k); v != "" {
			vars[k] = v
		}
	}
	if role := q.Get("role"); role != "" {
		vars["role"] = strings.ToUpper(role)
	}
	var d operatorsData
	err := p.call(r, operatorsQuery, vars, &d)
	pg.Title = "Operators"
	if d.Me != nil {
		pg.Me = &d.Me.Account // there even when the rest is refused (a developer's 403)
	}
	if err != nil {
		p.fail(w, r, "message", pg, err)
		return
	}
	for i, a := range d.AccessRequests {
		d.AccessRequests[i].Role = "partner"
		if slices.ContainsFunc(d.APIs, func(x api) bool { return x.Slug == a.API && x.Visibility == "internal" }) {
			d.AccessRequests[i].Role = "staff"
		}
	}
	d.Offset, d.Prev, d.Next = offset, max(0, offset-auditPage), -1
	if len(d.AuditLog) == auditPage {
		d.Next = offset + auditPage
	}
	d.Query = q
	d.Pages = func(offset int) string {
		pq := url.Values{}
		for k, v := range q {
			pq[k] = v
		}
		pq.Set("offset", strconv.Itoa(offset))
		return "/portal/operators?" + pq.Encode() + "#audit-title"
	}
	pg.Data = &d
	p.render(w, r, pg.status(), "operators", pg)
}

// decide runs an operator's mutation from a form.
func (p *Portal) decide(w http.ResponseWriter, r *http.Request, query string, vars map[string]any, done string) {
	p.mutate(w, r, query, vars, "/portal/operators", done, p.operatorsPage)
}

func (p *Portal) decideSubscription(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	id := r.PathValue("id")
	switch f.Get("decision") {
	case "approve":
		p.decide(w, r, `mutation($id: ID!) { approveSubscription(id: $id) { id } }`, map[string]any{"id": id}, "approved")
	case "reject":
		p.decide(w, r, `mutation($id: ID!, $r: String!) { rejectSubscription(id: $id, reason: $r) { id } }`,
			map[string]any{"id": id, "r": f.Get("reason")}, "rejected")
	case "revoke":
		p.decide(w, r, `mutation($id: ID!, $r: String!) { revokeSubscription(id: $id, reason: $r) { id } }`,
			map[string]any{"id": id, "r": f.Get("reason")}, "subrevoked")
	default:
		p.refuseForm(w, r, "choose approve, reject or revoke")
	}
}

func (p *Portal) reviewLimits(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	vars := map[string]any{"id": r.PathValue("id"), "approve": f.Get("decision") == "grant", "reply": f.Get("reply"),
		"perSecond": nil, "perDay": nil}
	for _, k := range []string{"perSecond", "perDay"} {
		if s := f.Get(k); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				p.refuseForm(w, r, "the granted calls per second and per day must be whole numbers")
				return
			}
			vars[k] = n
		}
	}
	done := "declined"
	if vars["approve"] == true {
		done = "granted"
	}
	p.decide(w, r, `mutation($id: ID!, $approve: Boolean!, $perSecond: Int, $perDay: Int, $reply: String!) {
  reviewLimitIncrease(id: $id, approve: $approve, perSecond: $perSecond, perDay: $perDay, reply: $reply) { id } }`, vars, done)
}

// answerAccess grants an access request with a role or refuses it with a reason.
func (p *Portal) answerAccess(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	vars := map[string]any{"id": r.PathValue("id"), "grant": f.Get("decision") == "grant", "reply": f.Get("reply"), "role": nil}
	done := "accessrefused"
	if vars["grant"] == true {
		vars["role"], done = strings.ToUpper(f.Get("role")), "accessgranted"
	}
	p.decide(w, r, `mutation($id: ID!, $grant: Boolean!, $role: Role, $reply: String) {
  answerAccessRequest(id: $id, grant: $grant, role: $role, reply: $reply) { id } }`, vars, done)
}

func (p *Portal) setRole(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	p.decide(w, r, `mutation($id: ID!, $role: Role!) { setAccountRole(accountId: $id, role: $role) { id } }`,
		map[string]any{"id": r.PathValue("id"), "role": strings.ToUpper(f.Get("role"))}, "role")
}

// refuseForm shows the desk again with a form's bad input.
func (p *Portal) refuseForm(w http.ResponseWriter, r *http.Request, msg string) {
	p.operatorsPage(w, r, page{Form: r.PostForm, Problem: &Problem{Code: flightgraph.ECodeInvalidParameter, Message: msg}})
}
