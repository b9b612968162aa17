package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// developerWithKey signs up a developer with an application, a key and an approved subscription.
func developerWithKey(t *testing.T, s *testServer, op *portal, email string) (dev *portal, appID, keyID, subID string) {
	t.Helper()
	dev = s.signUp(t, email, developerPassword, "Dev")
	var reg struct{ RegisterApplication struct{ ID string } }
	dev.do(t, `mutation { registerApplication(input: {name: "App", description: "d"}) { id } }`, nil, &reg)
	var rk struct {
		RequestKey struct {
			Key struct {
				ID            string
				Subscriptions []struct{ ID string }
			}
		}
	}
	dev.do(t, `mutation($a: ID!) { requestKey(input: {applicationId: $a, api: "opendata"}) { key { id subscriptions { id } } } }`, map[string]any{"a": reg.RegisterApplication.ID}, &rk)
	subID = rk.RequestKey.Key.Subscriptions[0].ID
	op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { id } }`, map[string]any{"id": subID}, nil)
	return dev, reg.RegisterApplication.ID, rk.RequestKey.Key.ID, subID
}

// TestOthersObjectsAreNotFound: a developer using another developer's application, key or
// subscription id gets not-found and changes nothing, for every portal operation that takes an
// id; and the whole errors array of that answer is byte for byte the one for an id that does not
// exist or is malformed, so that nobody can tell whether an id is someone's.
func TestOthersObjectsAreNotFound(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword)
		alice, appID, keyID, subID := developerWithKey(t, s, op, "alice@example.com")
		bob, _, _, _ := developerWithKey(t, s, op, "bob@example.com")
		meQuery := `{ me { applications { id name website description callbackUrl updatedAt keys { id apiKey status subscriptions { id api plan status limits { perSecond perDay } } } } } }`
		var before, after json.RawMessage
		alice.do(t, meQuery, nil, &before)
		auditBefore := len(s.audit(t, op))
		others := map[string]string{"app": appID, "key": keyID, "sub": subID}
		for _, c := range []struct{ name, kind, q string }{
			{"updateApplication", "app", `mutation($id: ID!) { updateApplication(id: $id, input: {name: "Taken", description: "x"}) { id } }`},
			{"deleteApplication", "app", `mutation($id: ID!) { deleteApplication(id: $id) }`},
			{"requestKey", "app", `mutation($id: ID!) { requestKey(input: {applicationId: $id, api: "opendata"}) { key { id } } }`},
			{"addApiToApplication", "key", `mutation($id: ID!) { addApiToApplication(input: {keyId: $id, api: "inspire"}) { id } }`},
			{"rotateKeySecret", "key", `mutation($id: ID!) { rotateKeySecret(keyId: $id) { key { secret } } }`},
			{"revokeKey", "key", `mutation($id: ID!) { revokeKey(keyId: $id) { id } }`},
			{"tryKey", "key", `mutation($id: ID!) { tryKey(keyId: $id) { apiKey secret } }`},
			{"requestLimitIncrease", "sub", `mutation($id: ID!) { requestLimitIncrease(input: {subscriptionId: $id, description: "more", estimatedPerSecond: 10, estimatedPerDay: 10000}) { id } }`},
		} {
			t.Run(c.name, func(t *testing.T) {
				theirs := bob.rawErrors(t, c.q, map[string]any{"id": others[c.kind]})
				if code := gqlCode(t, `{"errors":`+theirs+`}`); code != flightgraph.ECodeNotFound {
					t.Fatalf("someone else's %s: %s, want %s", c.kind, theirs, flightgraph.ECodeNotFound)
				}
				// The same work too: as many SQL round trips, so that time tells nothing either.
				work := s.queries.Load()
				other := map[string]string{"app": keyID, "key": subID, "sub": appID}[c.kind] // an id of another kind
				for _, id := range []string{access.NewID(c.kind), other, "nope", c.kind + "_' OR '1'='1", c.kind + "_\x00", strings.Repeat(c.kind, 3000), "é\u202e"} {
					if got := bob.rawErrors(t, c.q, map[string]any{"id": id}); got != theirs {
						t.Errorf("id %.40q answers\n  %s\nbut someone else's id answers\n  %s", id, got, theirs)
					}
					if n := s.queries.Load(); n != work {
						t.Errorf("id %.40q cost %d SQL round trips, someone else's %d", id, n, work)
					}
				}
			})
		}
		alice.do(t, meQuery, nil, &after)
		if string(before) != string(after) {
			t.Fatalf("alice's account changed:\n%s\n%s", before, after)
		}
		if n := len(s.audit(t, op)); n != auditBefore {
			t.Fatalf("the audit log grew by %d entries from refused operations", n-auditBefore)
		}
	})
}

// rawErrors runs an operation as the user and returns the errors array of the answer as sent.
func (p *portal) rawErrors(t *testing.T, q string, vars map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, p.s.URL+"/portal/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Errors json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Errors) == 0 {
		t.Fatalf("%s: no errors (%v)", firstLine(q), err)
	}
	return string(out.Errors)
}

func (s *testServer) audit(t *testing.T, op *portal) []map[string]any {
	t.Helper()
	var d struct{ AuditLog []map[string]any }
	op.do(t, `{ auditLog(first: 200) { id action } }`, nil, &d)
	return d.AuditLog
}

// TestOperatorOperationsAreRefused: a non-operator gets a refusal from every operator operation,
// whatever its arguments (a bad one is not even looked at).
func TestOperatorOperationsAreRefused(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		op := s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword)
		dev, _, _, subID := developerWithKey(t, s, op, "carol@example.com")
		var lr struct{ RequestLimitIncrease struct{ ID string } }
		dev.do(t, `mutation($s: ID!) { requestLimitIncrease(input: {subscriptionId: $s, description: "more", estimatedPerSecond: 10, estimatedPerDay: 10000}) { id } }`,
			map[string]any{"s": subID}, &lr)
		anon := &portal{s: s}
		for _, c := range []struct{ name, q string }{
			{"pendingSubscriptions", `{ pendingSubscriptions { id } }`},
			{"limitIncreaseRequests", `{ limitIncreaseRequests { id } }`},
			{"limitIncreaseRequests with usage", `{ limitIncreaseRequests { subscription { usage(days: 90) { day calls } limitRequests(first: 20) { reply } } } }`},
			{"auditLog", `{ auditLog { id } }`},
			{"auditLog with filters", `{ auditLog(action: "subscription.", actor: "system", targetType: "subscription", targetId: "` + subID + `") { id } }`},
			{"auditLog with a bad filter", `{ auditLog(action: "` + strings.Repeat("x", 101) + `") { id } }`},
			{"auditActions", `{ auditActions }`},
			{"accounts", `{ accounts { id email role } }`},
			{"accounts with filters", `{ accounts(first: 200, offset: 0, role: DEVELOPER, email: "example") { id } }`},
			{"accounts with a bad page", `{ accounts(first: 0) { id } }`},
			{"approveSubscription", `mutation { approveSubscription(id: "` + subID + `") { id } }`},
			{"rejectSubscription", `mutation { rejectSubscription(id: "` + subID + `", reason: "no") { id } }`},
			{"revokeSubscription", `mutation { revokeSubscription(id: "` + subID + `", reason: "no") { id } }`},
			{"reviewLimitIncrease", `mutation { reviewLimitIncrease(id: "` + lr.RequestLimitIncrease.ID + `", approve: true, perSecond: 10, perDay: 10000, reply: "ok") { id } }`},
		} {
			t.Run(c.name, func(t *testing.T) {
				dev.fails(t, flightgraph.ECodeOperatorsOnly, c.q, nil)
				anon.fails(t, flightgraph.ECodeNotSignedIn, c.q, nil)
			})
		}
		var me struct {
			Me struct {
				Applications []struct {
					Keys []struct {
						Subscriptions []struct {
							Status string
							Limits struct{ PerSecond int }
						}
					}
				}
			}
		}
		dev.do(t, `{ me { applications { keys { subscriptions { status limits { perSecond } } } } } }`, nil, &me)
		if sub := me.Me.Applications[0].Keys[0].Subscriptions[0]; sub.Status != "approved" || sub.Limits.PerSecond != 5 {
			t.Fatalf("refused operations changed the subscription: %+v", sub)
		}
	})
}
