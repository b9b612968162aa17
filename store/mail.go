package store

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/flightgraph/flightgraph"
)

// MailStore implements flightgraph.MailStore.
type MailStore struct{ db *DB }

var _ flightgraph.MailStore = (*MailStore)(nil)

// NewMailStore returns the outbox of db.
func NewMailStore(db *DB) *MailStore { return &MailStore{db: db} }

const mailCols = `id, recipient, subject, body, created_at, attempts, next_attempt_at, sent_at, last_error`

// DueMail implements flightgraph.MailStore. The lease is one UPDATE whose outer condition repeats
// the due test, so that on PostgreSQL a second replica racing for the same rows re-checks them
// after the first one's update and skips them.
func (s *MailStore) DueMail(ctx context.Context, now time.Time, n int, lease time.Duration) ([]*flightgraph.Mail, error) {
	var out []*flightgraph.Mail
	err := s.db.inTx(ctx, func(tx *sqlx.Tx) error {
		now := now.UTC()
		return s.db.selectIn(ctx, tx, &out, `UPDATE mail_outbox SET next_attempt_at = ?, attempts = attempts + 1
			WHERE sent_at IS NULL AND next_attempt_at <= ? AND id IN (
				SELECT id FROM mail_outbox WHERE sent_at IS NULL AND next_attempt_at <= ? ORDER BY id LIMIT ?)
			RETURNING `+mailCols, now.Add(lease), now, now, n)
	})
	return out, err
}

// MarkMailSent implements flightgraph.MailStore.
func (s *MailStore) MarkMailSent(ctx context.Context, id int64, at time.Time) error {
	_, err := s.db.exec(ctx, s.db.db, `UPDATE mail_outbox SET sent_at = ?, last_error = '' WHERE id = ?`, at.UTC(), id)
	return err
}

// MarkMailFailed implements flightgraph.MailStore.
func (s *MailStore) MarkMailFailed(ctx context.Context, id int64, reason string, next time.Time) error {
	if len(reason) > 500 {
		reason = reason[:500]
	}
	_, err := s.db.exec(ctx, s.db.db, `UPDATE mail_outbox SET last_error = ?, next_attempt_at = ? WHERE id = ?`, reason, next.UTC(), id)
	return err
}

// enqueueMail adds a message to the outbox inside tx.
func (s *DB) enqueueMail(ctx context.Context, q queryer, m *flightgraph.Mail) error {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = s.Now()
	}
	if m.NextAttemptAt.IsZero() {
		m.NextAttemptAt = m.CreatedAt
	}
	_, err := s.exec(ctx, q, `INSERT INTO mail_outbox (recipient, subject, body, created_at, attempts, next_attempt_at, last_error)
		VALUES (?, ?, ?, ?, 0, ?, '')`, m.To, m.Subject, m.Body, m.CreatedAt.UTC(), m.NextAttemptAt.UTC())
	return err
}
