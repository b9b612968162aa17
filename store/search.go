package store

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/flightgraph/flightgraph"
)

// SearchStore implements flightgraph.SearchStore.
type SearchStore struct{ db *DB }

var _ flightgraph.SearchStore = (*SearchStore)(nil)

// NewSearchStore returns the mailed searches of db.
func NewSearchStore(db *DB) *SearchStore { return &SearchStore{db: db} }

type searchTx struct {
	db *DB
	q  queryer
	// queued is set when the transaction queued mail.
	queued *bool
}

// InSearchTx implements flightgraph.SearchStore.
func (s *SearchStore) InSearchTx(ctx context.Context, fn func(tx flightgraph.SearchTx) error) error {
	return s.db.inMailTx(ctx, func(tx *sqlx.Tx, queued *bool) error { return fn(&searchTx{db: s.db, q: tx, queued: queued}) })
}

// LockMailCounts implements flightgraph.SearchTx: SQLite's transactions hold the whole database
// already (they begin IMMEDIATE); on PostgreSQL transaction-scoped advisory locks on the mailbox,
// then on the client. Every transaction takes them in that order, and none holds a client's
// while it waits for a mailbox's: no two can wait for each other.
func (t *searchTx) LockMailCounts(ctx context.Context, recipientHash, clientID string) error {
	if t.db.dialect != Postgres {
		return nil
	}
	_, err := t.db.exec(ctx, t.q, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0)), pg_advisory_xact_lock(hashtextextended(?, 0))`,
		"mailed_searches:"+recipientHash, "mailed_searches_client:"+clientID)
	return err
}

// RecentMailedSearches implements flightgraph.SearchTx.
func (t *searchTx) RecentMailedSearches(ctx context.Context, recipientHash string, since time.Time, limit int) ([]time.Time, error) {
	return t.mailedSince(ctx, "recipient_hash", recipientHash, since, limit)
}

// ClientMailedSearches implements flightgraph.SearchTx.
func (t *searchTx) ClientMailedSearches(ctx context.Context, clientID string, since time.Time, limit int) ([]time.Time, error) {
	return t.mailedSince(ctx, "client_id", clientID, since, limit)
}

// mailedSince returns when the searches whose column (an indexed one, with created_at) is value
// were mailed after since, newest first, at most limit.
func (t *searchTx) mailedSince(ctx context.Context, column, value string, since time.Time, limit int) ([]time.Time, error) {
	var out []time.Time
	err := t.db.selectIn(ctx, t.q, &out, `SELECT created_at FROM mailed_searches WHERE `+column+` = ? AND created_at > ? ORDER BY created_at DESC LIMIT ?`,
		value, since.UTC(), limit)
	return out, err
}

// RecordMailedSearch implements flightgraph.SearchTx.
func (t *searchTx) RecordMailedSearch(ctx context.Context, m *flightgraph.MailedSearch) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO mailed_searches (id, recipient_hash, client_id, search, created_at) VALUES (?, ?, ?, ?, ?)`,
		m.ID, m.RecipientHash, m.ClientID, m.Search, m.CreatedAt.UTC())
	return err
}

// EnqueueMail implements flightgraph.SearchTx.
func (t *searchTx) EnqueueMail(ctx context.Context, m *flightgraph.Mail) error {
	return t.db.enqueueMail(ctx, t.q, m, t.queued)
}
