package server_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// developerWithKey signs up a developer with an application, a key and an approved subscription.
func developerWithKey(t *testing.T, s *testServer, op *portal, email string) (dev *portal, appID, keyID, subID string) {
	t.Helper()
	anon := &portal{s: s}
	anon.do(t, `mutation($e: String!, $p: String!) { signUp(input: {email: $e, password: $p, name: "Dev"}) { token } }`,
		map[string]any{"e": email, "p": developerPassword}, nil)
	dev = s.signIn(t, email, developerPassword)
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
// subscription ids gets not-found and changes nothing, for every portal operation.
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
		ids := map[string]any{"app": appID, "key": keyID, "sub": subID}
		for _, c := range []struct{ name, q string }{
			{"updateApplication", `mutation($app: ID!) { updateApplication(id: $app, input: {name: "Taken", description: "x"}) { id } }`},
			{"deleteApplication", `mutation($app: ID!) { deleteApplication(id: $app) }`},
			{"requestKey", `mutation($app: ID!) { requestKey(input: {applicationId: $app, api: "opendata"}) { key { id } } }`},
			{"addApiToApplication", `mutation($key: ID!) { addApiToApplication(input: {keyId: $key, api: "inspire"}) { id } }`},
			{"rotateKeySecret", `mutation($key: ID!) { rotateKeySecret(keyId: $key) { key { secret } } }`},
			{"revokeKey", `mutation($key: ID!) { revokeKey(keyId: $key) { id } }`},
			{"requestLimitIncrease", `mutation($sub: ID!) { requestLimitIncrease(input: {subscriptionId: $sub, description: "more", estimatedPerSecond: 10, estimatedPerDay: 10000}) { id } }`},
		} {
			t.Run(c.name, func(t *testing.T) {
				vars := map[string]any{}
				for k, v := range ids {
					if strings.Contains(c.q, "$"+k) {
						vars[k] = v
					}
				}
				bob.fails(t, flightgraph.ECodeNotFound, c.q, vars)
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

func (s *testServer) audit(t *testing.T, op *portal) []map[string]any {
	t.Helper()
	var d struct{ AuditLog []map[string]any }
	op.do(t, `{ auditLog(first: 200) { id action } }`, nil, &d)
	return d.AuditLog
}

// TestOperatorOperationsAreRefused: a non-operator gets a refusal from every operator operation.
func TestOperatorOperationsAreRefused(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	op := s.signIn(t, s.demo.OperatorEmail, s.demo.OperatorPassword)
	dev, _, _, subID := developerWithKey(t, s, op, "carol@example.com")
	var lr struct{ RequestLimitIncrease struct{ ID string } }
	dev.do(t, `mutation($s: ID!) { requestLimitIncrease(input: {subscriptionId: $s, description: "more", estimatedPerSecond: 10, estimatedPerDay: 10000}) { id } }`,
		map[string]any{"s": subID}, &lr)
	anon := &portal{s: s}
	for _, c := range []struct{ name, q string }{
		{"pendingSubscriptions", `{ pendingSubscriptions { id } }`},
		{"limitIncreaseRequests", `{ limitIncreaseRequests { id } }`},
		{"auditLog", `{ auditLog { id } }`},
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
}
