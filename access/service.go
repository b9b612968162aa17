package access

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/flightgraph/flightgraph"
)

// An account has at most MaxApplications applications, each with at most MaxKeys active keys:
// every key is a client of its own, requesting one mails the operators, and the portal lists
// them all (the schema's @listSize declares these bounds for the cost of such lists).
const (
	MaxApplications = 20
	MaxKeys         = 5
)

// SessionTTL is how long a portal session lasts.
const SessionTTL = 12 * time.Hour

// Service holds the portal's rules: accounts and sessions, applications, keys, subscriptions
// and their approval, limit increases and the audit log. Every change writes its audit entry and
// its mail in the transaction of the change.
type Service struct {
	Store  flightgraph.AccessStore
	Hasher PasswordHasher
	// Hashes bounds the password hashes computed at once; share one with the TokenService.
	Hashes *HashGate
	// Lockout counts sign-in attempts per e-mail; SignIn refuses to work without one.
	Lockout Lockout
	// MailBudget bounds the mail of every change that mails (MailBudget); SignUp refuses to work
	// without one. Without one, the operators' notices and the decisions' mails go uncounted.
	MailBudget flightgraph.MailBudget
	Now        func() time.Time
	Log        *slog.Logger
	// PortalURL is put in mails as the place to go next, e.g. http://127.0.0.1:8080/portal.
	PortalURL string
	// Changed, when set, is told of every key whose access changed, so that caches drop it.
	Changed func(keyID string)
	// Usage holds the calls counted and not stored yet, which the usage history adds to the
	// stored ones; without it the history has the stored ones only.
	Usage *UsageRecorder
	// Operations are what the edges declare of each product (rest.Operations,
	// graph.Operations): the catalogue lists them. Set it before the first call.
	Operations []flightgraph.Operation

	productsOnce sync.Once
	products     []*flightgraph.Product
}

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Microsecond) }

// SyncCatalogue writes the built-in products, with their operations, and their plans to the store.
func (s *Service) SyncCatalogue(ctx context.Context) error {
	return s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error { return tx.SyncProducts(ctx, s.catalogue(), catalogue().plans) })
}

// catalogue is the built-in products with the operations the edges declare of each.
func (s *Service) catalogue() []*flightgraph.Product {
	s.productsOnce.Do(func() {
		lists := flightgraph.OperationLists(s.Operations)
		for _, p := range catalogue().products {
			c := *p
			c.Operations = lists[p.Slug]
			s.products = append(s.products, &c)
		}
	})
	return s.products
}

// Session is a signed-in account with its session token, shown once.
type Session struct {
	Token   string
	Account *flightgraph.Account
}

// CreateAccount creates an account of a role without signing it in; actor is who creates it
// ("" for the account itself).
func (s *Service) CreateAccount(ctx context.Context, in flightgraph.SignUpInput, role flightgraph.Role, actor string) (*flightgraph.Account, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	hash, err := s.Hashes.Hash(ctx, s.Hasher, in.Password)
	if err != nil {
		return nil, err
	}
	acc := &flightgraph.Account{ID: NewID("acc"), Email: in.Email, Name: in.Name, Role: role, PasswordHash: hash, CreatedAt: s.now()}
	if actor == "" {
		actor = acc.ID
	}
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if err := tx.CreateAccount(ctx, acc); err != nil {
			return exists(err, "an account with this e-mail exists already")
		}
		return s.audit(ctx, tx, actor, "account.create", "account", acc.ID, nil, acc)
	})
	if err != nil {
		return nil, err
	}
	return acc, nil
}

// SignIn checks an e-mail and password and opens a session; ECodeBadLogin otherwise, the same
// for an unknown e-mail as for a wrong password. Every attempt is counted against the e-mail
// before anything is looked up, and once MaxSignInAttempts were counted within SignInWindow the
// next ones are refused with ECodeTooManySignIns and the time left, whatever the password and
// whether or not the e-mail has an account. A success clears the count.
func (s *Service) SignIn(ctx context.Context, email, password string) (*Session, error) {
	email = flightgraph.NormalizeEmail(email)
	wrong := flightgraph.Errorf(flightgraph.ECodeBadLogin, "wrong e-mail or password")
	acc, err := signIn(ctx, s.Lockout, s.Log, SignInKey(SignInPortal, email), func() (*flightgraph.Account, error) {
		return verify(ctx, s.Hashes, s.Hasher, email, password, wrong, func(email string) (*flightgraph.Account, string, error) {
			acc, err := s.Store.AccountByEmail(ctx, email)
			if err != nil {
				return nil, "", err
			}
			return acc, acc.PasswordHash, nil
		})
	})
	if err != nil {
		return nil, err
	}
	return s.newSession(ctx, acc)
}

func (s *Service) newSession(ctx context.Context, acc *flightgraph.Account) (*Session, error) {
	var session *Session
	err := s.Store.InTx(ctx, func(tx flightgraph.AccessTx) (err error) {
		session, err = s.openSession(ctx, tx, acc)
		return err
	})
	return session, err
}

// openSession opens a session of acc inside tx.
func (s *Service) openSession(ctx context.Context, tx flightgraph.AccessTx, acc *flightgraph.Account) (*Session, error) {
	token := NewCredential(KindSession)
	now := s.now()
	if err := tx.CreateSession(ctx, HashCredential(token), acc.ID, now, now.Add(SessionTTL)); err != nil {
		return nil, err
	}
	return &Session{Token: token, Account: acc}, nil
}

