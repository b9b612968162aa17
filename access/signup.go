package access

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/flightgraph/flightgraph"
)

// SignUpTTL is how long the link of a sign-up mail works.
const SignUpTTL = 24 * time.Hour

// SignUpAnswer is signUp's one answer, whatever the address: it must not tell whether the
// address has an account.
const SignUpAnswer = "Thank you. We have sent a mail to the address: follow its link within 24 hours to finish signing up. " +
	"No mail? Look in the spam folder, or sign up again."

// SignUp starts a developer account without telling anyone whether the e-mail has one. It returns
// the input's validation errors, which do not depend on the database; then, whether or not the
// address has an account, it does the same work (the password is hashed either way) and returns
// nil, so the caller answers SignUpAnswer. For a new address it records a pending sign-up and
// mails the address a link with a token for VerifyEmail; for a registered one it mails the owner
// that someone tried. Each mail is queued in the transaction of its record, so that nothing is
// recorded unless its mail is queued.
//
// Every sign-up spends one mail of the mail budget (MailBudget, MailAsked) before any other work,
// the password's hash included, so that a refused one is cheap: the same budget whichever of the
// two mails it would send, so that it tells nothing either. Past its mailbox's budget (however the
// address is spelt) or its client's, SignUp still answers the same but mails and records nothing;
// past the replica's budget for the minute it returns ECodeMailBusy with the wait, which is the
// same for every address.
func (s *Service) SignUp(ctx context.Context, in flightgraph.SignUpInput) error {
	if err := in.Validate(); err != nil {
		return err
	}
	if s.MailBudget == nil {
		return errors.New("access: no mail budget is configured to bound sign-ups")
	}
	if err := s.MailBudget.Spend(ctx, flightgraph.MailCharge{Kind: flightgraph.MailAsked, To: []string{in.Email}}); flightgraph.ErrorCode(err) == flightgraph.ECodeTooManyMails {
		return nil // the budget logged it
	} else if err != nil {
		return err
	}
	hash, err := s.Hashes.Hash(ctx, s.Hasher, in.Password)
	if err != nil {
		return err
	}
	token := NewCredential(KindSignUp)
	now := s.now()
	pending := &flightgraph.PendingSignUp{TokenHash: HashCredential(token), Email: in.Email, Name: in.Name,
		PasswordHash: hash, CreatedAt: now, ExpiresAt: now.Add(SignUpTTL)}
	return s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if _, err := tx.DeleteExpiredSignUps(ctx, now); err != nil {
			return err
		}
		owner, err := tx.AccountByEmail(ctx, in.Email)
		if err == nil {
			return tx.EnqueueMail(ctx, &flightgraph.Mail{To: owner.Email, CreatedAt: now,
				Subject: "Someone tried to sign up with your address",
				Body: fmt.Sprintf("Hello %s,\n\nsomeone tried to make a new flightgraph account with this address, which has an account already. "+
					"If it was you, sign in at %s with the password you have.\n\nIf it was not you, there is nothing to do: no account was made and nothing changed.\n",
					owner.Name, s.PortalURL)})
		} else if !errIsNotFound(err) {
			return err
		}
		if err := tx.CreateSignUp(ctx, pending); err != nil {
			return err
		}
		// The name the sign-up gave is left out: whoever signs up can write anything there, and
		// this mail goes to an address they need not own.
		return tx.EnqueueMail(ctx, &flightgraph.Mail{To: in.Email, CreatedAt: now,
			Subject: "Confirm your address to finish signing up",
			Body: fmt.Sprintf("Hello,\n\nto finish signing up to flightgraph with this address, open this link within 24 hours:\n\n%s/verify?token=%s\n\n"+
				"or give this token to the verifyEmail mutation:\n\n%s\n\nIf you did not sign up, ignore this mail: no account is made without it.\n",
				s.PortalURL, url.QueryEscape(token), token)})
	})
}

// VerifyEmail finishes a sign-up with the token its mail carried and the password it was made
// with: it creates the developer account and signs it in. The password must be the sign-up's, so
// that whoever clicks a link in their mailbox gets an account only with the password they chose
// themselves: a sign-up that someone else made for the address, with a password of theirs, stays
// useless to both (OWASP's account pre-hijacking). A token works once and for SignUpTTL; an
// unknown, used, expired or malformed one, or the wrong password, is ECodeInvalidParameter and
// spends nothing. If the address has an account by then (another of its sign-ups was verified
// first, or an operator made one), it is ECodeConflict and the address's sign-ups are dropped:
// the token's holder reads that mailbox, so this tells them nothing new.
func (s *Service) VerifyEmail(ctx context.Context, token, password string) (*Session, error) {
	bad := flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "token", "the sign-up link is unknown, used or expired, or the password is not the sign-up's")
	if CredentialKind(token) != KindSignUp {
		return nil, bad
	}
	hash, now := HashCredential(token), s.now()
	p, err := s.Store.SignUp(ctx, hash, now)
	if errIsNotFound(err) {
		return nil, bad
	} else if err != nil {
		return nil, err
	}
	if ok, err := s.Hashes.Verify(ctx, s.Hasher, password, p.PasswordHash); err != nil {
		return nil, err
	} else if !ok {
		return nil, bad
	}
	var (
		session *Session
		taken   bool
	)
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		deleted, err := tx.DeleteSignUps(ctx, p.Email)
		if err != nil {
			return err
		}
		if !slices.Contains(deleted, hash) {
			return bad // another verification of the address won meanwhile
		}
		if _, err := tx.AccountByEmail(ctx, p.Email); err == nil {
			taken = true // commit the deletions: the token is spent either way
			return nil
		} else if !errIsNotFound(err) {
			return err
		}
		acc := &flightgraph.Account{ID: NewID("acc"), Email: p.Email, Name: p.Name, Role: flightgraph.RoleDeveloper,
			PasswordHash: p.PasswordHash, CreatedAt: now}
		if err := tx.CreateAccount(ctx, acc); err != nil {
			return exists(err, "an account with this e-mail exists already")
		}
		if err := s.audit(ctx, tx, acc.ID, "account.create", "account", acc.ID, nil, acc); err != nil {
			return err
		}
		session, err = s.openSession(ctx, tx, acc)
		return err
	})
	if err != nil {
		return nil, err
	}
	if taken {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeConflict, "token", "this address has an account already: sign in")
	}
	return session, nil
}
