package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/flightgraph/flightgraph"
)

// AccessStore implements flightgraph.AccessStore.
type AccessStore struct{ accessQ }

var (
	_ flightgraph.AccessStore = (*AccessStore)(nil)
	_ flightgraph.AccessTx    = (*accessTx)(nil)
)

// NewAccessStore returns the access core's store of db.
func NewAccessStore(db *DB) *AccessStore { return &AccessStore{accessQ{db: db, q: db.db}} }

// accessQ runs the reads, on the database or inside a transaction.
type accessQ struct {
	db *DB
	q  queryer
}

// accessTx adds the writes; queued is set when one of them queued mail.
type accessTx struct {
	accessQ
	queued *bool
}

// InTx implements flightgraph.AccessStore.
func (s *AccessStore) InTx(ctx context.Context, fn func(tx flightgraph.AccessTx) error) error {
	return s.db.inMailTx(ctx, func(tx *sqlx.Tx, queued *bool) error { return fn(&accessTx{accessQ{db: s.db, q: tx}, queued}) })
}

// one reads a single row; no row is ECodeNotFound naming what.
func (a accessQ) one(ctx context.Context, dest any, what, query string, args ...any) error {
	err := a.db.get(ctx, a.q, dest, query, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return flightgraph.Errorf(flightgraph.ECodeNotFound, "%s not found", what)
	}
	return err
}

const planCols = `id, product, name, custom, per_second, per_day, max_cost, max_depth, max_aliases, max_root_fields, max_tokens`

// Plan implements flightgraph.AccessReader.
func (a accessQ) Plan(ctx context.Context, id string) (*flightgraph.Plan, error) {
	var p flightgraph.Plan
	return &p, a.one(ctx, &p, "plan", `SELECT `+planCols+` FROM plans WHERE id = ?`, id)
}

// PlansByIDs implements flightgraph.AccessReader.
func (a accessQ) PlansByIDs(ctx context.Context, ids []string) ([]*flightgraph.Plan, error) {
	var rows []*flightgraph.Plan
	if err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+planCols+` FROM plans WHERE id IN (?)`, unique(ids)); err != nil {
		return nil, err
	}
	return byKey(ids, rows, func(p *flightgraph.Plan) string { return p.ID }), nil
}

const accountCols = `id, email, name, role, password_hash, created_at`

// AccountByID implements flightgraph.AccessReader.
func (a accessQ) AccountByID(ctx context.Context, id string) (*flightgraph.Account, error) {
	var acc flightgraph.Account
	return &acc, a.one(ctx, &acc, "account", `SELECT `+accountCols+` FROM accounts WHERE id = ?`, id)
}

// AccountsByIDs implements flightgraph.AccessReader.
func (a accessQ) AccountsByIDs(ctx context.Context, ids []string) ([]*flightgraph.Account, error) {
	var rows []*flightgraph.Account
	if err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+accountCols+` FROM accounts WHERE id IN (?)`, unique(ids)); err != nil {
		return nil, err
	}
	return byKey(ids, rows, func(acc *flightgraph.Account) string { return acc.ID }), nil
}

// AccountByEmail implements flightgraph.AccessReader.
func (a accessQ) AccountByEmail(ctx context.Context, email string) (*flightgraph.Account, error) {
	var acc flightgraph.Account
	return &acc, a.one(ctx, &acc, "account", `SELECT `+accountCols+` FROM accounts WHERE email = ?`, email)
}

// AccountBySession implements flightgraph.AccessReader.
func (a accessQ) AccountBySession(ctx context.Context, tokenHash string, now time.Time) (*flightgraph.Account, error) {
	var acc flightgraph.Account
	return &acc, a.one(ctx, &acc, "session", `SELECT a.id, a.email, a.name, a.role, a.password_hash, a.created_at
		FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ? AND s.expires_at > ?`, tokenHash, now.UTC())
}

// Operators implements flightgraph.AccessReader.
func (a accessQ) Operators(ctx context.Context) ([]*flightgraph.Account, error) {
	var rows []*flightgraph.Account
	err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+accountCols+` FROM accounts WHERE role = 'operator' ORDER BY email`)
	return rows, err
}

// CustomerByUsername implements flightgraph.AccessReader.
func (a accessQ) CustomerByUsername(ctx context.Context, username string) (*flightgraph.Customer, error) {
	var c flightgraph.Customer
	return &c, a.one(ctx, &c, "customer", `SELECT id, username, name, tier, password_hash FROM customers WHERE username = ?`, username)
}

// CustomerByID implements flightgraph.AccessReader.
func (a accessQ) CustomerByID(ctx context.Context, id string) (*flightgraph.Customer, error) {
	var c flightgraph.Customer
	return &c, a.one(ctx, &c, "customer", `SELECT id, username, name, tier, password_hash FROM customers WHERE id = ?`, id)
}