// SignOut ends the caller's session, and the trial keys it minted with it.
func (s *Service) SignOut(ctx context.Context) error {
	acc, err := account(ctx)
	if err != nil {
		return err
	}
	hash := flightgraph.CallerFromContext(ctx).SessionHash
	var keys []string
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) (err error) {
		// Held, as by the token endpoint's grant to a trial, so that a grant that read one of
		// the session's trials comes wholly before this deletes the trial and its tokens.
		if err := tx.LockAccount(ctx, acc.ID); err != nil {
			return err
		}
		keys, err = tx.DeleteSession(ctx, hash)
		return err
	})
	for _, k := range keys {
		s.changed(k)
	}
	return err
}

// SubscriptionApplication returns the application of a subscription's key, for its owner or an
// operator; ECodeNotFound for anyone else.
func (s *Service) SubscriptionApplication(ctx context.Context, sub *flightgraph.Subscription) (*flightgraph.Application, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	if acc.Role == flightgraph.RoleOperator {
		_, app, err := keyOwner(ctx, s.Store, sub.KeyID)
		return app, notYours(err, "application", "")
	}
	_, app, err := s.Store.OwnKey(ctx, acc.ID, sub.KeyID)
	return app, notYours(err, "application", "")
}

// ApplicationOwner returns who registered an application, for the owner or an operator.
func (s *Service) ApplicationOwner(ctx context.Context, app *flightgraph.Application, load AccountLoader) (*flightgraph.Account, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	if acc.Role != flightgraph.RoleOperator && app.AccountID != acc.ID {
		return nil, notFound("account", "")
	}
	return s.accountOf(ctx, app.AccountID, load)
}

// LimitRequestSubscription returns the subscription a limit request is about, for its requester
// or an operator.
func (s *Service) LimitRequestSubscription(ctx context.Context, req *flightgraph.LimitIncreaseRequest) (*flightgraph.Subscription, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	if acc.Role == flightgraph.RoleOperator {
		sub, err := s.Store.Subscription(ctx, req.SubscriptionID)
		return sub, notYours(err, "subscription", "")
	}
	sub, err := s.Store.OwnSubscription(ctx, acc.ID, req.SubscriptionID)
	return sub, notYours(err, "subscription", "")
}

// MaxLimitRequests is how many of a subscription's limit requests the portal lists at most: the
// newest.
const MaxLimitRequests = 20

// ValidateLimitRequests checks how many of a subscription's limit requests a page asks for; it
// returns ECodeInvalidParameter naming first.
func ValidateLimitRequests(first int) error {
	if first < 1 || first > MaxLimitRequests {
		return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "first", "first must be between 1 and %d, got %d", MaxLimitRequests, first)
	}
	return nil
}

// UsageHistory returns each subscription's calls on each of the last flightgraph.MaxUsageDays
// UTC days, today the last, oldest first: the stored counts plus the calls this process counted
// and has not stored yet, 0 on a day without calls. The portal shows the last days of it that a
// page asks for; one call serves every subscription of a page (a dataloader's batch), with one
// query for the counts and, for a developer, one for the subscriptions' owners.
//
// It returns ECodeNotSignedIn without a session and ECodeNotFound when one of the subscriptions
// is neither the caller's nor the caller an operator (readable).
func (s *Service) UsageHistory(ctx context.Context, subscriptions []string) ([][]*flightgraph.DailyUsage, error) {
	if err := s.readable(ctx, subscriptions); err != nil {
		return nil, err
	}
	u := s.Usage
	if u == nil {
		u = &UsageRecorder{Store: s.Store}
	}
	return u.History(ctx, subscriptions, s.now(), flightgraph.MaxUsageDays)
}

// SubscriptionLimitRequests returns each subscription's limit requests, the newest
// MaxLimitRequests, newest first, with the operators' replies: a batch, as UsageHistory, and
// refused as it is.
func (s *Service) SubscriptionLimitRequests(ctx context.Context, subscriptions []string) ([][]*flightgraph.LimitIncreaseRequest, error) {
	if err := s.readable(ctx, subscriptions); err != nil {
		return nil, err
	}
	return s.Store.LimitRequestsBySubscriptions(ctx, subscriptions, MaxLimitRequests)
}

// readable checks that the caller may read what belongs to the subscriptions: an operator those
// of anyone, anyone else only those of their own keys. The portal reaches a subscription only
// through its owner's applications or an operator's lists, so a refusal here means that a path
// to someone else's was opened by mistake: it fails closed, with ECodeNotFound, as for a
// subscription that does not exist, and ECodeNotSignedIn without a session.
func (s *Service) readable(ctx context.Context, subscriptions []string) error {
	acc, err := account(ctx)
	if err != nil {
		return err
	}
	if acc.Role == flightgraph.RoleOperator {
		return nil
	}
	owners, err := s.Store.SubscriptionOwners(ctx, subscriptions)
	if err != nil {
		return err
	}
	for _, owner := range owners {
		if owner != acc.ID {
			return notFound("subscription", "")
		}
	}
	return nil
}

// Plan returns a plan by id.
func (s *Service) Plan(ctx context.Context, id string) (*flightgraph.Plan, error) {
	return s.Store.Plan(ctx, id)
}

// account returns the signed-in caller's account; ECodeNotSignedIn without a session.
func account(ctx context.Context) (*flightgraph.Account, error) {
	c := flightgraph.CallerFromContext(ctx)
	if c.Kind != flightgraph.CallerSession || c.Account == nil {
		return nil, flightgraph.Errorf(flightgraph.ECodeNotSignedIn, "sign in to the portal first: send Authorization: Bearer <session token>")
	}
	return c.Account, nil
}

