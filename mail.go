package flightgraph

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/mail"
	"strings"
	"time"
)

// Mail is one message of the outbox. It is written in the same transaction as the change it
// tells of, and delivered afterwards, with retries. Once it is delivered or given up, the outbox
// keeps only its Trace: no body, and the recipient as a keyed hash.
type Mail struct {
	ID int64  `db:"id"`
	To string `db:"recipient"`
	// Subject outlives delivery up to its first colon (MailTopic): whatever in it is personal (a
	// route, a date, a name) goes after a colon, or in the body.
	Subject       string     `db:"subject"`
	Body          string     `db:"body"`
	CreatedAt     time.Time  `db:"created_at"`
	Attempts      int        `db:"attempts"`
	NextAttemptAt time.Time  `db:"next_attempt_at"`
	SentAt        *time.Time `db:"sent_at"`
	LastError     string     `db:"last_error"`
}

// MailTrace is what the outbox keeps of a message once it is delivered or given up: enough to
// count and tell the messages apart, nothing to read them or to mail the recipient again.
type MailTrace struct {
	// Recipient is "hmac-sha256:" and the MailboxHash of the recipient's address: it has no "@".
	Recipient string
	// Subject is the subject's topic (MailTopic).
	Subject string
}

// Trace returns what the outbox keeps of m once it is done with it, the recipient hashed under
// key (the service's offer key: see MailboxHash).
func (m *Mail) Trace(key []byte) MailTrace {
	addr := m.To
	if a, err := mail.ParseAddress(m.To); err == nil {
		addr = a.Address
	}
	return MailTrace{Recipient: "hmac-sha256:" + MailboxHash(key, "mail-outbox-recipient", addr), Subject: MailTopic(m.Subject)}
}

// MailTopic is what a subject says before its first colon, or the whole subject without one:
// "Your search: FRA to JFK on 2026-12-01" is "Your search".
func MailTopic(subject string) string {
	topic, _, _ := strings.Cut(subject, ":")
	return strings.TrimSpace(topic)
}

// MailboxHash is a keyed hash (HMAC-SHA256, in hex) of an address's mailbox (CanonicalMailbox)
// for one purpose: it counts or recognises a mailbox without keeping its address, and, keyed,
// cannot be reversed by hashing guessed addresses. The key is the offer key, which every
// replica has; the purpose keeps one use's hashes from matching another's.
func MailboxHash(key []byte, purpose, email string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(purpose + "|" + CanonicalMailbox(email)))
	return hex.EncodeToString(mac.Sum(nil))
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
	// MarkMailSent records that the server accepted the message and, in the same statement,
	// erases what only its delivery needed: the body goes, and the recipient and subject become
	// trace's.
	MarkMailSent(ctx context.Context, id int64, at time.Time, trace MailTrace) error
	// MarkMailFailed records a failed attempt and when to try again; the message keeps what it
	// needs to be sent.
	MarkMailFailed(ctx context.Context, id int64, reason string, next time.Time) error
	// GiveUpMail records the last failed attempt of a message out of attempts: it is never tried
	// again, and, in the same statement, erased as MarkMailSent erases a delivered one.
	GiveUpMail(ctx context.Context, id int64, reason string, trace MailTrace) error
	// DeleteDoneMail deletes the messages delivered before before, and the given-up ones created
	// before it, and returns how many it deleted. Messages still to be sent stay.
	DeleteDoneMail(ctx context.Context, before time.Time) (int64, error)
	// OnQueued has f called after each commit of a transaction that queued mail (MailQueue), so
	// that the outbox sends it at once instead of on its next tick. f must not block.
	OnQueued(f func())
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
