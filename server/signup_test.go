package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// postRaw posts a GraphQL operation without credentials and returns the body as sent.
func (s *testServer) postRaw(t *testing.T, body string) string {
	t.Helper()
	resp, err := http.Post(s.URL+"/portal/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// count returns the number of rows of a table.
func (s *testServer) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := storetest.SQL(t, s.db).QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// signUpBody is the request body of a sign-up of email with one password for every address.
func signUpBody(email string) string {
	return fmt.Sprintf(`{"query":"mutation($in: SignUpInput!) { signUp(input: $in) { message } }","variables":{"in":{"email":%q,"password":"a password of mine","name":"Eve"}}}`, email)
}

// TestSignUpTellsNothing: signUp answers a registered address and a new one with the same bytes,
// creates no account and no session for either (so signing in with the password just given
// tells nothing either), mails the new address its link and the registered one's owner a notice,
// and changes nothing of the existing account.
func TestSignUpTellsNothing(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		registered, fresh := s.demo.DeveloperEmail, "newcomer@example.com"
		accounts := s.count(t, "accounts")
		known := s.postRaw(t, signUpBody(registered))
		unknown := s.postRaw(t, signUpBody(fresh))
		if known != unknown {
			t.Fatalf("signUp tells a registered address from a new one:\n  registered: %s\n  new:        %s", known, unknown)
		}
		if !strings.Contains(known, access.SignUpAnswer) {
			t.Fatalf("signUp answered %s", known)
		}
		if n := s.count(t, "accounts"); n != accounts {
			t.Fatalf("signUp made %d accounts before any address was verified", n-accounts)
		}
		anon := &portal{s: s}
		for _, email := range []string{registered, fresh} {
			anon.fails(t, flightgraph.ECodeBadLogin, `mutation($e: String!) { signIn(email: $e, password: "a password of mine") { token } }`, map[string]any{"e": email})
		}
		s.signIn(t, registered, s.demo.DeveloperPassword) // the owner's password still works

		notice := s.mailsTo(t, registered)
		if len(notice) != 1 || !strings.Contains(notice[0].Subject, "tried to sign up") || signUpTokenRE.MatchString(notice[0].Body) ||
			!strings.Contains(notice[0].Body, testPortalURL) {
			t.Fatalf("the owner's notice: %+v", notice)
		}
		link := s.mailsTo(t, fresh)
		token := s.signUpToken(t, fresh)
		if len(link) != 1 || token == "" || !strings.Contains(link[0].Body, testPortalURL+"/verify?token="+token) || strings.Contains(link[0].Body, "Eve") {
			t.Fatalf("the new address's mail (token %q): %+v", token, link)
		}
		if strings.Contains(s.dumpDB(t), "a password of mine") {
			t.Error("a sign-up's password is stored in plaintext")
		}
	})
}

