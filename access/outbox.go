package access

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"regexp"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// DefaultBackoff is the outbox's wait before attempt+1: 10 s doubling per attempt up to 1 h,
// less up to a fifth at random so that replicas and messages that failed together spread out.
func DefaultBackoff(attempt int) time.Duration {
	d := time.Hour
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 10 { // 10 s · 2^9 > 1 h already
		d = min(10*time.Second<<(attempt-1), time.Hour)
	}
	return d - mrand.N(d/5)
}

// Outbox delivers the outbox with retries: nothing is lost on restart, since a message leaves the
// outbox only when the server accepted it.
//
// Each message is leased on its own just before it is sent, so a lease never runs out while
// messages ahead of it in a batch are still being sent; a slow server thus never makes two
// replicas send the same message, and no attempts are spent on messages not yet tried.
//
// Retry policy: a failed message is retried after Backoff(attempt). When the server fails as a
// whole (unreachable, TLS, authentication, a refused sender), the pass stops: the other due
// messages would only fail the same way and stay due, without losing an attempt. A 4xx reply
// to the message is retried up to MaxAttempts times. A 5xx reply to the message (or a recipient
// that does not parse) is retried too, since servers do answer 5xx for passing trouble (a full
// mailbox, a mailbox not yet created), but only up to PermanentAttempts times: retrying an
// unknown address a dozen times only harms the sender's reputation. A message out of attempts
// is given up: logged at error level and never tried again.
//
// Once a message is delivered or given up, the outbox keeps only its Trace (no body; the
// recipient as a keyed hash; the subject's topic), written in the statement that marks it; the
// Sweeper deletes that after the retention period. Until then a message keeps all it needs to be
// sent, retries included. Neither the rows' errors nor the log's warnings and errors hold an
// address: the id and the recipient's domain tell an operator which message failed.
//
// Set the fields after NewOutbox and before the first DeliverDue or Run.
type Outbox struct {
	// Now is the clock; tests move it.
	Now func() time.Time
	// Batch is the most messages one DeliverDue sends or fails (default 20).
	Batch int
	// Lease is how long a message leased for sending is hidden from other replicas (default
	// 1 min).
	Lease time.Duration
	// SendTimeout bounds the sending of one message (default 30 s). Half the Lease bounds it
	// too, so that a send ends while its lease holds, with room for replicas' clocks to differ.
	SendTimeout time.Duration
	// Backoff returns the wait after the attempt-th failed attempt (default DefaultBackoff).
	Backoff func(attempt int) time.Duration
	// MaxAttempts is how often a message is tried before it is given up (default 12).
	MaxAttempts int
	// PermanentAttempts is how often a message is tried that the server refused with a 5xx
	// reply (default 3).
	PermanentAttempts int
	// Key hashes the recipients of the messages delivered or given up (Mail.Trace): the
	// service's offer key, which every replica shares, so that one mailbox has one hash (default:
	// a random key of this process).
	Key []byte

	store  flightgraph.MailStore
	mailer Mailer
	log    *slog.Logger
	wake   chan struct{}
}

// NewOutbox returns an Outbox that leases messages from store and sends them with mailer.
func NewOutbox(store flightgraph.MailStore, mailer Mailer, log *slog.Logger) *Outbox {
	if log == nil {
		log = slog.Default()
	}
	key := make([]byte, 32)
	rand.Read(key)
	return &Outbox{
		Key:               key,
		Now:               time.Now,
		Batch:             20,
		Lease:             time.Minute,
		SendTimeout:       30 * time.Second,
		Backoff:           DefaultBackoff,
		MaxAttempts:       12,
		PermanentAttempts: 3,
		store:             store,
		mailer:            mailer,
		log:               log,
		wake:              make(chan struct{}, 1),
	}
}

