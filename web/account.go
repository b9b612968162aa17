package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/flightgraph/flightgraph"
)

// The pages of a developer's account: signing up, in and out, and My Account with its
// applications, keys, subscriptions and usage.

func (p *Portal) home(w http.ResponseWriter, r *http.Request) {
	if p.session(r) == "" {
		p.render(w, r, http.StatusOK, "signin", page{Title: "Sign in", Notice: notice(r)})
		return
	}
	pg := page{Notice: notice(r)}
	if f := p.takeFlash(w, r); f.Secret != nil {
		pg.Data = &accountData{Secret: f.Secret}
	}
	p.account(w, r, pg)
}

// appsPage is how many applications a page of My Account shows: with each key's usage over 30
// days, a page of five stays within the cost a portal session may spend on one operation.
const appsPage = 5

// accountQuery is what My Account shows.
const accountQuery = `query($first: Int!, $offset: Int!) {
  me { ` + meFields + ` applications(first: $first, offset: $offset) { id name website description callbackUrl createdAt
    keys { id apiKey status createdAt
      subscriptions { id api plan status reason createdAt decidedAt limits { perSecond perDay }
        usage(days: 30) { day calls }
        limitRequests { id status description estimatedPerSecond estimatedPerDay reply createdAt reviewedAt } } } }
    accessRequests { id api apiName status role reply createdAt reviewedAt } }
  apis { slug name auth visibility plans { name perSecond perDay } }
}`

type application struct {
	ID, Name, Website, Description, CallbackURL, CreatedAt string
	Keys                                                   []key
}

type key struct {
	ID, APIKey, Status, CreatedAt string
	Subscriptions                 []subscription
}

type subscription struct {
	ID, API, Plan, Status, Reason, CreatedAt, DecidedAt string
	Limits                                              struct{ PerSecond, PerDay int }
	Usage                                               []struct {
		Day   string
		Calls int
	}
	LimitRequests []struct {
		ID, Status, Description, Reply, CreatedAt, ReviewedAt string
		EstimatedPerSecond, EstimatedPerDay                   int
	}
}

// Lacking returns the APIs of apis the key has no subscription to, in their order: what "Add
// another API" can offer (asking again for one it has, in any status, is PORTAL_409.000).
func (k key) Lacking(apis []api) []api {
	var out []api
	for _, a := range apis {
		if !slices.ContainsFunc(k.Subscriptions, func(s subscription) bool { return s.API == a.Slug }) {
			out = append(out, a)
		}
	}
	return out
}

// UsageToday is the last day of Usage: today's calls, stored and not yet.
func (s subscription) UsageToday() int {
	if len(s.Usage) == 0 {
		return 0
	}
	return s.Usage[len(s.Usage)-1].Calls
}

// Chart is the subscription's usage over the days of Usage as bars of an SVG 300×80, scaled to
// the busiest day, with the plan's daily limit as a dashed line when the busiest day is within
// sight of it.
func (s subscription) Chart() *chart {
	if len(s.Usage) == 0 {
		return nil
	}
	c := &chart{Limit: s.Limits.PerDay, Days: len(s.Usage)}
	for _, u := range s.Usage {
		c.Total += u.Calls
		c.Busiest = max(c.Busiest, u.Calls)
	}
	top := max(c.Busiest, 1)
	if s.Limits.PerDay > 0 && top*2 >= s.Limits.PerDay {
		top = max(top, s.Limits.PerDay)
		c.LimitY = 75 - 70*s.Limits.PerDay/top
		c.ShowLimit = true
	}
	width := 300 / len(s.Usage)
	for i, u := range s.Usage {
		h := 70 * u.Calls / top
		if u.Calls > 0 {
			h = max(h, 1)
		}
		c.Bars = append(c.Bars, bar{X: i * width, Y: 75 - h, W: max(width-2, 1), H: h, Day: u.Day, Calls: u.Calls})
	}
	return c
}

type chart struct {
	Bars                                []bar
	Total, Busiest, Limit, Days, LimitY int
	ShowLimit                           bool
}

type bar struct {
	X, Y, W, H, Calls int
	Day               string
}

type api struct {
	Slug, Name, Auth, Visibility, Description string
	Grants, Operations                        []string
	Plans                                     []struct {
		Name              string
		PerSecond, PerDay int
	}
}

type accountData struct {
	Applications []application
	APIs         []api
	Secret       *newKey // after requestKey or rotateKeySecret: shown once
	// AccessRequests are the account's requests for partner and internal APIs, with the answers.
	AccessRequests []accessRequest
	// The page of applications: the offsets of the pages before and after (-1: none).
	Offset, Prev, Next int
}

type newKey struct {
	ID, APIKey, Secret string
	Rotated            bool
}