const appCols = `id, account_id, name, website, description, callback_url, created_at, updated_at`

// Application implements flightgraph.AccessReader.
func (a accessQ) Application(ctx context.Context, id string) (*flightgraph.Application, error) {
	var app flightgraph.Application
	return &app, a.one(ctx, &app, "application", `SELECT `+appCols+` FROM applications WHERE id = ?`, id)
}

// ApplicationsByAccount implements flightgraph.AccessReader.
func (a accessQ) ApplicationsByAccount(ctx context.Context, accountID string) ([]*flightgraph.Application, error) {
	var rows []*flightgraph.Application
	err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+appCols+` FROM applications WHERE account_id = ? ORDER BY created_at, id`, accountID)
	return rows, err
}

// OwnApplication implements flightgraph.AccessReader.
func (a accessQ) OwnApplication(ctx context.Context, accountID, id string) (*flightgraph.Application, error) {
	var app flightgraph.Application
	return &app, a.one(ctx, &app, "application", `SELECT `+appCols+` FROM applications WHERE id = ? AND account_id = ?`, id, accountID)
}

const keyCols = `id, application_id, hint, key_hash, secret_hash, status, created_at`

// keyAppCols selects a key k with its application p into a struct of K and P fields.
const keyAppCols = `
		k.id AS "k.id", k.application_id AS "k.application_id", k.hint AS "k.hint", k.key_hash AS "k.key_hash",
		k.secret_hash AS "k.secret_hash", k.status AS "k.status", k.created_at AS "k.created_at",
		p.id AS "p.id", p.account_id AS "p.account_id", p.name AS "p.name", p.website AS "p.website",
		p.description AS "p.description", p.callback_url AS "p.callback_url", p.created_at AS "p.created_at", p.updated_at AS "p.updated_at"`

// OwnKey implements flightgraph.AccessReader.
func (a accessQ) OwnKey(ctx context.Context, accountID, id string) (*flightgraph.Key, *flightgraph.Application, error) {
	var row struct {
		K flightgraph.Key         `db:"k"`
		P flightgraph.Application `db:"p"`
	}
	err := a.one(ctx, &row, "key", `SELECT `+keyAppCols+`
		FROM api_keys k JOIN applications p ON p.id = k.application_id WHERE k.id = ? AND p.account_id = ?`, id, accountID)
	if err != nil {
		return nil, nil, err
	}
	return &row.K, &row.P, nil
}

// Key implements flightgraph.AccessReader.
func (a accessQ) Key(ctx context.Context, id string) (*flightgraph.Key, error) {
	var k flightgraph.Key
	return &k, a.one(ctx, &k, "key", `SELECT `+keyCols+` FROM api_keys WHERE id = ?`, id)
}

// KeysByApplications implements flightgraph.AccessReader.
func (a accessQ) KeysByApplications(ctx context.Context, appIDs []string) ([][]*flightgraph.Key, error) {
	var rows []*flightgraph.Key
	if err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+keyCols+` FROM api_keys WHERE application_id IN (?) ORDER BY created_at DESC, id`, unique(appIDs)); err != nil {
		return nil, err
	}
	return groupByKey(appIDs, rows, func(k *flightgraph.Key) string { return k.ApplicationID }), nil
}

// ActiveKeys implements flightgraph.AccessReader.
func (a accessQ) ActiveKeys(ctx context.Context, applicationID string) (int, error) {
	var n int
	return n, a.db.get(ctx, a.q, &n, `SELECT COUNT(*) FROM api_keys WHERE application_id = ? AND status = 'active'`, applicationID)
}

// KeyAccess implements flightgraph.AccessReader.
func (a accessQ) KeyAccess(ctx context.Context, keyHash string) (*flightgraph.KeyAccess, error) {
	return a.keyAccess(ctx, "", "k.key_hash = ?", keyHash)
}

// KeyAccessByID implements flightgraph.AccessReader.
func (a accessQ) KeyAccessByID(ctx context.Context, keyID string) (*flightgraph.KeyAccess, error) {
	return a.keyAccess(ctx, "", "k.id = ?", keyID)
}

// trialJoin joins a key k to its trial keys t, and trialCols selects what KeyAccess needs of them.
const (
	trialJoin = ` JOIN trial_keys t ON t.key_id = k.id`
	trialCols = `, t.key_hash AS "t.key_hash", t.secret_hash AS "t.secret_hash", t.expires_at AS "t.expires_at"`
)

// TrialKeyAccess implements flightgraph.AccessReader: the key's access, read through the trial in
// the same two round trips, with the conditions of a live trial in the query. The session needs
// no condition of its own: a trial expires with its session at the latest (CreateTrialKey), and
// its row goes when the session's does (DeleteSession, and the foreign key's cascade).
func (a accessQ) TrialKeyAccess(ctx context.Context, keyHash string, now time.Time) (*flightgraph.KeyAccess, error) {
	return a.keyAccess(ctx, trialJoin, "t.key_hash = ? AND t.expires_at > ? AND k.status = 'active'", keyHash, now.UTC())
}

