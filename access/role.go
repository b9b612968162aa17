package access

import (
	"context"
	"fmt"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// SetAccountRole gives an account another role, for operators: developer, partner or staff. The
// change, its audit entry (the account before and after) and the mail that tells the account's
// owner what it opens or closes commit together or not at all.
//
// The guard decides what a key may call by its owner's role at the time of the call, so a partner
// made a developer again loses the partner APIs at once, on every replica (the change is announced
// for each of the account's keys), and gets them back if made a partner again: the subscriptions
// stay as they are. Operators are out of its reach: the operator role is not given here
// (ECodeInvalidParameter; 'flightgraph operator add' adds operators), and an operator's role,
// the caller's own included, is not changed here (ECodeInvalidState), so that no operator can
// lock the others, or the last one, out. Giving an account the role it has changes nothing.
//
// It returns ECodeNotSignedIn or ECodeOperatorsOnly for a caller who is no operator, the role's
// validation errors, and ECodeNotFound naming accountId for an account that does not exist.
func (s *Service) SetAccountRole(ctx context.Context, accountID string, role flightgraph.Role) (*flightgraph.Account, error) {
	op, err := operator(ctx)
	if err != nil {
		return nil, err
	}
	if err := role.ValidateAssignable(); err != nil {
		return nil, err
	}
	var (
		after *flightgraph.Account
		keys  []string
	)
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		after, keys, err = s.changeRole(ctx, tx, op, accountID, role, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		s.changed(k)
	}
	return after, nil
}

// changeRole gives an account another role in tx, for the operator op: the rules of
// SetAccountRole, with its audit entry and, when mail is set, its mail to the account's owner. It
// returns the account as it is now and the ids of its keys, whose change the caller announces
// once tx commits (none when the role is the one it had).
func (s *Service) changeRole(ctx context.Context, tx flightgraph.AccessTx, op *flightgraph.Account, accountID string, role flightgraph.Role,
	mail bool) (after *flightgraph.Account, keys []string, err error) {
	id := wellFormedID("acc", accountID)
	if err := tx.LockAccount(ctx, id); err != nil {
		return nil, nil, err
	}
	before, err := tx.AccountByID(ctx, id)
	if err != nil {
		return nil, nil, notYours(err, "account", "accountId")
	}
	switch {
	case before.ID == op.ID:
		return nil, nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "accountId", "operators cannot change their own role")
	case before.Role == flightgraph.RoleOperator:
		return nil, nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "accountId", "an operator's role is not changed through the portal")
	case before.Role == role:
		return before, nil, nil
	}
	changed := *before
	changed.Role = role
	after = &changed
	if err := tx.SetAccountRole(ctx, id, role); err != nil {
		return nil, nil, err
	}
	if err := s.audit(ctx, tx, op.ID, "account.set_role", "account", id, before, after); err != nil {
		return nil, nil, err
	}
	apps, err := tx.ApplicationsByAccount(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	appIDs := make([]string, len(apps))
	for i, a := range apps {
		appIDs[i] = a.ID
	}
	byApp, err := tx.KeysByApplications(ctx, appIDs)
	if err != nil {
		return nil, nil, err
	}
	for _, ks := range byApp {
		for _, k := range ks {
			keys = append(keys, k.ID)
		}
	}
	if !mail {
		return after, keys, nil
	}
	subject, body := roleMail(before, role, s.PortalURL)
	return after, keys, s.mailDecision(ctx, tx, &flightgraph.Mail{To: before.Email, Subject: subject, Body: body, CreatedAt: s.now()})
}

// AccountByEmail returns the account of an e-mail address, for operators; ECodeNotFound naming
// email when there is none.
func (s *Service) AccountByEmail(ctx context.Context, email string) (*flightgraph.Account, error) {
	if _, err := operator(ctx); err != nil {
		return nil, err
	}
	email = flightgraph.NormalizeEmail(email)
	if flightgraph.ValidateEmail(email) != nil {
		// No account has it, and the store is not asked about bytes it may refuse.
		return nil, notFound("account", "email")
	}
	acc, err := s.Store.AccountByEmail(ctx, email)
	return acc, notYours(err, "account", "email")
}

// Accounts returns accounts for operators, newest first: first of them (1 to MaxPageSize) from
// offset, of the filter's role and with its part of an e-mail address when it has them. It
// returns ECodeNotSignedIn or ECodeOperatorsOnly for anyone else, then ECodeInvalidParameter
// naming first, offset, role or email.
func (s *Service) Accounts(ctx context.Context, f flightgraph.AccountFilter, first, offset int) ([]*flightgraph.Account, error) {
	if _, err := operator(ctx); err != nil {
		return nil, err
	}
	if first < 1 || first > flightgraph.MaxPageSize {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "first", "first must be between 1 and %d, got %d", flightgraph.MaxPageSize, first)
	}
	if offset < 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "offset", "offset must not be negative, got %d", offset)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return s.Store.Accounts(ctx, f, first, offset)
}

// roleMail is the mail that tells an account's owner of its new role: the APIs it opens, or
// closes, by name.
func roleMail(acc *flightgraph.Account, role flightgraph.Role, portalURL string) (subject, body string) {
	var gained, lost []string
	for _, p := range catalogue().products {
		switch was, is := p.VisibleTo(acc.Role), p.VisibleTo(role); {
		case is && !was:
			gained = append(gained, p.Name)
		case was && !is:
			lost = append(lost, p.Name)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Hello %s,\n\nan operator made your flightgraph account a %s account (it was a %s account).\n", acc.Name, role, acc.Role)
	if len(gained) > 0 {
		fmt.Fprintf(&b, "\nYou can now see and request these APIs: %s.\n", strings.Join(gained, ", "))
	}
	if len(lost) > 0 {
		fmt.Fprintf(&b, "\nThese APIs are no longer open to you, and your keys stop calling them now: %s.\n", strings.Join(lost, ", "))
	}
	fmt.Fprintf(&b, "\nYour account page: %s\n", portalURL)
	return "Your flightgraph account is now a " + string(role) + " account", b.String()
}
