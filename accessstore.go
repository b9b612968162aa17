package flightgraph

import (
	"context"
	"time"
)

// KeyAccess is everything authentication needs about a key, read in one go: the key, its
// application's owner, and its approved subscriptions with their plans.
//
// Read for a trial key (TrialKeyAccess), it is the key's, except that Key.SecretHash is the
// trial secret's hash, so that the trial's pair authenticates where the key's would; TrialHash is
// the trial key's hash and TrialExpiresAt when it ends. Both are empty for the key itself.
type KeyAccess struct {
	Key            *Key
	Application    *Application
	Account        *Account
	Products       map[string]*Entitlement
	TrialHash      string
	TrialExpiresAt time.Time
}

// Trial reports whether ka was read for a trial key.
func (ka *KeyAccess) Trial() bool { return ka.TrialHash != "" }

// AccessReader reads the access core. Lookups of one thing return ECodeNotFound when it does not
// exist.
type AccessReader interface {
	Plan(ctx context.Context, id string) (*Plan, error)
	// PlansByIDs returns the plans of ids in their order, nil for an unknown one.
	PlansByIDs(ctx context.Context, ids []string) ([]*Plan, error)

	AccountByID(ctx context.Context, id string) (*Account, error)
	// AccountsByIDs returns the accounts of ids in their order, nil for an unknown one.
	AccountsByIDs(ctx context.Context, ids []string) ([]*Account, error)
	AccountByEmail(ctx context.Context, email string) (*Account, error)
	// AccountBySession returns the account of an unexpired session.
	AccountBySession(ctx context.Context, tokenHash string, now time.Time) (*Account, error)
	Operators(ctx context.Context) ([]*Account, error)
	CustomerByUsername(ctx context.Context, username string) (*Customer, error)
	CustomerByID(ctx context.Context, id string) (*Customer, error)

	Application(ctx context.Context, id string) (*Application, error)
	ApplicationsByAccount(ctx context.Context, accountID string) ([]*Application, error)
	// OwnApplication, OwnKey and OwnSubscription read an application, a key (with its
	// application) or a subscription by id only if the account owns it, in one query whose
	// condition holds the ownership: another account's id is ECodeNotFound exactly as an id
	// that does not exist, with the same work done for both.
	OwnApplication(ctx context.Context, accountID, id string) (*Application, error)
	OwnKey(ctx context.Context, accountID, id string) (*Key, *Application, error)
	OwnSubscription(ctx context.Context, accountID, id string) (*Subscription, error)
	Key(ctx context.Context, id string) (*Key, error)
	// KeysByApplications returns each application's keys, newest first, in key order.
	KeysByApplications(ctx context.Context, appIDs []string) ([][]*Key, error)
	// ActiveKeys counts the active keys of an application.
	ActiveKeys(ctx context.Context, applicationID string) (int, error)
	// KeyAccess returns what authentication needs of the key with this hash.
	KeyAccess(ctx context.Context, keyHash string) (*KeyAccess, error)
	// KeyAccessByID is KeyAccess for the key with this id.
	KeyAccessByID(ctx context.Context, keyID string) (*KeyAccess, error)
	// TrialKeyAccess is KeyAccess for the trial key with this hash, read as the key's: only while
	// the trial is unexpired at now, the session that minted it lasts and the key is active;
	// ECodeNotFound otherwise.
	TrialKeyAccess(ctx context.Context, keyHash string, now time.Time) (*KeyAccess, error)
	Subscription(ctx context.Context, id string) (*Subscription, error)
	// SubscriptionsByKeys returns each key's subscriptions ordered by product, in key order.
	SubscriptionsByKeys(ctx context.Context, keyIDs []string) ([][]*Subscription, error)
	PendingSubscriptions(ctx context.Context) ([]*Subscription, error)
	LimitRequest(ctx context.Context, id string) (*LimitIncreaseRequest, error)
	// LimitRequests returns requests of the status ("" for all), newest first.
	LimitRequests(ctx context.Context, status LimitRequestStatus) ([]*LimitIncreaseRequest, error)
	// UsageOn returns each subscription's calls on the UTC day, in key order.
	UsageOn(ctx context.Context, subscriptionIDs []string, day string) ([]int64, error)
	// UsageBetween returns each subscription's stored days from the UTC day from to the day to,
	// both included, oldest first (a day without calls has no row), in key order.
	UsageBetween(ctx context.Context, subscriptionIDs []string, from, to string) ([][]*Usage, error)
	// LimitRequestsBySubscriptions returns the newest limit requests of each subscription, at most
	// limit of each, newest first, in key order.
	LimitRequestsBySubscriptions(ctx context.Context, subscriptionIDs []string, limit int) ([][]*LimitIncreaseRequest, error)
	// SubscriptionOwners returns the id of the account whose application holds each
	// subscription's key ("" for a subscription that does not exist), in key order.
	SubscriptionOwners(ctx context.Context, subscriptionIDs []string) ([]string, error)
	Token(ctx context.Context, hash string) (*Token, error)
	// SignUp returns the unexpired pending sign-up with this token hash; ECodeNotFound if there
	// is none.
	SignUp(ctx context.Context, tokenHash string, now time.Time) (*PendingSignUp, error)
	AccessRequest(ctx context.Context, id string) (*AccessRequest, error)
	// AccessRequests returns requests of the status ("" for all), newest first, at most limit.
	AccessRequests(ctx context.Context, status AccessRequestStatus, limit int) ([]*AccessRequest, error)
	// AccessRequestsByAccount returns an account's requests, newest first, at most limit.
	AccessRequestsByAccount(ctx context.Context, accountID string, limit int) ([]*AccessRequest, error)
	// AuditLog returns the entries that match the filter, newest first.
	AuditLog(ctx context.Context, f AuditFilter, limit, offset int) ([]*AuditEntry, error)
	// AuditActions returns the distinct actions of the audit log, in order, at most limit.
	AuditActions(ctx context.Context, limit int) ([]string, error)
	// Accounts returns the accounts that match the filter, newest first.
	Accounts(ctx context.Context, f AccountFilter, limit, offset int) ([]*Account, error)
}