// keyAccess reads the key with its application and owner in one round trip, its approved
// subscriptions with their plans in a second. With join trialJoin, the key is read through one of
// its trial keys, whose secret hash and expiry the answer then carries.
func (a accessQ) keyAccess(ctx context.Context, join, cond string, args ...any) (*flightgraph.KeyAccess, error) {
	var row struct {
		K flightgraph.Key         `db:"k"`
		P flightgraph.Application `db:"p"`
		A flightgraph.Account     `db:"a"`
		T struct {
			KeyHash    string    `db:"key_hash"`
			SecretHash string    `db:"secret_hash"`
			ExpiresAt  time.Time `db:"expires_at"`
		} `db:"t"`
	}
	cols := ""
	if join != "" {
		cols = trialCols
	}
	err := a.one(ctx, &row, "key", `SELECT `+keyAppCols+`,
		a.id AS "a.id", a.email AS "a.email", a.name AS "a.name", a.role AS "a.role", a.password_hash AS "a.password_hash", a.created_at AS "a.created_at"`+cols+`
		FROM api_keys k JOIN applications p ON p.id = k.application_id JOIN accounts a ON a.id = p.account_id`+join+`
		WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	var subs []struct {
		SubscriptionID string `db:"subscription_id"`
		flightgraph.Plan
	}
	if err := a.db.selectIn(ctx, a.q, &subs, `SELECT s.id AS subscription_id, p.id, p.product, p.name, p.custom, p.per_second, p.per_day,
		p.max_cost, p.max_depth, p.max_aliases, p.max_root_fields, p.max_tokens
		FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE s.key_id = ? AND s.status = 'approved'`, row.K.ID); err != nil {
		return nil, err
	}
	ka := &flightgraph.KeyAccess{Key: &row.K, Application: &row.P, Account: &row.A, Products: map[string]*flightgraph.Entitlement{}}
	for i := range subs {
		plan := subs[i].Plan
		ka.Products[plan.Product] = &flightgraph.Entitlement{SubscriptionID: subs[i].SubscriptionID, Plan: &plan}
	}
	if join != "" {
		// The trial's secret stands for the key's.
		ka.Key.SecretHash, ka.TrialHash, ka.TrialExpiresAt = row.T.SecretHash, row.T.KeyHash, row.T.ExpiresAt.UTC()
	}
	return ka, nil
}

const subCols = `id, key_id, product, plan_id, status, reason, created_at, decided_at, decided_by`

// Subscription implements flightgraph.AccessReader.
func (a accessQ) Subscription(ctx context.Context, id string) (*flightgraph.Subscription, error) {
	var s flightgraph.Subscription
	return &s, a.one(ctx, &s, "subscription", `SELECT `+subCols+` FROM subscriptions WHERE id = ?`, id)
}

// OwnSubscription implements flightgraph.AccessReader.
func (a accessQ) OwnSubscription(ctx context.Context, accountID, id string) (*flightgraph.Subscription, error) {
	var s flightgraph.Subscription
	return &s, a.one(ctx, &s, "subscription", `SELECT s.id, s.key_id, s.product, s.plan_id, s.status, s.reason, s.created_at, s.decided_at, s.decided_by
		FROM subscriptions s JOIN api_keys k ON k.id = s.key_id JOIN applications p ON p.id = k.application_id
		WHERE s.id = ? AND p.account_id = ?`, id, accountID)
}

// SubscriptionsByKeys implements flightgraph.AccessReader.
func (a accessQ) SubscriptionsByKeys(ctx context.Context, keyIDs []string) ([][]*flightgraph.Subscription, error) {
	var rows []*flightgraph.Subscription
	if err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+subCols+` FROM subscriptions WHERE key_id IN (?) ORDER BY product`, unique(keyIDs)); err != nil {
		return nil, err
	}
	return groupByKey(keyIDs, rows, func(s *flightgraph.Subscription) string { return s.KeyID }), nil
}

// PendingSubscriptions implements flightgraph.AccessReader.
func (a accessQ) PendingSubscriptions(ctx context.Context) ([]*flightgraph.Subscription, error) {
	var rows []*flightgraph.Subscription
	err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+subCols+` FROM subscriptions WHERE status = 'pending' ORDER BY created_at, id`)
	return rows, err
}

const limitCols = `id, subscription_id, account_id, description, estimated_per_second, estimated_per_day, status, reply, reviewed_by, created_at, reviewed_at`

// LimitRequest implements flightgraph.AccessReader.
func (a accessQ) LimitRequest(ctx context.Context, id string) (*flightgraph.LimitIncreaseRequest, error) {
	var r flightgraph.LimitIncreaseRequest
	return &r, a.one(ctx, &r, "limit increase request", `SELECT `+limitCols+` FROM limit_requests WHERE id = ?`, id)
}

// LimitRequests implements flightgraph.AccessReader.
func (a accessQ) LimitRequests(ctx context.Context, status flightgraph.LimitRequestStatus) ([]*flightgraph.LimitIncreaseRequest, error) {
	var rows []*flightgraph.LimitIncreaseRequest
	err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+limitCols+` FROM limit_requests WHERE ? = '' OR status = ? ORDER BY created_at DESC, id`, status, status)
	return rows, err
}

// UsageOn implements flightgraph.AccessReader.
func (a accessQ) UsageOn(ctx context.Context, subscriptionIDs []string, day string) ([]int64, error) {
	out := make([]int64, len(subscriptionIDs))
	var rows []*flightgraph.Usage
	if err := a.db.selectIn(ctx, a.q, &rows, `SELECT subscription_id, day, calls FROM usage_daily WHERE day = ? AND subscription_id IN (?)`, day, unique(subscriptionIDs)); err != nil {
		return nil, err
	}
	got := byKey(subscriptionIDs, rows, func(u *flightgraph.Usage) string { return u.SubscriptionID })
	for i, u := range got {
		if u != nil {
			out[i] = u.Calls
		}
	}
	return out, nil
}

// UsageBetween implements flightgraph.AccessReader: the primary key (subscription_id, day) holds
// each subscription's days in order.
func (a accessQ) UsageBetween(ctx context.Context, subscriptionIDs []string, from, to string) ([][]*flightgraph.Usage, error) {
	var rows []*flightgraph.Usage
	if err := a.db.selectIn(ctx, a.q, &rows, `SELECT subscription_id, day, calls FROM usage_daily
		WHERE subscription_id IN (?) AND day BETWEEN ? AND ? ORDER BY subscription_id, day`, unique(subscriptionIDs), from, to); err != nil {
		return nil, err
	}
	return groupByKey(subscriptionIDs, rows, func(u *flightgraph.Usage) string { return u.SubscriptionID }), nil
}

// LimitRequestsBySubscriptions implements flightgraph.AccessReader: the newest of each
// subscription are numbered in one pass over the subscriptions' rows, so that a subscription with
// many requests adds no more to the answer than limit.
func (a accessQ) LimitRequestsBySubscriptions(ctx context.Context, subscriptionIDs []string, limit int) ([][]*flightgraph.LimitIncreaseRequest, error) {
	var rows []*flightgraph.LimitIncreaseRequest
	if err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+limitCols+` FROM (
			SELECT `+limitCols+`, ROW_NUMBER() OVER (PARTITION BY subscription_id ORDER BY created_at DESC, id) AS n
			FROM limit_requests WHERE subscription_id IN (?)
		) r WHERE n <= ? ORDER BY created_at DESC, id`, unique(subscriptionIDs), limit); err != nil {
		return nil, err
	}
	return groupByKey(subscriptionIDs, rows, func(r *flightgraph.LimitIncreaseRequest) string { return r.SubscriptionID }), nil
}

// SubscriptionOwners implements flightgraph.AccessReader.
func (a accessQ) SubscriptionOwners(ctx context.Context, subscriptionIDs []string) ([]string, error) {
	type owner struct {
		ID        string `db:"id"`
		AccountID string `db:"account_id"`
	}
	var rows []*owner
	if err := a.db.selectIn(ctx, a.q, &rows, `SELECT s.id, p.account_id
		FROM subscriptions s JOIN api_keys k ON k.id = s.key_id JOIN applications p ON p.id = k.application_id
		WHERE s.id IN (?)`, unique(subscriptionIDs)); err != nil {
		return nil, err
	}
	out := make([]string, len(subscriptionIDs))
	for i, o := range byKey(subscriptionIDs, rows, func(o *owner) string { return o.ID }) {
		if o != nil {
			out[i] = o.AccountID
		}
	}
	return out, nil
}

const tokenCols = `token_hash, kind, key_id, customer_id, grant_type, family_id, scope, created_at, expires_at, used_at, revoked_at`

// SignUp implements flightgraph.AccessReader.
func (a accessQ) SignUp(ctx context.Context, tokenHash string, now time.Time) (*flightgraph.PendingSignUp, error) {
	var p flightgraph.PendingSignUp
	return &p, a.one(ctx, &p, "sign-up", `SELECT `+signUpCols+` FROM signups WHERE token_hash = ? AND expires_at > ?`, tokenHash, now.UTC())
}

// Token implements flightgraph.AccessReader.
func (a accessQ) Token(ctx context.Context, hash string) (*flightgraph.Token, error) {
	var t flightgraph.Token
	return &t, a.one(ctx, &t, "token", `SELECT `+tokenCols+` FROM oauth_tokens WHERE token_hash = ?`, hash)
}

// AuditLog implements flightgraph.AccessReader. An exact action or actor walks its index
// (action, id) or (actor, id) newest first; a target its (target_type, target_id) or (target_id).
// An action prefix compares the action's first characters, exactly in both dialects (LIKE is
// case-insensitive in SQLite and would need its wildcards escaped): it walks the log newest first
// until the page is full, which the prefixes of common actions soon fill.
func (a accessQ) AuditLog(ctx context.Context, f flightgraph.AuditFilter, limit, offset int) ([]*flightgraph.AuditEntry, error) {
	var w filter
	switch {
	case f.ActionPrefix():
		w.add("substr(action, 1, ?) = ?", utf8.RuneCountInString(f.Action), f.Action)
	case f.Action != "":
		w.add("action = ?", f.Action)
	}
	for _, c := range []struct{ col, value string }{{"actor", f.Actor}, {"target_type", f.TargetType}, {"target_id", f.TargetID}} {
		if c.value != "" {
			w.add(c.col+" = ?", c.value)
		}
	}
	var rows []*flightgraph.AuditEntry
	err := a.db.selectIn(ctx, a.q, &rows, `SELECT id, at, actor, action, target_type, target_id, before, after FROM audit_log
		WHERE `+w.where()+` ORDER BY id DESC LIMIT ? OFFSET ?`, append(w.args, limit, offset)...)
	return rows, err
}

// AuditActions implements flightgraph.AccessReader. It skips through the index on action from
// one action to the next (a loose index scan, which neither dialect plans by itself for
// DISTINCT): as many index lookups as there are actions, however long the log.
func (a accessQ) AuditActions(ctx context.Context, limit int) ([]string, error) {
	var actions []string
	err := a.db.selectIn(ctx, a.q, &actions, `WITH RECURSIVE actions (action) AS (
			SELECT MIN(action) FROM audit_log
			UNION ALL
			SELECT (SELECT l.action FROM audit_log l WHERE l.action > actions.action ORDER BY l.action LIMIT 1)
			FROM actions WHERE actions.action IS NOT NULL
		)
		SELECT action FROM actions WHERE action IS NOT NULL LIMIT ?`, limit)
	return actions, err
}

// Accounts implements flightgraph.AccessReader. A role walks its index (role, created_at); an
// e-mail part reads every account of the role, as any substring search must.
func (a accessQ) Accounts(ctx context.Context, f flightgraph.AccountFilter, limit, offset int) ([]*flightgraph.Account, error) {
	var w filter
	if f.Role != "" {
		w.add("role = ?", f.Role)
	}
	if f.Email != "" {
		w.add("LOWER(email) LIKE ?"+likeEscape, containsPattern(strings.ToLower(f.Email)))
	}
	var rows []*flightgraph.Account
	err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+accountCols+` FROM accounts WHERE `+w.where()+`
		ORDER BY created_at DESC, id LIMIT ? OFFSET ?`, append(w.args, limit, offset)...)
	return rows, err
}

// AddUsage implements flightgraph.AccessStore: one upsert per subscription, all in one
// transaction.
func (s *AccessStore) AddUsage(ctx context.Context, day string, calls map[string]int64) error {
	if len(calls) == 0 {
		return nil
	}
	return s.db.inTx(ctx, func(tx *sqlx.Tx) error {
		for sub, n := range calls {
			// A subscription deleted since its calls were counted (its application was) has no
			// usage to keep: its counts are dropped, not left to fail the whole batch's foreign
			// key on every flush, which would lose every other subscription's counts of the day.
			if _, err := s.db.exec(ctx, tx, `INSERT INTO usage_daily (subscription_id, day, calls)
				SELECT id, ?, ? FROM subscriptions WHERE id = ?
				ON CONFLICT (subscription_id, day) DO UPDATE SET calls = usage_daily.calls + excluded.calls`, day, n, sub); err != nil {
				return err
			}
		}
		return nil
	})
}

// SyncProducts implements flightgraph.AccessTx.
func (t *accessTx) SyncProducts(ctx context.Context, products []*flightgraph.Product, plans []*flightgraph.Plan) error {
	for _, p := range products {
		grants := make([]string, len(p.Grants))
		for i, g := range p.Grants {
			grants[i] = string(g)
		}
		if _, err := t.db.exec(ctx, t.q, `INSERT INTO products (slug, name, description, visibility, auth, grants, operations)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (slug) DO UPDATE SET name = excluded.name, description = excluded.description,
			visibility = excluded.visibility, auth = excluded.auth, grants = excluded.grants, operations = excluded.operations`,
			p.Slug, p.Name, p.Description, p.Visibility, p.Auth, strings.Join(grants, ","), strings.Join(p.Operations, "\n")); err != nil {
			return err
		}
	}
	for _, p := range plans {
		if err := t.upsertPlan(ctx, p, `ON CONFLICT (id) DO UPDATE SET per_second = excluded.per_second, per_day = excluded.per_day,
			max_cost = excluded.max_cost, max_depth = excluded.max_depth, max_aliases = excluded.max_aliases,
			max_root_fields = excluded.max_root_fields, max_tokens = excluded.max_tokens`); err != nil {
			return err
		}
	}
	return nil
}

// CreateAccount implements flightgraph.AccessTx.
func (t *accessTx) CreateAccount(ctx context.Context, a *flightgraph.Account) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO accounts (id, email, name, role, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		a.ID, a.Email, a.Name, a.Role, a.PasswordHash, a.CreatedAt.UTC())
	return err
}

// SetAccountRole implements flightgraph.AccessTx.
func (t *accessTx) SetAccountRole(ctx context.Context, id string, role flightgraph.Role) error {
	if _, err := t.db.exec(ctx, t.q, `UPDATE accounts SET role = ? WHERE id = ?`, role, id); err != nil {
		return err
	}
	return t.announceAccount(ctx, id)
}

// LockAccount implements flightgraph.AccessTx. SQLite's transactions hold the whole database
// already (they begin IMMEDIATE); PostgreSQL's read committed ones lock the row.
func (t *accessTx) LockAccount(ctx context.Context, id string) error {
	if t.db.dialect != Postgres {
		return nil
	}
	_, err := t.db.exec(ctx, t.q, `SELECT 1 FROM accounts WHERE id = ? FOR UPDATE`, id)
	return err
}

// CreateSession implements flightgraph.AccessTx.
func (t *accessTx) CreateSession(ctx context.Context, tokenHash, accountID string, now, expires time.Time) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO sessions (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)`,
		tokenHash, accountID, now.UTC(), expires.UTC())
	return err
}

