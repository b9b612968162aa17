package server_test

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// keyCount counts the keys of the portal's account.
func keyCount(t *testing.T, p *portal) int {
	t.Helper()
	var d struct {
		Me struct {
			Applications []struct{ Keys []struct{ ID string } }
		}
	}
	p.do(t, `{ me { applications { keys { id } } } }`, nil, &d)
	n := 0
	for _, a := range d.Me.Applications {
		n += len(a.Keys)
	}
	return n
}

// TestMyAccountPostRedirectGet: "Request key" answers with a redirect to My Account, which shows
// the new key and secret once; the same form sent again (its request token) makes no second key
// and says so; and a form sent with the token of another account's form is still its own.
func TestMyAccountPostRedirectGet(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		dev := s.signUp(t, "prg@example.com", developerPassword, "Dev")
		var reg struct{ RegisterApplication struct{ ID string } }
		dev.do(t, `mutation { registerApplication(input: {name: "App", description: "d"}) { id } }`, nil, &reg)
		v := newVisitor(t, s.URL, nil)
		v.signIn("prg@example.com", developerPassword)

		form := url.Values{"applicationId": {reg.RegisterApplication.ID}, "api": {"flightstatus"}, "requestToken": {"form-token-0123456789"}}
		status, h, _ := v.post("/portal/keys", form)
		if status != http.StatusSeeOther || h.Get("Location") != "/portal?done=keymade" {
			t.Fatalf("request key: %d %s", status, h.Get("Location"))
		}
		if strings.Contains(h.Get("Location"), "fgs_") {
			t.Fatal("the secret is in the redirect's URL")
		}
		_, body := v.get("/portal?done=keymade")
		if !strings.Contains(body, `id="new-secret"`) || !strings.Contains(body, "fgs_") || !strings.Contains(body, "The key is made") {
			t.Errorf("My Account after the redirect shows no new key: %.2000s", body)
		}
		// A reload shows it no more, and makes nothing.
		if _, body := v.get("/portal?done=keymade"); strings.Contains(body, `id="new-secret"`) {
			t.Error("the secret is shown again on a reload")
		}
		if n := keyCount(t, dev); n != 1 {
			t.Fatalf("%d keys after one request", n)
		}
		// The same form again (a double click, the back button): nothing new, and the page says so.
		for range 2 {
			status, h, _ = v.post("/portal/keys", form)
			if status != http.StatusSeeOther || h.Get("Location") != "/portal?done=repeated" {
				t.Errorf("the form sent again: %d %s", status, h.Get("Location"))
			}
		}
		if n := keyCount(t, dev); n != 1 {
			t.Errorf("%d keys after the form was sent three times", n)
		}
		// On the API, the same token is PORTAL_409.002; another token is another request.
		q := `mutation($a: ID!, $t: String) { requestKey(input: {applicationId: $a, api: "schedule", requestToken: $t}) { key { id } } }`
		dev.fails(t, flightgraph.ECodeRepeated, q, map[string]any{"a": reg.RegisterApplication.ID, "t": "form-token-0123456789"})
		dev.fails(t, flightgraph.ECodeInvalidParameter, q, map[string]any{"a": reg.RegisterApplication.ID, "t": "short"})
		dev.do(t, q, map[string]any{"a": reg.RegisterApplication.ID, "t": "another-token-0123456789"}, nil)
		if n := keyCount(t, dev); n != 2 {
			t.Errorf("%d keys after a second request with its own token", n)
		}
		// Another account's use of the token is no matter.
		other := s.signUp(t, "prg2@example.com", developerPassword, "Other")
		other.do(t, `mutation($t: String) { registerApplication(input: {name: "App", description: "d"}, requestToken: $t) { id } }`,
			map[string]any{"t": "form-token-0123456789"}, nil)

		// Rotating answers with a redirect too, and the new secret once.
		var me struct {
			Me struct {
				Applications []struct{ Keys []struct{ ID string } }
			}
		}
		dev.do(t, `{ me { applications { keys { id } } } }`, nil, &me)
		status, h, _ = v.post("/portal/keys/"+me.Me.Applications[0].Keys[0].ID+"/rotate", url.Values{})
		if status != http.StatusSeeOther || h.Get("Location") != "/portal?done=rotated" {
			t.Errorf("rotate: %d %s", status, h.Get("Location"))
		}
		if _, body := v.get("/portal?done=rotated"); !strings.Contains(body, `id="new-secret"`) {
			t.Error("no new secret after rotating")
		}

		// "Add another API" offers only what the key lacks.
		_, body = v.get("/portal")
		for _, sel := range strings.Split(body, `<select id="add-`)[1:] {
			sel = sel[:strings.Index(sel, "</select>")]
			if strings.Contains(sel, `value="flightstatus"`) && strings.Contains(sel, `value="schedule"`) {
				t.Errorf("Add another API offers an API the key has: %s", sel)
			}
		}

		// Sign-up answers with a redirect as well: a reload sends no second mail.
		anon := newVisitor(t, s.URL, nil)
		status, h, _ = anon.post("/portal/signup", url.Values{"email": {"new@example.com"}, "password": {developerPassword}, "name": {"New"}})
		if status != http.StatusSeeOther || h.Get("Location") != "/portal/signup?done=signedup" {
			t.Errorf("sign up: %d %s", status, h.Get("Location"))
		}
		if _, body := anon.get("/portal/signup?done=signedup"); !strings.Contains(body, "Check your mail") {
			t.Errorf("after signing up: %.500s", body)
		}
	})
}

