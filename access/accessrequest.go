package access

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// MaxAccessRequests bounds the access requests a list returns: a developer's on My Account, the
// operators' on their desk.
const MaxAccessRequests = 50

// claim spends a request token of the account in tx: "" claims nothing; a token used already is
// ECodeRepeated, so that the request it came with is made once however often it is sent.
func (s *Service) claim(ctx context.Context, tx flightgraph.AccessTx, acc *flightgraph.Account, token string) error {
	if token == "" {
		return nil
	}
	if err := flightgraph.ValidateRequestToken(token); err != nil {
		return err
	}
	err := tx.ClaimRequestToken(ctx, acc.ID, token, s.now())
	if errors.Is(err, flightgraph.ErrExists) {
		return flightgraph.ParamErrorf(flightgraph.ECodeRepeated, "requestToken", "this request was sent already and is made once: see its result on your account page")
	}
	return err
}

// OnRequest returns the products the caller's role does not open (the partner and internal APIs
// of a developer; all of them for a visitor who is not signed in), which the catalogue lists as
// "on request": their names only, as the spec shows them in the navigation.
func (s *Service) OnRequest(ctx context.Context) []*flightgraph.Product {
	var role flightgraph.Role
	if acc, err := account(ctx); err == nil {
		role = acc.Role
	}
	var out []*flightgraph.Product
	for _, p := range s.catalogue() {
		if p.Visibility != flightgraph.VisibilityPublic && !p.VisibleTo(role) {
			out = append(out, p)
		}
	}
	return out
}

// ProductName is the name of the product with the slug, the slug itself for one no longer
// offered.
func ProductName(slug string) string {
	if p := product(slug); p != nil {
		return p.Name
	}
	return slug
}

// RoleFor is the least role that opens a product: partner for a partner API, staff for an
// internal one.
func RoleFor(p *flightgraph.Product) flightgraph.Role {
	if p.Visibility == flightgraph.VisibilityInternal {
		return flightgraph.RoleStaff
	}
	return flightgraph.RolePartner
}

// RequestAccess asks the operators for a partner or internal API that the signed-in account's
// role does not open: what it is for and the expected use, mailed to the operators (within the
// mail budget, as a key request) and waiting on their desk. It returns ECodeNotSignedIn, the
// input's validation errors, ECodeInvalidParameter naming api for an API that does not exist or
// is public, ECodeInvalidState naming api for one the role opens already, ECodeConflict when a
// request of the account for the API waits already, and ECodeRepeated for a request token used.
func (s *Service) RequestAccess(ctx context.Context, in flightgraph.AccessRequestInput) (*flightgraph.AccessRequest, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	p := product(in.API)
	if p == nil || p.Visibility == flightgraph.VisibilityPublic {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "api", "there is no partner or internal API %q", in.API)
	}
	r := &flightgraph.AccessRequest{ID: NewID("acr"), AccountID: acc.ID, Product: p.Slug, Description: in.Description, ExpectedUse: in.ExpectedUse,
		Status: flightgraph.AccessRequestPending, CreatedAt: s.now()}
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if err := tx.LockAccount(ctx, acc.ID); err != nil {
			return err
		}
		if err := s.claim(ctx, tx, acc, in.RequestToken); err != nil {
			return err
		}
		// The role as it is now, not as the session read it.
		now, err := tx.AccountByID(ctx, acc.ID)
		if err != nil {
			return err
		}
		if p.VisibleTo(now.Role) {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "api", "your account opens %s already: request a key for it", p.Name)
		}
		if waiting, err := tx.AccessRequestsByAccount(ctx, acc.ID, MaxAccessRequests); err != nil {
			return err
		} else if len(waiting) >= MaxAccessRequests {
			return flightgraph.Errorf(flightgraph.ECodeInvalidState, "an account has at most %d access requests", MaxAccessRequests)
		}
		if err := tx.CreateAccessRequest(ctx, r); err != nil {
			return exists(err, "your request for "+p.Name+" waits for an operator already")
		}
		if err := s.audit(ctx, tx, acc.ID, "access_request.create", "access_request", r.ID, nil, r); err != nil {
			return err
		}
		return s.mailOperators(ctx, tx, acc, "Access request: "+p.Name, fmt.Sprintf(
			"%s <%s> (a %s account) asks for access to %s, a %s API.\n\nWhat it is for:\n%s\n\nExpected use:\n%s\n\nRequest: %s\nAnswer it at %s/operators\n",
			acc.Name, acc.Email, now.Role, p.Name, p.Visibility, r.Description, r.ExpectedUse, r.ID, s.PortalURL))
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// MyAccessRequests returns the signed-in account's access requests with the operators' answers,
// newest first.
func (s *Service) MyAccessRequests(ctx context.Context) ([]*flightgraph.AccessRequest, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.AccessRequestsByAccount(ctx, acc.ID, MaxAccessRequests)
}

// AccessRequests returns the access requests of a status ("" for all), newest first, for
// operators; ECodeNotSignedIn or ECodeOperatorsOnly for anyone else.
func (s *Service) AccessRequests(ctx context.Context, status flightgraph.AccessRequestStatus) ([]*flightgraph.AccessRequest, error) {
	if _, err := operator(ctx); err != nil {
		return nil, err
	}
	return s.Store.AccessRequests(ctx, status, MaxAccessRequests)
}