const signUpCols = `token_hash, email, name, password_hash, created_at, expires_at`

// CreateSignUp implements flightgraph.AccessTx.
func (t *accessTx) CreateSignUp(ctx context.Context, p *flightgraph.PendingSignUp) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO signups (`+signUpCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
		p.TokenHash, p.Email, p.Name, p.PasswordHash, p.CreatedAt.UTC(), p.ExpiresAt.UTC())
	return err
}

// DeleteSignUps implements flightgraph.AccessTx.
func (t *accessTx) DeleteSignUps(ctx context.Context, email string) ([]string, error) {
	var hashes []string
	err := t.db.selectIn(ctx, t.q, &hashes, `DELETE FROM signups WHERE email = ? RETURNING token_hash`, email)
	return hashes, err
}

// DeleteExpiredSignUps implements flightgraph.AccessTx.
func (t *accessTx) DeleteExpiredSignUps(ctx context.Context, now time.Time) (int64, error) {
	res, err := t.db.exec(ctx, t.q, `DELETE FROM signups WHERE expires_at <= ?`, now.UTC())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// DeleteSession implements flightgraph.AccessTx. The session's trial keys would go by the
// foreign key's cascade; they are deleted first so that their tokens go too and their keys are
// announced, which the cascade would not do.
func (t *accessTx) DeleteSession(ctx context.Context, tokenHash string) ([]string, error) {
	keys, _, err := t.deleteTrials(ctx, `session_hash = ?`, tokenHash)
	if err != nil {
		return nil, err
	}
	_, err = t.db.exec(ctx, t.q, `DELETE FROM sessions WHERE token_hash = ?`, tokenHash)
	return keys, err
}

// CreateCustomer implements flightgraph.AccessTx.
func (t *accessTx) CreateCustomer(ctx context.Context, c *flightgraph.Customer) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO customers (id, username, name, tier, password_hash) VALUES (?, ?, ?, ?, ?)`,
		c.ID, c.Username, c.Name, c.Tier, c.PasswordHash)
	return err
}