// operator returns the signed-in operator; ECodeNotSignedIn or ECodeOperatorsOnly otherwise.
func operator(ctx context.Context) (*flightgraph.Account, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	if acc.Role != flightgraph.RoleOperator {
		return nil, flightgraph.Errorf(flightgraph.ECodeOperatorsOnly, "only operators may do this")
	}
	return acc, nil
}

// Me returns the signed-in account.
func (s *Service) Me(ctx context.Context) (*flightgraph.Account, error) { return account(ctx) }

// Catalogue returns the products the caller may see, by slug.
func (s *Service) Catalogue(ctx context.Context) ([]*flightgraph.Product, error) {
	role := flightgraph.CallerFromContext(ctx).Role()
	var out []*flightgraph.Product
	for _, p := range s.catalogue() {
		if p.VisibleTo(role) {
			out = append(out, p)
		}
	}
	return out, nil
}

// PlansOf returns the standard plans of a product.
func (s *Service) PlansOf(ctx context.Context, product string) ([]*flightgraph.Plan, error) {
	return standardPlans(product), nil
}

// Applications returns the signed-in developer's applications.
func (s *Service) Applications(ctx context.Context) ([]*flightgraph.Application, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	return s.Store.ApplicationsByAccount(ctx, acc.ID)
}

// RegisterApplication registers an application for the signed-in developer.
func (s *Service) RegisterApplication(ctx context.Context, in flightgraph.ApplicationInput) (*flightgraph.Application, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	now := s.now()
	app := &flightgraph.Application{ID: NewID("app"), AccountID: acc.ID, Name: in.Name, Website: in.Website,
		Description: in.Description, CallbackURL: in.CallbackURL, CreatedAt: now, UpdatedAt: now}
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if err := tx.LockAccount(ctx, acc.ID); err != nil {
			return err
		}
		if err := s.claim(ctx, tx, acc, in.RequestToken); err != nil {
			return err
		}
		if apps, err := tx.ApplicationsByAccount(ctx, acc.ID); err != nil {
			return err
		} else if len(apps) >= MaxApplications {
			return flightgraph.Errorf(flightgraph.ECodeInvalidState, "an account has at most %d applications: delete one first", MaxApplications)
		}
		if err := tx.CreateApplication(ctx, app); err != nil {
			return err
		}
		return s.audit(ctx, tx, acc.ID, "application.create", "application", app.ID, nil, app)
	})
	return app, err
}

// ownApplication returns an application of the signed-in developer, the id being the input
// named param; ECodeNotFound for anyone else's, byte for byte as for one that does not exist or a
// malformed id (notYours), after the same one query.
func ownApplication(ctx context.Context, r flightgraph.AccessReader, acc *flightgraph.Account, id, param string) (*flightgraph.Application, error) {
	app, err := r.OwnApplication(ctx, acc.ID, wellFormedID("app", id))
	return app, notYours(err, "application", param)
}

// ownKey returns a key of one of the developer's applications, with the application; ECodeNotFound
// otherwise, as ownApplication.
func ownKey(ctx context.Context, r flightgraph.AccessReader, acc *flightgraph.Account, id, param string) (*flightgraph.Key, *flightgraph.Application, error) {
	k, app, err := r.OwnKey(ctx, acc.ID, wellFormedID("key", id))
	return k, app, notYours(err, "key", param)
}

// ownSubscription returns a subscription of one of the developer's keys; ECodeNotFound otherwise,
// as ownApplication.
func ownSubscription(ctx context.Context, r flightgraph.AccessReader, acc *flightgraph.Account, id, param string) (*flightgraph.Subscription, error) {
	sub, err := r.OwnSubscription(ctx, acc.ID, wellFormedID("sub", id))
	return sub, notYours(err, "subscription", param)
}

// notFound is the one portal answer for what, looked up by the input named param, when the caller
// may not have it: an id of another account's object, an id that does not exist and a malformed
// id must be told apart by nobody, so they share this error byte for byte.
func notFound(what, param string) error {
	return flightgraph.ParamErrorf(flightgraph.ECodeNotFound, param, "%s not found", what)
}

// notYours turns a not-found from the store into notFound, whatever the store's own message;
// other errors pass unchanged.
func notYours(err error, what, param string) error {
	if errIsNotFound(err) {
		return notFound(what, param)
	}
	return err
}

// wellFormedID returns id if it has the shape NewID gives ids of prefix, and otherwise "", which
// no row has. A malformed id thus costs the same query as a well-formed one and finds nothing,
// rather than reaching the database as bytes it may refuse (PostgreSQL refuses a NUL in text).
func wellFormedID(prefix, id string) string {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != idLen || strings.Trim(rest, idAlphabet) != "" {
		return ""
	}
	return id
}

// UpdateApplication edits one of the developer's applications.
func (s *Service) UpdateApplication(ctx context.Context, id string, in flightgraph.ApplicationInput) (*flightgraph.Application, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	var app *flightgraph.Application
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		before, err := ownApplication(ctx, tx, acc, id, "id")
		if err != nil {
			return err
		}
		after := *before
		after.Name, after.Website, after.Description, after.CallbackURL, after.UpdatedAt = in.Name, in.Website, in.Description, in.CallbackURL, s.now()
		if err := tx.UpdateApplication(ctx, &after); err != nil {
			return err
		}
		app = &after
		return s.audit(ctx, tx, acc.ID, "application.update", "application", id, before, &after)
	})
	return app, err
}

