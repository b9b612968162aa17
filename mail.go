package flightgraph

import (
	"context"
	"time"
)

// Mail is one message of the outbox. It is written in the same transaction as the change it
// tells of, and delivered afterwards, with retries.
type Mail struct {
	ID            int64      `db:"id"`
	To            string     `db:"recipient"`
	Subject       string     `db:"subject"`
	Body          string     `db:"body"`
	CreatedAt     time.Time  `db:"created_at"`
	Attempts      int        `db:"attempts"`
	NextAttemptAt time.Time  `db:"next_attempt_at"`
	SentAt        *time.Time `db:"sent_at"`
	LastError     string     `db:"last_error"`
}

// MailQueue queues mail in a transaction: the message is written with the change it tells of,
// commits or rolls back with it, and the outbox delivers it once committed. Every store
// transaction that makes a change somebody must hear of implements it (AccessTx; so will the
// offers' for mail-my-search), so that no change is told without being made, nor made untold.
type MailQueue interface {
	EnqueueMail(ctx context.Context, m *Mail) error
}

// MailStore is the outbox's delivery side.
type MailStore interface {
	// DueMail leases up to n undelivered messages due at now, oldest first: their next attempt
	// moves to now+lease and their attempts count up, so that another replica does not send them
	// at the same time.
	DueMail(ctx context.Context, now time.Time, n int, lease time.Duration) ([]*Mail, error)
	MarkMailSent(ctx context.Context, id int64, at time.Time) error
	// MarkMailFailed records a failed attempt and when to try again.
	MarkMailFailed(ctx context.Context, id int64, reason string, next time.Time) error
}