// CreateApplication implements flightgraph.AccessTx.
func (t *accessTx) CreateApplication(ctx context.Context, a *flightgraph.Application) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO applications (id, account_id, name, website, description, callback_url, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, a.AccountID, a.Name, a.Website, a.Description, a.CallbackURL, a.CreatedAt.UTC(), a.UpdatedAt.UTC())
	return err
}

// UpdateApplication implements flightgraph.AccessTx.
func (t *accessTx) UpdateApplication(ctx context.Context, a *flightgraph.Application) error {
	_, err := t.db.exec(ctx, t.q, `UPDATE applications SET name = ?, website = ?, description = ?, callback_url = ?, updated_at = ? WHERE id = ?`,
		a.Name, a.Website, a.Description, a.CallbackURL, a.UpdatedAt.UTC(), a.ID)
	return err
}

// DeleteApplication implements flightgraph.AccessTx: the application with its keys, their
// subscriptions, usage, limit requests, trial keys and tokens. It announces each key's change (AccessFeed),
// as UpdateKey, UpdateSubscription, RevokeKeyTokens and RevokeTokenFamily do theirs.
func (t *accessTx) DeleteApplication(ctx context.Context, id string) error {
	if err := t.announceApplication(ctx, id); err != nil {
		return err
	}
	keys := `SELECT id FROM api_keys WHERE application_id = ?`
	subs := `SELECT id FROM subscriptions WHERE key_id IN (` + keys + `)`
	for _, q := range []string{
		`DELETE FROM usage_daily WHERE subscription_id IN (` + subs + `)`,
		`DELETE FROM limit_requests WHERE subscription_id IN (` + subs + `)`,
		`DELETE FROM subscriptions WHERE key_id IN (` + keys + `)`,
		`DELETE FROM oauth_tokens WHERE key_id IN (` + keys + `)`,
		`DELETE FROM trial_keys WHERE key_id IN (` + keys + `)`,
		`DELETE FROM api_keys WHERE application_id = ?`,
		`DELETE FROM applications WHERE id = ?`,
	} {
		if _, err := t.db.exec(ctx, t.q, q, id); err != nil {
			return err
		}
	}
	return nil
}

