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

// MailKind says why mail is sent, which decides the budgets that may refuse it (MailBudget).
type MailKind int

const (
	// MailAsked is mail a caller asks for, to an address they name: a sign-up's link and its
	// "someone tried to sign up" notice, mail-my-search. Every budget may refuse it: the
	// recipient's mailbox, the client's address, the replica's minute.
	MailAsked MailKind = iota
	// MailToOperators tells the operators of a developer's request (a key, a limit increase). It
	// is bounded by the requesting account and the client's address, never by the operators'
	// mailboxes (which it counts), so that nobody can silence the operators by flooding their
	// addresses; a refused notice leaves the request on the operators' desk.
	MailToOperators
	// MailDecision tells an account of an operator's decision about it (approval, rejection,
	// revocation, a limit review, a role change). It counts toward the mailbox's and the
	// replica's budgets but is never refused: each is a real change, written in the
	// transaction of the change, and an operator's hand is what bounds them.
	MailDecision
)

// MailCharge is what one change mails, as the MailBudget counts it.
type MailCharge struct {
	Kind MailKind
	// To are the recipients' addresses; each one's mailbox (CanonicalMailbox) is charged a mail.
	To []string
	// Account is, for MailToOperators, the requesting account, which bounds its notices.
	Account string
}

// MailBudget bounds the mail the service sends, in one place that every change that mails goes
// through before it queues its mail (MailQueue): per recipient's mailbox (CanonicalMailbox, so that
// every spelling of one mailbox shares its budget), per client address (the request's,
// ClientAddressFromContext) and per replica and minute, so that the outbox cannot grow faster
// than a replica may send.
type MailBudget interface {
	// Spend takes c's mails from the budgets. It returns nil when they may be queued; an *Error
	// ECodeMailBusy, with the wait, when the replica's budget for the minute is spent, the same
	// for everyone; an *Error ECodeTooManyMails, with the wait, when a mailbox's, the client's
	// or the account's budget is (the caller decides whether to say so: a sign-up must not);
	// ECodeCache when the shared counts failed. A MailDecision is never refused.
	Spend(ctx context.Context, c MailCharge) error
}