// AccessTx changes the access core inside one transaction.
type AccessTx interface {
	AccessReader
	// SyncProducts inserts or updates the built-in products and their standard plans.
	SyncProducts(ctx context.Context, products []*Product, plans []*Plan) error
	CreateAccount(ctx context.Context, a *Account) error // ErrExists if the e-mail is taken
	// SetAccountRole changes an account's role. It announces a change to each of the account's
	// keys (AccessFeed), since the guard decides by their owner's role what they may call.
	SetAccountRole(ctx context.Context, id string, role Role) error
	// LockAccount holds the account until the transaction ends, so that what its changes count
	// (its applications, their keys) cannot change under them.
	LockAccount(ctx context.Context, id string) error
	CreateSession(ctx context.Context, tokenHash, accountID string, now, expires time.Time) error
	CreateSignUp(ctx context.Context, p *PendingSignUp) error
	// DeleteSignUps deletes the pending sign-ups of an e-mail address and returns their token
	// hashes. Of concurrent calls for one address, one gets them; one statement takes every row
	// of the address, so that two calls never lock them in different orders.
	DeleteSignUps(ctx context.Context, email string) ([]string, error)
	// DeleteExpiredSignUps deletes the pending sign-ups that expired by now and returns how many.
	DeleteExpiredSignUps(ctx context.Context, now time.Time) (int64, error)
	// DeleteSession ends a session and the trial keys it minted, revokes the tokens issued to
	// those, announces each of their keys' change (AccessFeed) and returns the keys' ids.
	DeleteSession(ctx context.Context, tokenHash string) (keyIDs []string, err error)
	CreateCustomer(ctx context.Context, c *Customer) error // ErrExists if the user name is taken
	CreateApplication(ctx context.Context, a *Application) error
	UpdateApplication(ctx context.Context, a *Application) error
	DeleteApplication(ctx context.Context, id string) error
	CreateKey(ctx context.Context, k *Key) error
	UpdateKey(ctx context.Context, k *Key) error
	// CreateTrialKey stores a trial key minted by the session t.SessionHash, its expiry capped at
	// the session's end (t.ExpiresAt is set to what is stored); ECodeNotFound when the session
	// has ended.
	CreateTrialKey(ctx context.Context, t *TrialKey) error
	// DeleteTrialKeys deletes a key's expired trial keys and all but its newest keep live ones
	// (keep 0: all), revokes the tokens issued to those and, if it deleted any, announces the
	// key's change (AccessFeed). It returns how many it deleted.
	DeleteTrialKeys(ctx context.Context, keyID string, keep int, now time.Time) (int, error)
	CreatePlan(ctx context.Context, p *Plan) error
	CreateSubscription(ctx context.Context, s *Subscription) error // ErrExists if the key has the product
	UpdateSubscription(ctx context.Context, s *Subscription) error
	CreateLimitRequest(ctx context.Context, r *LimitIncreaseRequest) error
	UpdateLimitRequest(ctx context.Context, r *LimitIncreaseRequest) error
	CreateToken(ctx context.Context, t *Token) error
	// CreateAccessRequest stores a request; ErrExists if the account has one waiting for the API.
	CreateAccessRequest(ctx context.Context, r *AccessRequest) error
	UpdateAccessRequest(ctx context.Context, r *AccessRequest) error
	// ClaimRequestToken records that the account used a request token, forgetting its tokens
	// older than RequestTokenTTL; ErrExists if it used this one already.
	ClaimRequestToken(ctx context.Context, accountID, token string, now time.Time) error
	// UseRefreshToken marks an unused, unrevoked refresh token used; false if it was not.
	UseRefreshToken(ctx context.Context, hash string, now time.Time) (bool, error)
	RevokeTokenFamily(ctx context.Context, familyID string, now time.Time) error
	RevokeKeyTokens(ctx context.Context, keyID string, now time.Time) error
	AddAudit(ctx context.Context, e *AuditEntry) error
	MailQueue
}