// account renders My Account; pg carries a notice or a problem of the form just sent. Its one
// query reads the signed-in account with the page (without a session, the sign-in page).
func (p *Portal) account(w http.ResponseWriter, r *http.Request, pg page) {
	var d struct {
		Me struct {
			Account        account
			Applications   []application
			AccessRequests []accessRequest
		}
		APIs []api
	}
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	offset = max(0, min(offset, 1000))
	if err := p.call(r, accountQuery, map[string]any{"first": appsPage, "offset": offset}, &d); err != nil {
		p.fail(w, r, "message", page{Title: "My Account"}, err)
		return
	}
	pg.Title, pg.Me = "My Account", &d.Me.Account
	data, _ := pg.Data.(*accountData)
	if data == nil {
		data = &accountData{}
	}
	data.Applications, data.APIs, data.AccessRequests = d.Me.Applications, d.APIs, d.Me.AccessRequests
	data.Offset, data.Prev, data.Next = offset, -1, -1
	if offset > 0 {
		data.Prev = max(0, offset-appsPage)
	}
	if len(d.Me.Applications) == appsPage {
		data.Next = offset + appsPage
	}
	pg.Data = data
	p.render(w, r, pg.status(), "account", pg)
}

// change runs a mutation of My Account from a form.
func (p *Portal) change(w http.ResponseWriter, r *http.Request, query string, vars map[string]any, done string) {
	p.mutate(w, r, query, vars, "/portal", done, p.account)
}

// mutate runs a page's mutation from a form, then sends the browser to the page at to with the
// notice done, or shows the form's page again (again) with the problem and the form as sent
// (without a session, again's query shows the sign-in page).
func (p *Portal) mutate(w http.ResponseWriter, r *http.Request, query string, vars map[string]any, to, done string,
	again func(http.ResponseWriter, *http.Request, page)) {
	if err := p.call(r, query, vars, nil); err != nil {
		if repeated(err) {
			back(w, r, to, "repeated")
			return
		}
		again(w, r, page{Problem: problemOf(err), Form: r.PostForm})
		return
	}
	back(w, r, to, done)
}

// repeated reports whether err refuses a form sent again with the request token of its first
// sending: the request is made already, and the browser goes on to the page that shows it.
func repeated(err error) bool {
	pr, ok := err.(*Problem)
	return ok && pr.Code == flightgraph.ECodeRepeated
}

// requestToken is the request token a form sent (flightgraph.RequestToken), nil when none, as
// the API takes an absent one.
func requestToken(f url.Values) any {
	if t := f.Get("requestToken"); t != "" {
		return t
	}
	return nil
}

func problemOf(err error) *Problem {
	if pr, ok := err.(*Problem); ok {
		return pr
	}
	return &Problem{Code: flightgraph.ECodeInternal, Message: "the portal could not answer; try again"}
}