// DeliverDue runs one pass over the due messages: it sends up to Batch of them and returns how
// many the server accepted and how many failed. A failed message stays in the outbox with its
// error and the time of its next attempt. The error is the store's, or ctx's when it ended.
func (o *Outbox) DeliverDue(ctx context.Context) (sent, failed int, err error) {
	for sent+failed < o.Batch {
		if err := ctx.Err(); err != nil {
			return sent, failed, err
		}
		due, err := o.store.DueMail(ctx, o.Now(), 1, o.Lease)
		if err != nil {
			return sent, failed, fmt.Errorf("lease mail: %w", err)
		}
		if len(due) == 0 {
			return sent, failed, nil
		}
		m := due[0]
		sendCtx, cancel := context.WithTimeout(ctx, min(o.SendTimeout, o.Lease/2))
		sendErr := o.mailer.Send(sendCtx, m)
		cancel()
		// The outcome must be recorded even when ctx ended meanwhile: an accepted message not
		// marked sent would be sent again.
		markCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		switch {
		case sendErr == nil:
			err = o.store.MarkMailSent(markCtx, m.ID, o.Now(), m.Trace(o.Key))
			cancel()
			if err != nil {
				o.log.ErrorContext(ctx, "mail sent but not marked sent: it will be sent again", "id", m.ID, "err", err)
				return sent, failed, fmt.Errorf("mark mail %d sent: %w", m.ID, err)
			}
			sent++
		case ctx.Err() != nil:
			// Shutting down is no fault of the message: make it due again at once.
			err = o.store.MarkMailFailed(markCtx, m.ID, "interrupted: "+withoutAddresses(reason(sendErr)), o.Now())
			cancel()
			if err != nil {
				return sent, failed, fmt.Errorf("mark mail %d failed: %w", m.ID, err)
			}
			return sent, failed, ctx.Err()
		default:
			failed++
			err = o.fail(markCtx, m, sendErr)
			cancel()
			if err != nil {
				return sent, failed, fmt.Errorf("mark mail %d failed: %w", m.ID, err)
			}
			var se *SendError
			if !errors.As(sendErr, &se) || !se.Rejected {
				return sent, failed, nil
			}
		}
	}
	return sent, failed, nil
}

// fail records a failed attempt of m and schedules the next one, or gives m up.
func (o *Outbox) fail(ctx context.Context, m *flightgraph.Mail, sendErr error) error {
	limit := o.MaxAttempts
	var se *SendError
	if errors.As(sendErr, &se) && se.Permanent {
		limit = min(limit, o.PermanentAttempts)
	}
	why := withoutAddresses(reason(sendErr))
	if m.Attempts >= limit {
		o.log.ErrorContext(ctx, "mail undeliverable: given up, no more attempts",
			"id", m.ID, "domain", domainOf(m.To), "attempts", m.Attempts, "err", why)
		return o.store.GiveUpMail(ctx, m.ID, why, m.Trace(o.Key))
	}
	next := o.Now().Add(o.Backoff(m.Attempts))
	o.log.WarnContext(ctx, "mail not sent: will retry", "id", m.ID, "domain", domainOf(m.To),
		"attempts", m.Attempts, "next", next, "err", why)
	return o.store.MarkMailFailed(ctx, m.ID, why, next)
}

// address is an e-mail address in a text, e.g. a server's reply "550 5.1.1 <ada@example.com>:
// no such user": its local part, and its domain in group 1.
var address = regexp.MustCompile(`[^\s<>()\[\]"',;:@]+@([^\s<>()\[\]"',;:@]+)`)

// withoutAddresses is text with each address's local part replaced by "*": the reason of a
// failed attempt goes to the log and, for a message given up, stays in its row.
func withoutAddresses(text string) string {
	return address.ReplaceAllString(text, "*@$1")
}

// domainOf is the domain of a recipient, what the log may say of it.
func domainOf(to string) string {
	if m := address.FindStringSubmatch(to); m != nil {
		return strings.ToLower(m[1])
	}
	return "?"
}

// reason is the text of a failed send for the outbox row: the cause without the error code's
// generic message.
func reason(err error) string {
	var fe *flightgraph.Error
	if errors.As(err, &fe) && fe.Err != nil {
		return fe.Err.Error()
	}
	return err.Error()
}

// Notify wakes Run for a pass now, e.g. after a change enqueued mail. It never blocks.
func (o *Outbox) Notify() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Run delivers due mail every interval (30 s when every is not positive) and when notified,
// until ctx is done. Store errors are logged, and the next pass tries again.
func (o *Outbox) Run(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = 30 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		// A full pass suggests more is due: go on rather than wait.
		for {
			sent, failed, err := o.DeliverDue(ctx)
			if err != nil {
				if ctx.Err() == nil {
					o.log.ErrorContext(ctx, "deliver mail", "err", err)
				}
				break
			}
			if sent+failed < o.Batch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-o.wake:
		}
	}
}