// AccessStore is the access core's store.
type AccessStore interface {
	AccessReader
	// InTx runs fn in one transaction: everything fn changes commits together or not at all.
	InTx(ctx context.Context, fn func(tx AccessTx) error) error
	// AddUsage adds calls to subscriptions' counters of a day, creating them as needed.
	AddUsage(ctx context.Context, day string, calls map[string]int64) error
}

// AccessChange names what a committed change to access touched, so that every process drops
// what it cached of it: a key (KeyID: its status or secret, a subscription's status or plan, its
// application deleted, its tokens revoked, its owner's role) or a token family (FamilyID: revoked for refresh
// token reuse).
type AccessChange struct{ KeyID, FamilyID string }

// AccessWatcher is told of the changes an AccessFeed delivers; its methods are called one at a
// time.
type AccessWatcher interface {
	// AccessChanged is told of a change committed by any process.
	AccessChanged(c AccessChange)
	// AccessFeedUp is called when the feed listens, at first or again: every change committed
	// from then on is told; the ones committed before may not have been.
	AccessFeedUp()
	// AccessFeedDown is called when the feed stops listening: the changes committed from then on
	// until the next AccessFeedUp may never be told.
	AccessFeedDown(err error)
}

// AccessFeed tells every process of the changes to access that any of them commits, so that
// revocations reach every replica at once rather than when a cache entry expires. The store
// announces each change inside the transaction that makes it, so that a change rolled back is
// never told and a committed one is told to every listening process.
type AccessFeed interface {
	// Watch tells w of the changes until ctx is done. Until its first AccessFeedUp the feed is
	// down: the caller must not rely on it then.
	Watch(ctx context.Context, w AccessWatcher) error
}