// CreateKey implements flightgraph.AccessTx.
func (t *accessTx) CreateKey(ctx context.Context, k *flightgraph.Key) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO api_keys (id, application_id, hint, key_hash, secret_hash, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.ApplicationID, k.Hint, k.KeyHash, k.SecretHash, k.Status, k.CreatedAt.UTC())
	return err
}

// UpdateKey implements flightgraph.AccessTx.
func (t *accessTx) UpdateKey(ctx context.Context, k *flightgraph.Key) error {
	if _, err := t.db.exec(ctx, t.q, `UPDATE api_keys SET secret_hash = ?, status = ? WHERE id = ?`, k.SecretHash, k.Status, k.ID); err != nil {
		return err
	}
	return t.announce(ctx, flightgraph.AccessChange{KeyID: k.ID})
}

const trialKeyCols = `key_hash, secret_hash, key_id, session_hash, created_at, expires_at`

// CreateTrialKey implements flightgraph.AccessTx.
func (t *accessTx) CreateTrialKey(ctx context.Context, tk *flightgraph.TrialKey) error {
	var session time.Time
	if err := t.one(ctx, &session, "session", `SELECT expires_at FROM sessions WHERE token_hash = ? AND expires_at > ?`, tk.SessionHash, tk.CreatedAt.UTC()); err != nil {
		return err
	}
	if session.Before(tk.ExpiresAt) {
		tk.ExpiresAt = session.UTC()
	}
	_, err := t.db.exec(ctx, t.q, `INSERT INTO trial_keys (`+trialKeyCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
		tk.KeyHash, tk.SecretHash, tk.KeyID, tk.SessionHash, tk.CreatedAt.UTC(), tk.ExpiresAt.UTC())
	return err
}