// DeleteApplication deletes one of the developer's applications with its keys; their access
// ends at once.
func (s *Service) DeleteApplication(ctx context.Context, id string) error {
	acc, err := account(ctx)
	if err != nil {
		return err
	}
	var keys []*flightgraph.Key
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		app, err := ownApplication(ctx, tx, acc, id, "id")
		if err != nil {
			return err
		}
		ks, err := tx.KeysByApplications(ctx, []string{id})
		if err != nil {
			return err
		}
		keys = ks[0]
		if err := tx.DeleteApplication(ctx, id); err != nil {
			return err
		}
		return s.audit(ctx, tx, acc.ID, "application.delete", "application", id, app, nil)
	})
	for _, k := range keys {
		s.changed(k.ID)
	}
	return err
}

func (s *Service) changed(keyID string) {
	if s.Changed != nil {
		s.Changed(keyID)
	}
}

// KeyRequest asks for a key, or for another API on a key.
type KeyRequest struct {
	ApplicationID string
	KeyID         string
	API           string
	Plan          string // default: Default
	// RequestToken, when given, makes the request once however often it is sent
	// (flightgraph.RequestToken).
	RequestToken string
}

// RequestKey creates a key for one of the developer's applications with a pending subscription
// to an API's plan, and tells the operators. The key's secret is in the answer only.
func (s *Service) RequestKey(ctx context.Context, req KeyRequest) (*flightgraph.NewKey, *flightgraph.Subscription, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, nil, err
	}
	apiKey, secret := NewCredential(KindAPIKey), NewCredential(KindSecret)
	k := &flightgraph.Key{ID: NewID("key"), ApplicationID: req.ApplicationID, Hint: Hint(apiKey), KeyHash: HashCredential(apiKey),
		SecretHash: HashCredential(secret), Status: flightgraph.KeyActive, CreatedAt: s.now()}
	var sub *flightgraph.Subscription
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if req.ApplicationID == "" {
			return flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "applicationId", "applicationId is required")
		}
		app, err := ownApplication(ctx, tx, acc, req.ApplicationID, "applicationId")
		if err != nil {
			return err
		}
		if err := tx.LockAccount(ctx, acc.ID); err != nil {
			return err
		}
		if err := s.claim(ctx, tx, acc, req.RequestToken); err != nil {
			return err
		}
		if active, err := tx.ActiveKeys(ctx, app.ID); err != nil {
			return err
		} else if active >= MaxKeys {
			return flightgraph.Errorf(flightgraph.ECodeInvalidState, "an application has at most %d active keys: revoke one first", MaxKeys)
		}
		if err := tx.CreateKey(ctx, k); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, acc.ID, "key.create", "key", k.ID, nil, k); err != nil {
			return err
		}
		sub, err = s.subscribe(ctx, tx, acc, app, k, req.API, req.Plan)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return &flightgraph.NewKey{Key: k, APIKey: apiKey, Secret: secret}, sub, nil
}

// AddAPI adds a pending subscription to another API on one of the developer's keys.
func (s *Service) AddAPI(ctx context.Context, req KeyRequest) (*flightgraph.Subscription, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	var sub *flightgraph.Subscription
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		k, app, err := ownKey(ctx, tx, acc, req.KeyID, "keyId")
		if err != nil {
			return err
		}
		if k.Status != flightgraph.KeyActive {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "keyId", "the key is revoked")
		}
		sub, err = s.subscribe(ctx, tx, acc, app, k, req.API, req.Plan)
		return err
	})
	return sub, err
}

// subscribe adds a pending subscription and mails the operators the requester's details.
func (s *Service) subscribe(ctx context.Context, tx flightgraph.AccessTx, acc *flightgraph.Account, app *flightgraph.Application,
	k *flightgraph.Key, api, planName string) (*flightgraph.Subscription, error) {
	if api == "" {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "api", "api is required")
	}
	p := product(api)
	if p == nil || !p.VisibleTo(acc.Role) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "api", "there is no API %q", api)
	}
	if planName == "" {
		planName = flightgraph.DefaultPlan
	}
	if plans := standardPlans(p.Slug); planName == flightgraph.DefaultPlan && len(plans) == 1 {
		// The portal pre-selects the Default plan: for a partner or internal API, which has one
		// plan of its own (Partner, Internal), that is the one.
		planName = plans[0].Name
	}
	plan, err := standardPlan(p.Slug, planName)
	if flightgraph.ErrorCode(err) == flightgraph.ECodeNotFound {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "plan", "API %s has no plan %q", p.Slug, planName)
	} else if err != nil {
		return nil, err
	}
	sub := &flightgraph.Subscription{ID: NewID("sub"), KeyID: k.ID, Product: p.Slug, PlanID: plan.ID,
		Status: flightgraph.SubscriptionPending, CreatedAt: s.now()}
	if err := tx.CreateSubscription(ctx, sub); err != nil {
		return nil, exists(err, "this key has a subscription to this API already")
	}
	if err := s.audit(ctx, tx, acc.ID, "subscription.request", "subscription", sub.ID, nil, sub); err != nil {
		return nil, err
	}
	return sub, s.mailOperators(ctx, tx, acc, fmt.Sprintf("Key request: %s for %s", p.Name, app.Name), fmt.Sprintf(
		"%s <%s> asks for the %s plan of %s.\n\nApplication: %s\nWebsite: %s\nDescription: %s\nCallback URL: %s\nKey: %s\nSubscription: %s\n\nReview it at %s\n",
		acc.Name, acc.Email, plan.Name, p.Name, app.Name, orNone(app.Website), app.Description, orNone(app.CallbackURL), k.Hint, sub.ID, s.PortalURL))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// RotateKeySecret gives one of the developer's keys a new secret, shown once; the old secret,