// TestVerifyEmail: the token of a sign-up mail creates the account and signs it in, once; a
// tampered, unknown or expired token does nothing; the address's other sign-ups die with it; and
// an address that got an account meanwhile is a conflict that spends the token.
func TestVerifyEmail(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		var now atomic.Pointer[time.Time]
		start := storetest.Now
		now.Store(&start)
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) {
			c.Now = func() time.Time { return *now.Load() }
		})
		anon := &portal{s: s}
		signUp := func(email, password string) string {
			t.Helper()
			anon.do(t, `mutation($e: String!, $p: String!) { signUp(input: {email: $e, password: $p, name: "Grace"}) { message } }`, map[string]any{"e": email, "p": password}, nil)
			return s.signUpToken(t, email)
		}
		verify := `mutation($t: String!, $p: String!) { verifyEmail(token: $t, password: $p) { token account { email role } } }`
		vars := func(token, password string) map[string]any { return map[string]any{"t": token, "p": password} }

		first := signUp("grace@example.com", "first password!")
		second := signUp("grace@example.com", "second password")
		if first == second {
			t.Fatal("two sign-ups got one token")
		}
		swap := map[bool]string{true: "b", false: "a"}[strings.HasSuffix(second, "a")]
		tampered := second[:len(second)-1] + swap // one character off: the checksum fails
		for name, tok := range map[string]string{"tampered": tampered, "unknown": access.NewCredential(access.KindSignUp), "garbage": "nope",
			"session-shaped": access.NewCredential(access.KindSession)} {
			if resp := anon.try(t, verify, vars(tok, "second password")); len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeInvalidParameter {
				t.Errorf("%s token: %+v", name, resp.Errors)
			}
		}
		// The token with the other sign-up's password, as whoever reads the mailbox would try
		// with a link someone else asked for: refused, and nothing spent.
		if resp := anon.try(t, verify, vars(second, "first password!")); len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeInvalidParameter {
			t.Errorf("the other password: %+v", resp.Errors)
		}
		var v struct {
			VerifyEmail struct {
				Token   string
				Account struct{ Email, Role string }
			}
		}
		anon.do(t, verify, vars(second, "second password"), &v)
		if v.VerifyEmail.Account.Email != "grace@example.com" || v.VerifyEmail.Account.Role != "developer" {
			t.Fatalf("verifyEmail made %+v", v.VerifyEmail.Account)
		}
		grace := &portal{s: s, token: v.VerifyEmail.Token}
		grace.do(t, `{ me { account { email } } }`, nil, nil)
		s.signIn(t, "grace@example.com", "second password")
		anon.fails(t, flightgraph.ECodeBadLogin, `mutation { signIn(email: "grace@example.com", password: "first password!") { token } }`, nil)
		for name, c := range map[string][2]string{"used": {second, "second password"}, "the address's other": {first, "first password!"}} {
			if resp := anon.try(t, verify, vars(c[0], c[1])); len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeInvalidParameter {
				t.Errorf("%s token: %+v", name, resp.Errors)
			}
		}

		// A token works for SignUpTTL, not a microsecond more.
		late := signUp("late@example.com", "a late password")
		onTime := signUp("ontime@example.com", "an on-time password")
		expiry := start.Add(access.SignUpTTL)
		justBefore := expiry.Add(-time.Millisecond)
		now.Store(&justBefore)
		anon.do(t, verify, vars(onTime, "an on-time password"), nil)
		now.Store(&expiry)
		if resp := anon.try(t, verify, vars(late, "a late password")); len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeInvalidParameter {
			t.Errorf("expired token: %+v", resp.Errors)
		}

		// An address that got an account meanwhile: a conflict, and the token is spent. (Signing
		// up also clears the expired sign-ups.)
		taken := signUp("taken@example.com", "a password again")
		if _, err := s.srv.Access.CreateAccount(t.Context(), flightgraph.SignUpInput{Email: "taken@example.com", Password: "the operator's choice", Name: "T"},
			flightgraph.RoleDeveloper, ""); err != nil {
			t.Fatal(err)
		}
		anon.fails(t, flightgraph.ECodeConflict, verify, vars(taken, "a password again"))
		anon.fails(t, flightgraph.ECodeInvalidParameter, verify, vars(taken, "a password again"))
		if n := s.count(t, "signups"); n != 0 {
			t.Errorf("%d sign-ups are left; every one was verified, spent or expired", n)
		}
	})
}

// TestSignUpNeedsItsMail: a sign-up whose mail cannot be queued leaves nothing behind: the
// pending sign-up and its mail commit together or not at all.
func TestSignUpNeedsItsMail(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		raw := storetest.SQL(t, s.db)
		if _, err := raw.Exec(`ALTER TABLE mail_outbox RENAME TO mail_outbox_away`); err != nil {
			t.Fatal(err)
		}
		anon := &portal{s: s}
		for _, email := range []string{"lost@example.com", s.demo.DeveloperEmail} {
			anon.fails(t, flightgraph.ECodeInternal, `mutation($e: String!) { signUp(input: {email: $e, password: "a password of mine", name: "L"}) { message } }`, map[string]any{"e": email})
		}
		if _, err := raw.Exec(`ALTER TABLE mail_outbox_away RENAME TO mail_outbox`); err != nil {
			t.Fatal(err)
		}
		if n := s.count(t, "signups"); n != 0 {
			t.Fatalf("%d sign-ups were recorded without their mail", n)
		}
		if id := s.lastMail(t); id != s.mailMark {
			t.Fatalf("mails were queued, the last %d", id)
		}
		if bytes.Contains([]byte(s.log.String()), []byte("a password of mine")) {
			t.Error("the failure logged the password")
		}
	})
}