// DeleteTrialKeys implements flightgraph.AccessTx. Of trials minted in the same microsecond,
// which is oldest is the order of their hashes.
func (t *accessTx) DeleteTrialKeys(ctx context.Context, keyID string, keep int, now time.Time) (int, error) {
	now = now.UTC()
	_, n, err := t.deleteTrials(ctx, `key_id = ? AND (expires_at <= ? OR key_hash NOT IN (
		SELECT key_hash FROM trial_keys WHERE key_id = ? AND expires_at > ? ORDER BY created_at DESC, key_hash DESC LIMIT ?))`,
		keyID, now, keyID, now, max(keep, 0))
	return n, err
}

// deleteTrials deletes the trial keys that match cond with the tokens issued to them, announces
// the change of each of their keys, and returns those keys' ids and how many trials it deleted.
func (t *accessTx) deleteTrials(ctx context.Context, cond string, args ...any) ([]string, int, error) {
	if _, err := t.db.exec(ctx, t.q, `DELETE FROM oauth_tokens WHERE family_id IN (
		SELECT '`+flightgraph.TrialFamilyPrefix+`' || key_hash FROM trial_keys WHERE `+cond+`)`, args...); err != nil {
		return nil, 0, err
	}
	var keys []string
	if err := t.db.selectIn(ctx, t.q, &keys, `DELETE FROM trial_keys WHERE `+cond+` RETURNING key_id`, args...); err != nil {
		return nil, 0, err
	}
	n := len(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for _, k := range keys {
		if err := t.announce(ctx, flightgraph.AccessChange{KeyID: k}); err != nil {
			return nil, 0, err
		}
	}
	return keys, n, nil
}

// CreatePlan implements flightgraph.AccessTx.
func (t *accessTx) CreatePlan(ctx context.Context, p *flightgraph.Plan) error {
	return t.upsertPlan(ctx, p, "")
}

// upsertPlan inserts p, with onConflict saying what to do when its id exists.
func (t *accessTx) upsertPlan(ctx context.Context, p *flightgraph.Plan, onConflict string) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO plans (`+planCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) `+onConflict,
		p.ID, p.Product, p.Name, p.Custom, p.PerSecond, p.PerDay, p.MaxCost, p.MaxDepth, p.MaxAliases, p.MaxRootFields, p.MaxTokens)
	return err
}