// the tokens issued with it and the key's trial keys stop working.
func (s *Service) RotateKeySecret(ctx context.Context, keyID string) (*flightgraph.NewKey, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	secret := NewCredential(KindSecret)
	var k *flightgraph.Key
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		// Held, as by TrialKey, so that no trial key minted before the rotation outlives it.
		if err := tx.LockAccount(ctx, acc.ID); err != nil {
			return err
		}
		before, _, err := ownKey(ctx, tx, acc, keyID, "keyId")
		if err != nil {
			return err
		}
		if before.Status != flightgraph.KeyActive {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "keyId", "the key is revoked")
		}
		after := *before
		after.SecretHash = HashCredential(secret)
		if err := tx.UpdateKey(ctx, &after); err != nil {
			return err
		}
		if err := tx.RevokeKeyTokens(ctx, keyID, s.now()); err != nil {
			return err
		}
		if _, err := tx.DeleteTrialKeys(ctx, keyID, 0, s.now()); err != nil {
			return err
		}
		k = &after
		return s.audit(ctx, tx, acc.ID, "key.rotate_secret", "key", keyID, before, &after)
	})
	if err != nil {
		return nil, err
	}
	s.changed(keyID)
	return &flightgraph.NewKey{Key: k, Secret: secret}, nil
}

// RevokeKey revokes one of the developer's keys, its approved subscriptions and its trial keys.
func (s *Service) RevokeKey(ctx context.Context, keyID string) (*flightgraph.Key, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	var k *flightgraph.Key
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if err := tx.LockAccount(ctx, acc.ID); err != nil {
			return err
		}
		before, _, err := ownKey(ctx, tx, acc, keyID, "keyId")
		if err != nil {
			return err
		}
		if before.Status == flightgraph.KeyRevoked {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "keyId", "the key is revoked already")
		}
		after := *before
		after.Status = flightgraph.KeyRevoked
		if err := tx.UpdateKey(ctx, &after); err != nil {
			return err
		}
		if err := tx.RevokeKeyTokens(ctx, keyID, s.now()); err != nil {
			return err
		}
		if _, err := tx.DeleteTrialKeys(ctx, keyID, 0, s.now()); err != nil {
			return err
		}
		subs, err := tx.SubscriptionsByKeys(ctx, []string{keyID})
		if err != nil {
			return err
		}
		for _, sub := range subs[0] {
			if sub.Status.CanBecome(flightgraph.SubscriptionRevoked) {
				if err := s.decide(ctx, tx, acc, sub, flightgraph.SubscriptionRevoked, "the key was revoked by its owner"); err != nil {
					return err
				}
			}
		}
		k = &after
		return s.audit(ctx, tx, acc.ID, "key.revoke", "key", keyID, before, &after)
	})
	if err != nil {
		return nil, err
	}
	s.changed(keyID)
	return k, nil
}

// TrialKeyTTL is how long a trial key lasts at most: long enough for a session on the Try it
// page, short enough that one left in a browser's memory or history is soon worthless.
const TrialKeyTTL = 15 * time.Minute

// TrialKeysPerKey bounds the live trial keys of one key: minting another deletes the oldest.
const TrialKeysPerKey = 5

// TrialKey mints a trial key of one of the signed-in developer's active keys, for the portal's
// Try it page and playground: a credential pair that acts as the key (its limits and usage are
// the key's) without its secret, which is never stored. It works in the api-key header and, as
// client_id and client_secret, for the client credentials grant only. It ends after TrialKeyTTL
// or with the session that minted it (at the session's end or signOut), whichever is first; at
// once when the key's secret is rotated, the key is revoked or its application deleted; and when
// TrialKeysPerKey newer ones are minted for the key. Only its hashes are stored, and its audit
// entry (key.trial) names the key and the expiry, never the secret.
//
// Errors: PORTAL_401.000 (ECodeNotSignedIn) without a portal session, whatever other credential
// the call carries; PORTAL_404.000 (ECodeNotFound) for a key that is not the account's, exactly
// as for one that does not exist; PORTAL_409.001 (ECodeInvalidState) for a revoked key.
func (s *Service) TrialKey(ctx context.Context, keyID string) (*flightgraph.NewTrialKey, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	apiKey, secret := NewCredential(KindTrialKey), NewCredential(KindTrialSecret)
	now := s.now()
	tk := &flightgraph.TrialKey{KeyHash: HashCredential(apiKey), SecretHash: HashCredential(secret),
		SessionHash: flightgraph.CallerFromContext(ctx).SessionHash, CreatedAt: now, ExpiresAt: now.Add(TrialKeyTTL)}
	var (
		k       *flightgraph.Key
		evicted int
	)
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		// Held so that the bound holds between concurrent mints, and a rotation or revocation
		// comes wholly before or after a mint.
		if err := tx.LockAccount(ctx, acc.ID); err != nil {
			return err
		}
		if k, _, err = ownKey(ctx, tx, acc, keyID, "keyId"); err != nil {
			return err
		}
		if k.Status != flightgraph.KeyActive {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "keyId", "the key is revoked")
		}
		tk.KeyID = k.ID
		if err := tx.CreateTrialKey(ctx, tk); errIsNotFound(err) {
			return flightgraph.Errorf(flightgraph.ECodeNotSignedIn, "the portal session is unknown or expired: sign in again")
		} else if err != nil {
			return err
		}
		if evicted, err = tx.DeleteTrialKeys(ctx, k.ID, TrialKeysPerKey, now); err != nil {
			return err
		}
		return s.audit(ctx, tx, acc.ID, "key.trial", "key", k.ID, nil, tk)
	})
	if err != nil {
		return nil, err
	}
	if evicted > 0 {
		s.changed(k.ID)
	}
	return &flightgraph.NewTrialKey{TrialKey: tk, APIKey: apiKey, Secret: secret, Key: k}, nil
}