// AccessRequestAccount returns who asked, for the requester or an operator.
func (s *Service) AccessRequestAccount(ctx context.Context, r *flightgraph.AccessRequest, load AccountLoader) (*flightgraph.Account, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	if acc.ID != r.AccountID && acc.Role != flightgraph.RoleOperator {
		return nil, notFound("access request", "id")
	}
	return s.accountOf(ctx, r.AccountID, load)
}

// AccountLoader reads an account by id, nil for none: the request's batch of the accounts a
// page shows (graph.Loaders.Accounts), or nil for the store's one-by-one read.
type AccountLoader func(ctx context.Context, id string) (*flightgraph.Account, error)

// accountOf reads the account id through load, or the store without one; ECodeNotFound when
// there is none.
func (s *Service) accountOf(ctx context.Context, id string, load AccountLoader) (*flightgraph.Account, error) {
	if load == nil {
		acc, err := s.Store.AccountByID(ctx, id)
		return acc, notYours(err, "account", "")
	}
	acc, err := load(ctx, id)
	if err == nil && acc == nil {
		return nil, notFound("account", "")
	}
	return acc, err
}

// AccessAnswer is an operator's answer to an access request.
type AccessAnswer struct {
	ID    string
	Grant bool
	// Role is the role granted (developer, partner or staff), which must open the API; empty, the
	// least one that does (RoleFor).
	Role  flightgraph.Role
	Reply string // required for a refusal: the reason the developer reads
}

// AnswerAccessRequest grants an access request with a role change (the rules of SetAccountRole,
// in the same transaction; never to a role that opens less than the account's role now) or refuses it with a reason; audited, and the developer is told by
// e-mail (one mail, whatever the answer). It returns ECodeNotSignedIn or ECodeOperatorsOnly for
// a caller who is no operator, ECodeMissingParameter naming reply for a refusal without one,
// ECodeInvalidParameter naming role for a role that does not open the API or is not given here,
// ECodeNotFound naming id, ECodeInvalidState naming id for a request answered already, and the
// role change's errors.
func (s *Service) AnswerAccessRequest(ctx context.Context, a AccessAnswer) (*flightgraph.AccessRequest, error) {
	op, err := operator(ctx)
	if err != nil {
		return nil, err
	}
	a.Reply = strings.TrimSpace(a.Reply)
	if err := flightgraph.ValidateReply(a.Reply, !a.Grant); err != nil {
		return nil, err
	}
	var (
		req  *flightgraph.AccessRequest
		keys []string
	)
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if req, err = tx.AccessRequest(ctx, wellFormedID("acr", a.ID)); err != nil {
			return notYours(err, "access request", "id")
		}
		if req.Status != flightgraph.AccessRequestPending {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "id", "the request is %s already", req.Status)
		}
		p := product(req.Product)
		if p == nil {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "id", "the API %q is no longer offered", req.Product)
		}
		before := *req
		now := s.now()
		req.Reply, req.ReviewedBy, req.ReviewedAt = a.Reply, op.ID, &now
		var owner *flightgraph.Account
		if a.Grant {
			role := a.Role
			if role == "" {
				role = RoleFor(p)
			}
			if err := role.ValidateAssignable(); err != nil {
				return err
			}
			if !p.VisibleTo(role) {
				return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "role", "a %s account does not see %s: grant %s or staff", role, p.Name, RoleFor(p))
			}
			if owner, err = tx.AccountByID(ctx, req.AccountID); err != nil {
				return err
			}
			if narrower(role, owner.Role) {
				// The account was given more since it asked (a request for Metasearch waiting
				// while it was made staff): granting is never taking an API away.
				role = owner.Role
			}
			if _, keys, err = s.changeRole(ctx, tx, op, req.AccountID, role, false); err != nil {
				return err
			}
			req.Status, req.Role = flightgraph.AccessRequestGranted, role
		} else {
			req.Status = flightgraph.AccessRequestRefused
			if owner, err = tx.AccountByID(ctx, req.AccountID); err != nil {
				return err
			}
		}
		if err := tx.UpdateAccessRequest(ctx, req); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, op.ID, "access_request."+string(req.Status), "access_request", req.ID, &before, req); err != nil {
			return err
		}
		subject, body := accessMail(owner, p, req, s.PortalURL)
		return s.mailDecision(ctx, tx, &flightgraph.Mail{To: owner.Email, Subject: subject, Body: body, CreatedAt: now})
	})
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		s.changed(k)
	}
	return req, nil
}

// narrower reports whether role opens fewer APIs than the role than: some API that than opens, role does not.
func narrower(role, than flightgraph.Role) bool {
	for _, p := range Products {
		if p.VisibleTo(than) && !p.VisibleTo(role) {
			return true
		}
	}
	return false
}

// accessMail tells the requester of an operator's answer.
func accessMail(owner *flightgraph.Account, p *flightgraph.Product, req *flightgraph.AccessRequest, portalURL string) (subject, body string) {
	reply := ""
	if req.Reply != "" {
		reply = "\n\nThe operator's reply:\n" + req.Reply
	}
	if req.Status == flightgraph.AccessRequestGranted {
		return "Your request for " + p.Name + " is granted", fmt.Sprintf(
			"Hello %s,\n\nyour request for %s is granted: your account is now a %s account, and you can request a key for %s on your account page: %s%s\n",
			owner.Name, p.Name, req.Role, p.Name, portalURL, reply)
	}
	return "Your request for " + p.Name + " is refused", fmt.Sprintf("Hello %s,\n\nyour request for %s is refused.%s\n\nYour account page: %s\n",
		owner.Name, p.Name, reply, portalURL)
}
