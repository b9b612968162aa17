package access_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// failingMail is an access store whose transactions cannot queue mail: the last step of a change
// that mails fails, after everything else of it was written.
type failingMail struct{ flightgraph.AccessStore }

func (f failingMail) InTx(ctx context.Context, fn func(tx flightgraph.AccessTx) error) error {
	return f.AccessStore.InTx(ctx, func(tx flightgraph.AccessTx) error { return fn(failingMailTx{tx}) })
}

type failingMailTx struct{ flightgraph.AccessTx }

var errOutbox = errors.New("the outbox refuses the mail")

func (failingMailTx) EnqueueMail(context.Context, *flightgraph.Mail) error { return errOutbox }

// roleFixture is an access service on an empty store with an operator and a developer who owns a
// key, and the ids of the keys the service said changed.
type roleFixture struct {
	svc           *access.Service
	st            *store.AccessStore
	db            *store.DB
	op, dev       *flightgraph.Account
	keyID         string
	changed       []string
	opCtx, devCtx context.Context
}

func newRoleFixture(t *testing.T, dialect string) *roleFixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t, dialect, os.Getenv)
	f := &roleFixture{db: db, st: store.NewAccessStore(db)}
	now := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	f.svc = &access.Service{Store: f.st, Now: func() time.Time { return now }, PortalURL: "http://flightgraph.test/portal",
		Changed: func(keyID string) { f.changed = append(f.changed, keyID) }}
	account := func(email string, role flightgraph.Role) *flightgraph.Account {
		acc := &flightgraph.Account{ID: access.NewID("acc"), Email: email, Name: strings.Split(email, "@")[0], Role: role, PasswordHash: "x", CreatedAt: now}
		if err := f.st.InTx(ctx, func(tx flightgraph.AccessTx) error { return tx.CreateAccount(ctx, acc) }); err != nil {
			t.Fatal(err)
		}
		return acc
	}
	f.op, f.dev = account("olga@example.com", flightgraph.RoleOperator), account("pat@example.com", flightgraph.RoleDeveloper)
	session := func(acc *flightgraph.Account) context.Context {
		return flightgraph.WithCaller(ctx, &flightgraph.Caller{Kind: flightgraph.CallerSession, Account: acc})
	}
	f.opCtx, f.devCtx = session(f.op), session(f.dev)
	if err := f.svc.SyncCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	app, err := f.svc.RegisterApplication(f.devCtx, flightgraph.ApplicationInput{Name: "Fares feed", Description: "metasearch"})
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := f.svc.RequestKey(f.devCtx, access.KeyRequest{ApplicationID: app.ID, API: "flightstatus"})
	if err != nil {
		t.Fatal(err)
	}
	f.keyID = key.ID
	return f
}

// role reads an account's role from the store.
func (f *roleFixture) role(t *testing.T, id string) flightgraph.Role {
	t.Helper()
	acc, err := f.st.AccountByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return acc.Role
}