// RequestLimitIncrease asks the operators for higher limits on one of the developer's approved
// subscriptions.
func (s *Service) RequestLimitIncrease(ctx context.Context, in flightgraph.LimitIncreaseInput) (*flightgraph.LimitIncreaseRequest, error) {
	acc, err := account(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	r := &flightgraph.LimitIncreaseRequest{ID: NewID("lim"), SubscriptionID: in.SubscriptionID, AccountID: acc.ID, Description: strings.TrimSpace(in.Description),
		EstimatedPerSecond: in.EstimatedPerSecond, EstimatedPerDay: in.EstimatedPerDay, Status: flightgraph.LimitRequestPending, CreatedAt: s.now()}
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		sub, err := ownSubscription(ctx, tx, acc, in.SubscriptionID, "subscriptionId")
		if err != nil {
			return err
		}
		if sub.Status != flightgraph.SubscriptionApproved {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "subscriptionId", "limits can be raised on approved subscriptions only; this one is %s", sub.Status)
		}
		if err := s.claim(ctx, tx, acc, in.RequestToken); err != nil {
			return err
		}
		if err := tx.CreateLimitRequest(ctx, r); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, acc.ID, "limit_request.create", "limit_request", r.ID, nil, r); err != nil {
			return err
		}
		return s.mailOperators(ctx, tx, acc, "Limit increase request for "+sub.Product, fmt.Sprintf(
			"%s <%s> asks for higher limits on %s (subscription %s): about %d calls per second and %d per day.\n\n%s\n\nReview it at %s\n",
			acc.Name, acc.Email, sub.Product, sub.ID, r.EstimatedPerSecond, r.EstimatedPerDay, r.Description, s.PortalURL))
	})
	return r, err
}

// PendingSubscriptions returns the requests waiting for an operator.
func (s *Service) PendingSubscriptions(ctx context.Context) ([]*flightgraph.Subscription, error) {
	if _, err := operator(ctx); err != nil {
		return nil, err
	}
	return s.Store.PendingSubscriptions(ctx)
}

// ApproveSubscription approves a pending subscription and tells the developer.
func (s *Service) ApproveSubscription(ctx context.Context, id string) (*flightgraph.Subscription, error) {
	return s.transition(ctx, id, flightgraph.SubscriptionApproved, "")
}

// RejectSubscription rejects a pending subscription with a reason and tells the developer.
func (s *Service) RejectSubscription(ctx context.Context, id, reason string) (*flightgraph.Subscription, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "reason", "a rejection needs a reason for the developer")
	}
	return s.transition(ctx, id, flightgraph.SubscriptionRejected, reason)
}

// RevokeSubscription revokes an approved subscription with a reason and tells the developer.
func (s *Service) RevokeSubscription(ctx context.Context, id, reason string) (*flightgraph.Subscription, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "reason", "a revocation needs a reason for the developer")
	}
	return s.transition(ctx, id, flightgraph.SubscriptionRevoked, reason)
}

func (s *Service) transition(ctx context.Context, id string, to flightgraph.SubscriptionStatus, reason string) (*flightgraph.Subscription, error) {
	op, err := operator(ctx)
	if err != nil {
		return nil, err
	}
	var sub *flightgraph.Subscription
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if sub, err = tx.Subscription(ctx, id); err != nil {
			return notYours(err, "subscription", "id")
		}
		return s.decide(ctx, tx, op, sub, to, reason)
	})
	if err != nil {
		return nil, err
	}
	s.changed(sub.KeyID)
	return sub, nil
}

// decide moves sub to a new status, audits it and mails the key's owner; sub is updated in place.
func (s *Service) decide(ctx context.Context, tx flightgraph.AccessTx, actor *flightgraph.Account, sub *flightgraph.Subscription, to flightgraph.SubscriptionStatus, reason string) error {
	if !sub.Status.CanBecome(to) {
		return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "id", "a %s subscription cannot become %s", sub.Status, to)
	}
	before := *sub
	now := s.now()
	sub.Status, sub.Reason, sub.DecidedAt, sub.DecidedBy = to, reason, &now, actor.ID
	if err := tx.UpdateSubscription(ctx, sub); err != nil {
		return err
	}
	if err := s.audit(ctx, tx, actor.ID, "subscription."+string(to), "subscription", sub.ID, &before, sub); err != nil {
		return err
	}
	owner, app, err := keyOwner(ctx, tx, sub.KeyID)
	if err != nil {
		return err
	}
	p := product(sub.Product)
	name := sub.Product
	if p != nil {
		name = p.Name
	}
	var subject, body string
	switch to {
	case flightgraph.SubscriptionApproved:
		subject = "Your key is approved for " + name
		body = fmt.Sprintf("Hello %s,\n\nyour request for %s for the application %s is approved. The key works now; its limits are on your account page: %s\n", owner.Name, name, app.Name, s.PortalURL)
	case flightgraph.SubscriptionRejected:
		subject = "Your key request for " + name + " is declined"
		body = fmt.Sprintf("Hello %s,\n\nyour request for %s for the application %s is declined:\n\n%s\n\nQuestions? Reply to this mail.\n", owner.Name, name, app.Name, reason)
	case flightgraph.SubscriptionRevoked:
		subject = "Access to " + name + " is revoked"
		body = fmt.Sprintf("Hello %s,\n\nthe access of your application %s to %s is revoked:\n\n%s\n", owner.Name, app.Name, name, reason)
	}
	return s.mailDecision(ctx, tx, &flightgraph.Mail{To: owner.Email, Subject: subject, Body: body, CreatedAt: now})
}