// TestAccessRequests: a developer asks for Metasearch from the catalogue ("on request"); the
// operators are mailed; an operator grants it with the partner role from the desk; the developer
// sees the answer on My Account, is mailed, and may now request a key for it. A refusal needs a
// reason, which the developer reads. Both answers are in the audit log.
func TestAccessRequests(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		const email = "partner-to-be@example.com"
		dev := s.signUp(t, email, developerPassword, "Pat")
		v := newVisitor(t, s.URL, nil)
		v.signIn(email, developerPassword)
		_, body := v.get("/portal/apis")
		if !strings.Contains(body, `id="api-metasearch"`) || !strings.Contains(body, `id="api-cargo"`) || !strings.Contains(body, "on request") {
			t.Fatalf("the catalogue has no on-request APIs: %.3000s", body)
		}
		opMailsBefore := len(s.mailsTo(t, s.demo.OperatorEmail))
		form := url.Values{"api": {"metasearch"}, "description": {"A fare comparison site"}, "expectedUse": {"2 calls/s in the day"},
			"requestToken": {"access-token-0123456789"}}
		status, h, _ := v.post("/portal/access", form)
		if status != http.StatusSeeOther || h.Get("Location") != "/portal/apis?done=asked" {
			t.Fatalf("request access: %d %s", status, h.Get("Location"))
		}
		if status, h, _ := v.post("/portal/access", form); status != http.StatusSeeOther || h.Get("Location") != "/portal/apis?done=repeated" {
			t.Errorf("the form sent again: %d %s", status, h.Get("Location"))
		}
		if n := len(s.mailsTo(t, s.demo.OperatorEmail)); n != opMailsBefore+1 {
			t.Errorf("the operator got %d mails, want 1", n-opMailsBefore)
		}
		// Without a token, a second request for the API while one waits is a conflict.
		ask := `mutation($api: String!) { requestApiAccess(input: {api: $api, description: "d", expectedUse: "u"}) { id status } }`
		dev.fails(t, flightgraph.ECodeConflict, ask, map[string]any{"api": "metasearch"})
		dev.fails(t, flightgraph.ECodeInvalidParameter, ask, map[string]any{"api": "flightstatus"})
		dev.do(t, ask, map[string]any{"api": "cargo"}, nil)
		dev.fails(t, flightgraph.ECodeOperatorsOnly, `{ accessRequests { id } }`, nil)

		op := s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword)
		var pending struct {
			AccessRequests []struct {
				ID, API, APIName string
				Account          struct{ Email string }
			}
		}
		op.do(t, `{ accessRequests(status: PENDING) { id api apiName account { email } } }`, nil, &pending)
		ids := map[string]string{}
		for _, r := range pending.AccessRequests {
			if r.Account.Email == email {
				ids[r.API] = r.ID
			}
		}
		if len(ids) != 2 {
			t.Fatalf("pending access requests: %+v", pending)
		}
		// The desk shows them, and answers from its form.
		ov := newVisitor(t, s.URL, nil)
		ov.signIn(s.demo.OperatorEmail, s.demo.OperatorPassword)
		if _, body := ov.get("/portal/operators"); !strings.Contains(body, `action="/portal/operators/access/`+ids["metasearch"]+`"`) {
			t.Errorf("the desk has no form for the request: %.3000s", body)
		}
		if status, h, _ := ov.post("/portal/operators/access/"+ids["metasearch"], url.Values{"decision": {"grant"}, "role": {"partner"}, "reply": {"Welcome aboard"}}); status != http.StatusSeeOther ||
			h.Get("Location") != "/portal/operators?done=accessgranted" {
			t.Errorf("grant: %d %s", status, h.Get("Location"))
		}
		answer := `mutation($id: ID!, $grant: Boolean!, $role: Role, $reply: String) { answerAccessRequest(id: $id, grant: $grant, role: $role, reply: $reply) { status } }`
		op.fails(t, flightgraph.ECodeInvalidState, answer, map[string]any{"id": ids["metasearch"], "grant": false, "reply": "again"})
		op.fails(t, flightgraph.ECodeMissingParameter, answer, map[string]any{"id": ids["cargo"], "grant": false})
		op.fails(t, flightgraph.ECodeInvalidParameter, answer, map[string]any{"id": ids["cargo"], "grant": true, "role": "PARTNER"})
		op.do(t, answer, map[string]any{"id": ids["cargo"], "grant": false, "reply": "Cargo is for the airline's own staff"}, nil)

		var mine struct {
			Me struct {
				Account        struct{ Role string }
				AccessRequests []struct{ API, Status, Role, Reply string }
			}
		}
		dev.do(t, `{ me { account { role } accessRequests { api status role reply } } }`, nil, &mine)
		got := map[string]string{}
		for _, r := range mine.Me.AccessRequests {
			got[r.API] = r.Status + "/" + r.Role + "/" + r.Reply
		}
		if mine.Me.Account.Role != "partner" || got["metasearch"] != "granted/partner/Welcome aboard" || got["cargo"] != "refused//Cargo is for the airline's own staff" {
			t.Errorf("the developer sees role %s and %v", mine.Me.Account.Role, got)
		}
		if _, body := v.get("/portal"); !strings.Contains(body, `data-access-request="metasearch"`) || !strings.Contains(body, "Cargo is for the airline&#39;s own staff") {
			t.Errorf("My Account shows no answers: %.3000s", body)
		}
		subjects := ""
		for _, m := range s.mailsTo(t, email) {
			subjects += m.Subject + "\n"
		}
		if !strings.Contains(subjects, "Your request for Metasearch is granted") || !strings.Contains(subjects, "Your request for Cargo is refused") {
			t.Errorf("the developer's mails: %s", subjects)
		}
		var audit struct {
			AuditLog []struct{ Action, TargetID string }
		}
		op.do(t, `{ auditLog(action: "access_request.") { action targetId } }`, nil, &audit)
		actions := map[string]int{}
		for _, e := range audit.AuditLog {
			actions[e.Action]++
		}
		if actions["access_request.create"] != 2 || actions["access_request.granted"] != 1 || actions["access_request.refused"] != 1 {
			t.Errorf("the audit log: %v", actions)
		}
		// A partner now: Metasearch is in the APIs it may request a key for, and not on request.
		if _, body := v.get("/portal/apis"); strings.Contains(body, `<article class="card onrequest" aria-labelledby="api-metasearch"`) {
			t.Error("Metasearch is still on request for a partner")
		}
		var reg struct{ RegisterApplication struct{ ID string } }
		dev.do(t, `mutation { registerApplication(input: {name: "Meta", description: "d"}) { id } }`, nil, &reg)
		dev.do(t, `mutation($a: ID!) { requestKey(input: {applicationId: $a, api: "metasearch"}) { key { id } } }`, map[string]any{"a": reg.RegisterApplication.ID}, nil)
	})
}