// roleAudits returns the audit entries of role changes, newest first.
func (f *roleFixture) roleAudits(t *testing.T) []*flightgraph.AuditEntry {
	t.Helper()
	out, err := f.st.AuditLog(context.Background(), flightgraph.AuditFilter{Action: "account.set_role"}, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mailsTo counts the outbox's messages to an address.
func (f *roleFixture) mailsTo(t *testing.T, addr string) (n int, last string) {
	t.Helper()
	rows, err := storetest.SQL(t, f.db).Query(`SELECT subject, body FROM mail_outbox ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var subject, body string
		if err := rows.Scan(&subject, &body); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(body, "made your flightgraph account") && strings.Contains(body, "Hello "+strings.Split(addr, "@")[0]) {
			n, last = n+1, subject+"\n"+body
		}
	}
	return n, last
}

// TestSetAccountRole: an operator's change of role is written with its audit entry (actor, the
// role before and after) and its mail, and every key of the account is said to have changed, so
// that caches drop what they knew of its owner; a change that cannot queue its mail leaves the role,
// the audit log and the outbox as they were. The refusals: not an operator, an unknown or
// malformed account, a role not given here, an operator's role (one's own included).
func TestSetAccountRole(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newRoleFixture(t, dialect)
		ctx := f.opCtx

		t.Run("mail fails", func(t *testing.T) {
			failing := &access.Service{Store: failingMail{f.st}, Now: f.svc.Now, PortalURL: f.svc.PortalURL, Changed: f.svc.Changed}
			f.changed = nil
			if _, err := failing.SetAccountRole(ctx, f.dev.ID, flightgraph.RolePartner); !errors.Is(err, errOutbox) {
				t.Fatalf("SetAccountRole with a failing outbox: %v", err)
			}
			if r := f.role(t, f.dev.ID); r != flightgraph.RoleDeveloper {
				t.Errorf("the role is %s after a change that failed, want developer", r)
			}
			if a := f.roleAudits(t); len(a) != 0 {
				t.Errorf("a change that failed is audited: %+v", a[0])
			}
			if n, _ := f.mailsTo(t, f.dev.Email); n != 0 {
				t.Errorf("%d mails for a change that failed", n)
			}
			if len(f.changed) != 0 {
				t.Errorf("keys said changed by a change that failed: %v", f.changed)
			}
		})

		t.Run("partner", func(t *testing.T) {
			f.changed = nil
			acc, err := f.svc.SetAccountRole(ctx, f.dev.ID, flightgraph.RolePartner)
			if err != nil {
				t.Fatal(err)
			}
			if acc.Role != flightgraph.RolePartner || f.role(t, f.dev.ID) != flightgraph.RolePartner {
				t.Fatalf("answered %s, stored %s", acc.Role, f.role(t, f.dev.ID))
			}
			audits := f.roleAudits(t)
			if len(audits) != 1 {
				t.Fatalf("%d role audits, want 1", len(audits))
			}
			a := audits[0]
			if a.Actor != f.op.ID || a.TargetType != "account" || a.TargetID != f.dev.ID ||
				!strings.Contains(a.Before, `"Role":"developer"`) || !strings.Contains(a.After, `"Role":"partner"`) || strings.Contains(a.After, "PasswordHash") {
				t.Errorf("audit entry: %+v", a)
			}
			n, mail := f.mailsTo(t, f.dev.Email)
			if n != 1 || !strings.Contains(mail, "now a partner account") || !strings.Contains(mail, "request these APIs: Metasearch.") {
				t.Errorf("%d mails, the last:\n%s", n, mail)
			}
			if len(f.changed) != 1 || f.changed[0] != f.keyID {
				t.Errorf("keys said changed: %v, want the account's one key %s", f.changed, f.keyID)
			}
			// The same role again changes nothing: no audit entry, no mail.
			if _, err := f.svc.SetAccountRole(ctx, f.dev.ID, flightgraph.RolePartner); err != nil {
				t.Fatal(err)
			}
			if len(f.roleAudits(t)) != 1 {
				t.Error("giving the role the account has is audited")
			}
			if n, _ := f.mailsTo(t, f.dev.Email); n != 1 {
				t.Errorf("giving the role the account has is mailed: %d mails", n)
			}
		})

		t.Run("developer again", func(t *testing.T) {
			if _, err := f.svc.SetAccountRole(ctx, f.dev.ID, flightgraph.RoleDeveloper); err != nil {
				t.Fatal(err)
			}
			if _, mail := f.mailsTo(t, f.dev.Email); !strings.Contains(mail, "your keys stop calling them now: Metasearch.") {
				t.Errorf("the demotion's mail:\n%s", mail)
			}
		})

		t.Run("refusals", func(t *testing.T) {
			for _, c := range []struct {
				name    string
				ctx     context.Context
				account string
				role    flightgraph.Role
				code    string
				param   string
			}{
				{"anonymous", context.Background(), f.dev.ID, flightgraph.RoleStaff, flightgraph.ECodeNotSignedIn, ""},
				{"a developer", f.devCtx, f.dev.ID, flightgraph.RoleStaff, flightgraph.ECodeOperatorsOnly, ""},
				{"unknown account", ctx, access.NewID("acc"), flightgraph.RoleStaff, flightgraph.ECodeNotFound, "accountId"},
				{"malformed account", ctx, "acc_\x00", flightgraph.RoleStaff, flightgraph.ECodeNotFound, "accountId"},
				{"operator role", ctx, f.dev.ID, flightgraph.RoleOperator, flightgraph.ECodeInvalidParameter, "role"},
				{"no role", ctx, f.dev.ID, "", flightgraph.ECodeMissingParameter, "role"},
				{"unknown role", ctx, f.dev.ID, "admin", flightgraph.ECodeInvalidParameter, "role"},
				{"one's own role", ctx, f.op.ID, flightgraph.RoleStaff, flightgraph.ECodeInvalidState, "accountId"},
			} {
				_, err := f.svc.SetAccountRole(c.ctx, c.account, c.role)
				var fe *flightgraph.Error
				if !errors.As(err, &fe) || fe.Code != c.code || fe.Parameter != c.param {
					t.Errorf("%s: %v, want %s naming %q", c.name, err, c.code, c.param)
				}
			}
			if r := f.role(t, f.op.ID); r != flightgraph.RoleOperator {
				t.Errorf("the operator is %s", r)
			}
			// Another operator's role is out of reach too: nobody locks the operators out.
			other := &flightgraph.Account{ID: access.NewID("acc"), Email: "otto@example.com", Name: "otto", Role: flightgraph.RoleOperator, PasswordHash: "x", CreatedAt: f.op.CreatedAt}
			if err := f.st.InTx(context.Background(), func(tx flightgraph.AccessTx) error { return tx.CreateAccount(context.Background(), other) }); err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.SetAccountRole(ctx, other.ID, flightgraph.RoleDeveloper); flightgraph.ErrorCode(err) != flightgraph.ECodeInvalidState {
				t.Errorf("demoting another operator: %v", err)
			}
			if r := f.role(t, other.ID); r != flightgraph.RoleOperator {
				t.Errorf("the other operator is %s", r)
			}
		})
	})
}