func keyOwner(ctx context.Context, r flightgraph.AccessReader, keyID string) (*flightgraph.Account, *flightgraph.Application, error) {
	k, err := r.Key(ctx, keyID)
	if err != nil {
		return nil, nil, err
	}
	app, err := r.Application(ctx, k.ApplicationID)
	if err != nil {
		return nil, nil, err
	}
	acc, err := r.AccountByID(ctx, app.AccountID)
	return acc, app, err
}

// LimitIncreaseRequests returns the limit requests for operators, pending ones with "pending".
func (s *Service) LimitIncreaseRequests(ctx context.Context, status flightgraph.LimitRequestStatus) ([]*flightgraph.LimitIncreaseRequest, error) {
	if _, err := operator(ctx); err != nil {
		return nil, err
	}
	return s.Store.LimitRequests(ctx, status)
}

// LimitReview is an operator's answer to a limit increase request.
type LimitReview struct {
	ID      string
	Approve bool
	Limits  flightgraph.Limits // the custom plan's, when approving
	// Queries raises the custom plan's GraphQL operation bounds; a zero field keeps the
	// current plan's.
	Queries flightgraph.QueryLimits
	Reply   string
}

// ReviewLimitIncrease grants a custom plan or declines, and mails the developer the reply.
func (s *Service) ReviewLimitIncrease(ctx context.Context, rv LimitReview) (*flightgraph.LimitIncreaseRequest, error) {
	op, err := operator(ctx)
	if err != nil {
		return nil, err
	}
	rv.Reply = strings.TrimSpace(rv.Reply)
	if rv.Reply == "" {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "reply", "a review needs a reply for the developer")
	}
	if rv.Approve {
		if err := rv.Limits.Validate(); err != nil {
			return nil, err
		}
		if err := rv.Queries.Validate(flightgraph.DefaultQueryLimits); err != nil {
			return nil, err // before the transaction; against the plan's own bounds in it
		}
	}
	var (
		req     *flightgraph.LimitIncreaseRequest
		sub     *flightgraph.Subscription
		granted flightgraph.QueryLimits
	)
	err = s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		if req, err = tx.LimitRequest(ctx, rv.ID); err != nil {
			return notYours(err, "limit increase request", "id")
		}
		if req.Status != flightgraph.LimitRequestPending {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidState, "id", "the request is %s already", req.Status)
		}
		if sub, err = tx.Subscription(ctx, req.SubscriptionID); err != nil {
			return err
		}
		before := *req
		now := s.now()
		req.Status, req.Reply, req.ReviewedBy, req.ReviewedAt = flightgraph.LimitRequestDeclined, rv.Reply, op.ID, &now
		if rv.Approve {
			req.Status = flightgraph.LimitRequestGranted
			// The operation bounds the review leaves out stay the current plan's.
			current, err := tx.Plan(ctx, sub.PlanID)
			if err != nil {
				return err
			}
			if err := rv.Queries.Validate(current.QueryLimits); err != nil {
				return err
			}
			plan := &flightgraph.Plan{ID: NewID("plan"), Product: sub.Product, Name: flightgraph.CustomPlanName(rv.Limits), Custom: true, Limits: rv.Limits,
				QueryLimits: rv.Queries.Or(current.QueryLimits)}
			granted = plan.QueryLimits.Or(flightgraph.DefaultQueryLimits)
			if err := tx.CreatePlan(ctx, plan); err != nil {
				return err
			}
			if err := s.audit(ctx, tx, op.ID, "plan.create", "plan", plan.ID, nil, plan); err != nil {
				return err
			}
			subBefore := *sub
			sub.PlanID = plan.ID
			if err := tx.UpdateSubscription(ctx, sub); err != nil {
				return err
			}
			if err := s.audit(ctx, tx, op.ID, "subscription.change_plan", "subscription", sub.ID, &subBefore, sub); err != nil {
				return err
			}
		}
		if err := tx.UpdateLimitRequest(ctx, req); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, op.ID, "limit_request."+string(req.Status), "limit_request", req.ID, &before, req); err != nil {
			return err
		}
		owner, err := tx.AccountByID(ctx, req.AccountID)
		if err != nil {
			return err
		}
		subject, body := "Your limit increase request is declined", fmt.Sprintf("Hello %s,\n\nyour request for higher limits on %s is declined:\n\n%s\n", owner.Name, sub.Product, rv.Reply)
		if rv.Approve {
			bounds := ""
			if rv.Queries != (flightgraph.QueryLimits{}) {
				q := granted
				bounds = fmt.Sprintf(" Each GraphQL operation may now cost %d, nest %d deep, have %d aliases, %d root fields and %d tokens.",
					q.MaxCost, q.MaxDepth, q.MaxAliases, q.MaxRootFields, q.MaxTokens)
			}
			subject, body = "Your limit increase is granted", fmt.Sprintf("Hello %s,\n\nyour limits on %s are now %d calls per second and %d per day.%s\n\n%s\n", owner.Name, sub.Product, rv.Limits.PerSecond, rv.Limits.PerDay, bounds, rv.Reply)
		}
		return s.mailDecision(ctx, tx, &flightgraph.Mail{To: owner.Email, Subject: subject, Body: body, CreatedAt: now})
	})
	if err != nil {
		return nil, err
	}
	s.changed(sub.KeyID)
	return req, nil
}