func applicationInput(f map[string][]string) map[string]any {
	get := func(k string) string {
		if v := f[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return map[string]any{"name": get("name"), "website": get("website"), "description": get("description"), "callbackUrl": get("callbackUrl")}
}

func (p *Portal) registerApplication(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	p.change(w, r, `mutation($in: ApplicationInput!, $t: String) { registerApplication(input: $in, requestToken: $t) { id } }`,
		map[string]any{"in": applicationInput(f), "t": requestToken(f)}, "registered")
}

func (p *Portal) updateApplication(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	p.change(w, r, `mutation($id: ID!, $in: ApplicationInput!) { updateApplication(id: $id, input: $in) { id } }`,
		map[string]any{"id": r.PathValue("id"), "in": applicationInput(f)}, "updated")
}

func (p *Portal) deleteApplication(w http.ResponseWriter, r *http.Request) {
	p.change(w, r, `mutation($id: ID!) { deleteApplication(id: $id) }`, map[string]any{"id": r.PathValue("id")}, "deleted")
}

func (p *Portal) revokeKey(w http.ResponseWriter, r *http.Request) {
	p.change(w, r, `mutation($id: ID!) { revokeKey(keyId: $id) { id } }`, map[string]any{"id": r.PathValue("id")}, "revoked")
}

func (p *Portal) addAPI(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	p.change(w, r, `mutation($in: AddApiInput!) { addApiToApplication(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"keyId": r.PathValue("id"), "api": f.Get("api"), "plan": planOf(f.Get("plan"))}}, "added")
}

func planOf(s string) string {
	if s == "" {
		return "Default"
	}
	return s
}

func (p *Portal) requestLimits(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	perSecond, err1 := strconv.Atoi(f.Get("estimatedPerSecond"))
	perDay, err2 := strconv.Atoi(f.Get("estimatedPerDay"))
	if err1 != nil || err2 != nil {
		p.account(w, r, page{Form: f, Problem: &Problem{Code: flightgraph.ECodeInvalidParameter, Message: "the estimated calls per second and per day must be whole numbers"}})
		return
	}
	p.change(w, r, `mutation($in: LimitIncreaseInput!) { requestLimitIncrease(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"subscriptionId": r.PathValue("id"), "description": f.Get("description"),
			"estimatedPerSecond": perSecond, "estimatedPerDay": perDay, "requestToken": requestToken(f)}}, "limits")
}

// requestKey and rotateKey send the browser to My Account (post/redirect/get, so that a reload
// repeats nothing), which shows the new key and secret once: they travel in a flash sealed for
// the session (flash.go), never in a URL, and the page after shows them no more. A "Request key"
// form sent again (a double click, the back button) carries the request token of its first
// sending and makes no second key.
func (p *Portal) requestKey(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	p.newSecret(w, r, `mutation($in: RequestKeyInput!) { k: requestKey(input: $in) { key { id apiKey secret } } }`,
		map[string]any{"in": map[string]any{"applicationId": f.Get("applicationId"), "api": f.Get("api"), "plan": planOf(f.Get("plan")),
			"requestToken": requestToken(f)}}, false)
}

func (p *Portal) rotateKey(w http.ResponseWriter, r *http.Request) {
	p.newSecret(w, r, `mutation($id: ID!) { k: rotateKeySecret(keyId: $id) { key { id apiKey secret } } }`,
		map[string]any{"id": r.PathValue("id")}, true)
}

func (p *Portal) newSecret(w http.ResponseWriter, r *http.Request, query string, vars map[string]any, rotated bool) {
	var d struct{ K struct{ Key newKey } }
	if err := p.call(r, query, vars, &d); err != nil {
		if repeated(err) {
			back(w, r, "/portal", "repeated")
			return
		}
		p.account(w, r, page{Problem: problemOf(err), Form: r.PostForm})
		return
	}
	d.K.Key.Rotated = rotated
	p.setFlash(w, r, flash{Secret: &d.K.Key})
	done := "keymade"
	if rotated {
		done = "rotated"
	}
	back(w, r, "/portal", done)
}

func (p *Portal) signInPage(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusOK, "signin", page{Title: "Sign in"})
}

func (p *Portal) signIn(w http.ResponseWriter, r *http.Request) {
	p.open(w, r, "signin", "Sign in", `mutation($e: String!, $p: String!) { s: signIn(email: $e, password: $p) { token } }`,
		map[string]any{"e": r.PostForm.Get("email"), "p": r.PostForm.Get("password")}, "")
}

// open runs a mutation that answers a session (signIn, verifyEmail) and keeps its token in the
// cookie; a refusal shows the form again without its password.
func (p *Portal) open(w http.ResponseWriter, r *http.Request, name, title, query string, vars map[string]any, done string) {
	if p.session(r) != "" {
		// Whoever signs in here now, the browser's previous session ends on the server (with its
		// trial keys), not only in the cookie about to be replaced; one already gone is no matter.
		p.call(r, `mutation { signOut }`, nil, nil)
	}
	var d struct{ S struct{ Token string } }
	if err := p.call(r, query, vars, &d); err != nil {
		f := r.PostForm
		f.Del("password")
		p.fail(w, r, name, page{Title: title, Form: f}, err)
		return
	}
	p.setSession(w, r, d.S.Token)
	back(w, r, "/portal", done)
}

// signUpPage is the sign-up form, or, after a sign-up (post/redirect/get), the page that says
// what comes next.
func (p *Portal) signUpPage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("done") == "signedup" {
		p.render(w, r, http.StatusOK, "message", page{Title: "Check your mail", Notice: notices["signedup"]})
		return
	}
	p.render(w, r, http.StatusOK, "signup", page{Title: "Sign up"})
}

func (p *Portal) signUp(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	err := p.call(r, `mutation($in: SignUpInput!) { signUp(input: $in) { message } }`,
		map[string]any{"in": map[string]any{"email": f.Get("email"), "password": f.Get("password"), "name": f.Get("name")}}, nil)
	if err != nil {
		f.Del("password")
		p.fail(w, r, "signup", page{Title: "Sign up", Form: f}, err)
		return
	}
	back(w, r, "/portal/signup", "signedup")
}

func (p *Portal) verifyPage(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusOK, "verify", page{Title: "Finish signing up", Form: map[string][]string{"token": {r.URL.Query().Get("token")}}})
}

func (p *Portal) verify(w http.ResponseWriter, r *http.Request) {
	p.open(w, r, "verify", "Finish signing up", `mutation($t: String!, $p: String!) { s: verifyEmail(token: $t, password: $p) { token } }`,
		map[string]any{"t": r.PostForm.Get("token"), "p": r.PostForm.Get("password")}, "welcome")
}

func (p *Portal) signOut(w http.ResponseWriter, r *http.Request) {
	if p.session(r) != "" {
		// The session ends on the server, not only in this browser; an expired one is gone already.
		if err := p.call(r, `mutation { signOut }`, nil, nil); err != nil {
			if pr, ok := err.(*Problem); !ok || pr.Code != flightgraph.ECodeNotSignedIn {
				p.fail(w, r, "message", page{Title: "Sign out"}, err)
				return
			}
		}
	}
	p.setSession(w, r, "")
	back(w, r, "/portal", "signedout")
}

// accessRequest is a request for a partner or internal API, as My Account and the operators'
// desk show it.
type accessRequest struct {
	ID, API, APIName, Description, ExpectedUse, Status, Role, Reply, CreatedAt, ReviewedAt string
	Account                                                                                account
}