// CreateSubscription implements flightgraph.AccessTx.
func (t *accessTx) CreateSubscription(ctx context.Context, s *flightgraph.Subscription) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO subscriptions (id, key_id, product, plan_id, status, reason, created_at, decided_at, decided_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.ID, s.KeyID, s.Product, s.PlanID, s.Status, s.Reason, s.CreatedAt.UTC(), utcPtr(s.DecidedAt), s.DecidedBy)
	return err
}

// UpdateSubscription implements flightgraph.AccessTx.
func (t *accessTx) UpdateSubscription(ctx context.Context, s *flightgraph.Subscription) error {
	if _, err := t.db.exec(ctx, t.q, `UPDATE subscriptions SET plan_id = ?, status = ?, reason = ?, decided_at = ?, decided_by = ? WHERE id = ?`,
		s.PlanID, s.Status, s.Reason, utcPtr(s.DecidedAt), s.DecidedBy, s.ID); err != nil {
		return err
	}
	return t.announce(ctx, flightgraph.AccessChange{KeyID: s.KeyID})
}

// CreateLimitRequest implements flightgraph.AccessTx.
func (t *accessTx) CreateLimitRequest(ctx context.Context, r *flightgraph.LimitIncreaseRequest) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO limit_requests (`+limitCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.SubscriptionID, r.AccountID, r.Description, r.EstimatedPerSecond, r.EstimatedPerDay, r.Status, r.Reply, r.ReviewedBy,
		r.CreatedAt.UTC(), utcPtr(r.ReviewedAt))
	return err
}

// UpdateLimitRequest implements flightgraph.AccessTx.
func (t *accessTx) UpdateLimitRequest(ctx context.Context, r *flightgraph.LimitIncreaseRequest) error {
	_, err := t.db.exec(ctx, t.q, `UPDATE limit_requests SET status = ?, reply = ?, reviewed_by = ?, reviewed_at = ? WHERE id = ?`,
		r.Status, r.Reply, r.ReviewedBy, utcPtr(r.ReviewedAt), r.ID)
	return err
}

// CreateToken implements flightgraph.AccessTx.
func (t *accessTx) CreateToken(ctx context.Context, tk *flightgraph.Token) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO oauth_tokens (`+tokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		tk.Hash, tk.Kind, tk.KeyID, tk.CustomerID, tk.Grant, tk.FamilyID, tk.Scope, tk.CreatedAt.UTC(), tk.ExpiresAt.UTC(), utcPtr(tk.UsedAt), utcPtr(tk.RevokedAt))
	return err
}

// UseRefreshToken implements flightgraph.AccessTx. The conditional update is the arbiter among
// concurrent refreshes: exactly one of them changes the row.
func (t *accessTx) UseRefreshToken(ctx context.Context, hash string, now time.Time) (bool, error) {
	r, err := t.db.exec(ctx, t.q, `UPDATE oauth_tokens SET used_at = ? WHERE token_hash = ? AND kind = 'refresh' AND used_at IS NULL AND revoked_at IS NULL`, now.UTC(), hash)
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// RevokeTokenFamily implements flightgraph.AccessTx.
func (t *accessTx) RevokeTokenFamily(ctx context.Context, familyID string, now time.Time) error {
	if _, err := t.db.exec(ctx, t.q, `UPDATE oauth_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL`, now.UTC(), familyID); err != nil {
		return err
	}
	return t.announce(ctx, flightgraph.AccessChange{FamilyID: familyID})
}

// RevokeKeyTokens implements flightgraph.AccessTx.
func (t *accessTx) RevokeKeyTokens(ctx context.Context, keyID string, now time.Time) error {
	if _, err := t.db.exec(ctx, t.q, `UPDATE oauth_tokens SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL`, now.UTC(), keyID); err != nil {
		return err
	}
	return t.announce(ctx, flightgraph.AccessChange{KeyID: keyID})
}

// AddAudit implements flightgraph.AccessTx.
func (t *accessTx) AddAudit(ctx context.Context, e *flightgraph.AuditEntry) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO audit_log (at, actor, action, target_type, target_id, before, after) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		e.At.UTC(), e.Actor, e.Action, e.TargetType, e.TargetID, e.Before, e.After)
	return err
}

// EnqueueMail implements flightgraph.AccessTx.
func (t *accessTx) EnqueueMail(ctx context.Context, m *flightgraph.Mail) error {
	return t.db.enqueueMail(ctx, t.q, m, t.queued)
}

func utcPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}