// AuditLog returns the newest audit entries that match the filter, for operators: at most limit
// (MaxPageSize when not between 1 and it) from offset (0 when negative). It returns
// ECodeNotSignedIn or ECodeOperatorsOnly for anyone else, then the filter's validation errors
// (ECodeInvalidParameter).
func (s *Service) AuditLog(ctx context.Context, f flightgraph.AuditFilter, limit, offset int) ([]*flightgraph.AuditEntry, error) {
	if _, err := operator(ctx); err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > flightgraph.MaxPageSize {
		limit = flightgraph.MaxPageSize
	}
	return s.Store.AuditLog(ctx, f, limit, max(offset, 0))
}

// MaxAuditActions bounds the list of the audit log's distinct actions; the code writes about
// twenty.
const MaxAuditActions = 200

// AuditActions returns the distinct actions of the audit log in order, for operators: what the
// log can be filtered by. ECodeNotSignedIn or ECodeOperatorsOnly for anyone else.
func (s *Service) AuditActions(ctx context.Context) ([]string, error) {
	if _, err := operator(ctx); err != nil {
		return nil, err
	}
	return s.Store.AuditActions(ctx, MaxAuditActions)
}

// mailOperators enqueues a message to every operator about a request of the account requester;
// with none, the request waits unseen, so that is logged loudly. The notices spend from the mail
// budget (MailToOperators): past the requesting account's or its client's budget, or the
// replica's, they are not mailed, and the request is made all the same: it waits on the
// operators' desk (pendingSubscriptions, limitIncreaseRequests), so that a developer's hundred
// key requests make a few mails, not a hundred to each operator.
func (s *Service) mailOperators(ctx context.Context, tx flightgraph.AccessTx, requester *flightgraph.Account, subject, body string) error {
	ops, err := tx.Operators(ctx)
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		if s.Log != nil {
			s.Log.Warn("no operator account to tell of a request: add one with 'flightgraph operator add'", "subject", subject)
		}
		return nil
	}
	to := make([]string, len(ops))
	for i, op := range ops {
		to[i] = op.Email
	}
	if s.MailBudget != nil {
		if err := s.MailBudget.Spend(ctx, flightgraph.MailCharge{Kind: flightgraph.MailToOperators, To: to, Account: requester.ID}); err != nil {
			if s.Log != nil && flightgraph.ErrorCode(err) != flightgraph.ECodeTooManyMails && flightgraph.ErrorCode(err) != flightgraph.ECodeMailBusy {
				s.Log.WarnContext(ctx, "access: the mail budget failed; the operators are not mailed this request, which waits on their desk", "err", err)
			}
			return nil
		}
	}
	for _, op := range ops {
		if err := tx.EnqueueMail(ctx, &flightgraph.Mail{To: op.Email, Subject: subject, Body: body, CreatedAt: s.now()}); err != nil {
			return err
		}
	}
	return nil
}

// mailDecision queues the mail that tells an account of an operator's decision about it, counted
// in the mail budget (MailDecision) but never refused: the decision is made in this transaction,
// one at a time by an operator's hand, and dropping its mail would leave a developer unaware of a
// real change (a revoked key, a declined request).
func (s *Service) mailDecision(ctx context.Context, tx flightgraph.AccessTx, m *flightgraph.Mail) error {
	if s.MailBudget != nil {
		// Never refused; a failure to count is the budget's to log.
		_ = s.MailBudget.Spend(ctx, flightgraph.MailCharge{Kind: flightgraph.MailDecision, To: []string{m.To}})
	}
	return tx.EnqueueMail(ctx, m)
}

// audit appends an entry; before and after are marshalled to JSON, whose tags keep hashes out.
func (s *Service) audit(ctx context.Context, tx flightgraph.AccessTx, actor, action, targetType, targetID string, before, after any) error {
	enc := func(v any) (string, error) {
		if v == nil {
			return "", nil
		}
		b, err := json.Marshal(v)
		return string(b), err
	}
	b, err := enc(before)
	if err != nil {
		return err
	}
	a, err := enc(after)
	if err != nil {
		return err
	}
	return tx.AddAudit(ctx, &flightgraph.AuditEntry{At: s.now(), Actor: actor, Action: action, TargetType: targetType, TargetID: targetID, Before: b, After: a})
}

// exists says a store's ErrExists in the portal's words: ECodeConflict with msg; any other error
// as it is.
func exists(err error, msg string) error {
	if errors.Is(err, flightgraph.ErrExists) {
		return &flightgraph.Error{Code: flightgraph.ECodeConflict, Message: msg, Err: err}
	}
	return err
}

// errIsNotFound reports whether err is ECodeNotFound.
func errIsNotFound(err error) bool {
	if err == nil {
		return false
	}
	var fe *flightgraph.Error
	return errors.As(err, &fe) && fe.Code == flightgraph.ECodeNotFound
}

// LoyaltyTier is the loyalty tier a call is answered for: the tier of the customer behind a
// password-grant token, whatever the request says, else the request's loyaltyProgram (PROGRAMME_TIER,
// "" for none). It returns ParseLoyalty's errors.
func (s *Service) LoyaltyTier(ctx context.Context, loyaltyProgram string) (string, error) {
	if c := flightgraph.CallerFromContext(ctx); c.CustomerID != "" {
		cust, err := s.Store.CustomerByID(ctx, c.CustomerID)
		if err != nil {
			return "", err
		}
		return cust.Tier, nil
	}
	if loyaltyProgram == "" {
		return "", nil
	}
	return flightgraph.ParseLoyalty(loyaltyProgram)
}