// BenchmarkSignUp times signUp for a registered address and for new ones with the production
// password hasher: the two should cost about the same, the argon2id hash dominating both.
func BenchmarkSignUp(b *testing.B) {
	storetest.ForEachDialect(b, func(b *testing.B, dialect string) {
		s := newServerWith(b, storetest.Seeded(b, dialect, os.Getenv), func(c *serverConfig) { c.Hasher = access.DefaultPasswordHasher })
		for _, c := range []struct {
			name  string
			email func(i int) string
		}{
			{"registered", func(int) string { return s.demo.DeveloperEmail }},
			{"new", func(i int) string { return fmt.Sprintf("new%d.%d@example.com", b.N, i) }},
		} {
			b.Run(c.name, func(b *testing.B) {
				for i := range b.N {
					resp, err := http.Post(s.URL+"/portal/graphql", "application/json", strings.NewReader(signUpBody(c.email(i))))
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
	})
}

// TestSignUpCannotBeHijacked: someone who signs an address up first, with a password of theirs,
// gets no account when its owner signs up and clicks the first link in the mailbox: verifying
// takes the password the sign-up was made with, and the owner's is not the intruder's.
func TestSignUpCannotBeHijacked(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	anon := &portal{s: s}
	const victim = "victim@example.org"
	signUp := `mutation($e: String!, $p: String!) { signUp(input: {email: $e, password: $p, name: "V"}) { message } }`
	verify := `mutation($t: String!, $p: String!) { verifyEmail(token: $t, password: $p) { token } }`
	anon.do(t, signUp, map[string]any{"e": victim, "p": "the intruder's password"}, nil)
	intruders := s.signUpToken(t, victim)
	anon.do(t, signUp, map[string]any{"e": victim, "p": "the owner's own password"}, nil)
	owners := s.signUpToken(t, victim)
	anon.fails(t, flightgraph.ECodeInvalidParameter, verify, map[string]any{"t": intruders, "p": "the owner's own password"})
	anon.do(t, verify, map[string]any{"t": owners, "p": "the owner's own password"}, nil)
	anon.fails(t, flightgraph.ECodeBadLogin, `mutation { signIn(email: "victim@example.org", password: "the intruder's password") { token } }`, nil)
	s.signIn(t, victim, "the owner's own password")
}

// TestConcurrentVerifications: the tokens of one address verified all at once, on several
// connections: one account and one session, the other answers refusals, never a 500 (on
// PostgreSQL, two verifications once locked the address's sign-ups in opposite orders).
func TestConcurrentVerifications(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		anon := &portal{s: s}
		var tokens []string
		for range 6 {
			anon.do(t, `mutation { signUp(input: {email: "race@example.com", password: "a racing password", name: "R"}) { message } }`, nil, nil)
			tokens = append(tokens, s.signUpToken(t, "race@example.com"))
		}
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			sessions int
			codes    = map[string]int{}
		)
		for range 3 {
			for _, tok := range tokens {
				wg.Go(func() {
					r := s.portalAs(t, nil, `mutation($t: String!) { verifyEmail(token: $t, password: "a racing password") { token } }`, map[string]any{"t": tok})
					mu.Lock()
					defer mu.Unlock()
					if len(r.Errors) == 0 {
						sessions++
					} else {
						codes[fmt.Sprint(r.Errors[0].Extensions["code"])]++
					}
				})
			}
		}
		wg.Wait()
		if sessions != 1 || codes[flightgraph.ECodeInternal] != 0 || codes[flightgraph.ECodeInvalidParameter]+codes[flightgraph.ECodeConflict] != 17 {
			t.Errorf("%d sessions, refusals %v", sessions, codes)
		}
		if n := s.count(t, "accounts"); n != 3 { // the two demo accounts and this one
			t.Errorf("%d accounts", n)
		}
	})
}
