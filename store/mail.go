package store

import (
	"context"
	"time"
	"unicode/utf8"

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

// mailNever is the next attempt of a message given up: far enough not to come, plain enough for
// an operator to recognise in the table.
var mailNever = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// MarkMailSent implements flightgraph.MailStore. The mark and the erasure are one statement, so
// that no failure leaves a message marked sent with its body, or erased but due.
func (s *MailStore) MarkMailSent(ctx context.Context, id int64, at time.Time, trace flightgraph.MailTrace) error {
	_, err := s.db.exec(ctx, s.db.db, `UPDATE mail_outbox SET sent_at = ?, last_error = '', body = '', recipient = ?, subject = ? WHERE id = ?`,
		at.UTC(), trace.Recipient, trace.Subject, id)
	return err
}

// GiveUpMail implements flightgraph.MailStore, in one statement as MarkMailSent.
func (s *MailStore) GiveUpMail(ctx context.Context, id int64, reason string, trace flightgraph.MailTrace) error {
	_, err := s.db.exec(ctx, s.db.db, `UPDATE mail_outbox SET last_error = ?, next_attempt_at = ?, body = '', recipient = ?, subject = ? WHERE id = ?`,
		clipReason(reason), mailNever, trace.Recipient, trace.Subject, id)
	return err
}

// DeleteDoneMail implements flightgraph.MailStore. A given-up message has no time of its own for
// when it was given up: its creation counts, and the outbox gives up within hours of it. Both
// conditions are ranges of the index on (sent_at, next_attempt_at).
func (s *MailStore) DeleteDoneMail(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.exec(ctx, s.db.db, `DELETE FROM mail_outbox WHERE (sent_at IS NOT NULL AND sent_at < ?)
		OR (sent_at IS NULL AND next_attempt_at >= ? AND created_at < ?)`, before.UTC(), mailNever, before.UTC())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// MarkMailFailed implements flightgraph.MailStore.
func (s *MailStore) MarkMailFailed(ctx context.Context, id int64, reason string, next time.Time) error {
	_, err := s.db.exec(ctx, s.db.db, `UPDATE mail_outbox SET last_error = ?, next_attempt_at = ? WHERE id = ?`, clipReason(reason), next.UTC(), id)
	return err
}

// clipReason keeps the first 500 bytes of a failed attempt's reason, cut where a character
// begins.
func clipReason(reason string) string {
	if len(reason) <= 500 {
		return reason
	}
	n := 500
	for n > 0 && !utf8.RuneStart(reason[n]) {
		n--
	}
	return reason[:n]
}

// OnQueued implements flightgraph.MailStore: f is called after each commit of a transaction of
// this store that queued mail, on the committing goroutine, so it must not block. Mail queued by
// another replica is not told here: that replica's own outbox is, and sends it.
func (s *MailStore) OnQueued(f func()) {
	s.db.mailMu.Lock()
	defer s.db.mailMu.Unlock()
	s.db.mailQueued = append(s.db.mailQueued, f)
}

// enqueueMail adds a message to the outbox inside tx and marks *queued.
func (s *DB) enqueueMail(ctx context.Context, q queryer, m *flightgraph.Mail, queued *bool) error {
	if m.CreatedAt.IsZero() {
		m.CreatedAt = s.Now()
	}
	if m.NextAttemptAt.IsZero() {
		m.NextAttemptAt = m.CreatedAt
	}
	_, err := s.exec(ctx, q, `INSERT INTO mail_outbox (recipient, subject, body, created_at, attempts, next_attempt_at, last_error)
		VALUES (?, ?, ?, ?, 0, ?, '')`, m.To, m.Subject, m.Body, m.CreatedAt.UTC(), m.NextAttemptAt.UTC())
	if err == nil {
		*queued = true
	}
	return err
}
