package access

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/flightgraph/flightgraph"
)

// MailWindow is the short window of the mail budgets; the long one is a day.
const MailWindow = 15 * time.Minute

// MailLimits are the mail budgets (MailBudget). A zero field takes DefaultMailLimits'.
type MailLimits struct {
	// Mailbox and MailboxDay bound the mails to one mailbox (CanonicalMailbox: every spelling of
	// it) in MailWindow and in a day, whoever asks.
	Mailbox, MailboxDay int
	// Client and ClientDay bound the mails one client address (an IPv6 client's /64) has sent, to
	// anyone, in MailWindow and in a day.
	Client, ClientDay int
	// Account and AccountDay bound the operators' notices of one account's requests.
	Account, AccountDay int
	// ReplicaPerMinute bounds the mails one replica queues in a minute, for everyone together.
	ReplicaPerMinute int
}

// DefaultMailLimits are the budgets serve runs with: a mailbox gets 5 mails in 15 minutes and 20
// a day (a sign-up and its retries, a few searches); a client address may have 20 and 100 mailed
// (several people behind one NAT); an account's requests notify the operators 5 times in 15
// minutes and 20 a day (an account may hold 100 keys; the others wait on the operators' desk); a
// replica queues 120 mails a minute, two a second, far above what people sign up at and what one
// SMTP relay takes without throttling, so the outbox cannot outgrow its delivery by more than that.
var DefaultMailLimits = MailLimits{Mailbox: 5, MailboxDay: 20, Client: 20, ClientDay: 100, Account: 5, AccountDay: 20, ReplicaPerMinute: 120}

func (l MailLimits) withDefaults() MailLimits {
	d := DefaultMailLimits
	return MailLimits{Mailbox: cmp.Or(l.Mailbox, d.Mailbox), MailboxDay: cmp.Or(l.MailboxDay, d.MailboxDay),
		Client: cmp.Or(l.Client, d.Client), ClientDay: cmp.Or(l.ClientDay, d.ClientDay),
		Account: cmp.Or(l.Account, d.Account), AccountDay: cmp.Or(l.AccountDay, d.AccountDay),
		ReplicaPerMinute: cmp.Or(l.ReplicaPerMinute, d.ReplicaPerMinute)}
}

// MailBudget is the one mail budget (flightgraph.MailBudget) that every change that mails spends
// from before it queues its mail: sign-up and its notice, mail-my-search, the operators' notices
// of requests and the notices of their decisions.
//
// The budgets of mailboxes, client addresses and accounts are counted in counts, a Lockout's
// fixed windows (Take): in Redis, shared by every replica, when serve has one (behind a
// LockoutFallback, so each replica counts on its own while Redis fails), in process otherwise.
// Their keys are SHA-256 hashes (SignInKey) of a namespace and the mailbox, address or account:
// no address is ever in Redis or a log. The replica's minute is counted in process, since it
// bounds what this replica queues; it is taken first and given back when the shared counts refuse,
// so a mail refused by its mailbox costs the replica nothing.
//
// Taking is all or none, so a refused mail is counted nowhere: a client that spent its own budget
// cannot spend a mailbox's on top, nor a replica's. What is refused and why is logged at info,
// without the address.
type MailBudget struct {
	counts  Lockout
	replica *MemoryLockout
	limits  MailLimits
	log     *slog.Logger
}

var _ flightgraph.MailBudget = (*MailBudget)(nil)

// NewMailBudget returns the budget of limits (zero fields take the defaults), counting mailboxes,
// client addresses and accounts in counts (an in-process MemoryLockout when nil), this replica's
// minute on the clock now (time.Now when nil); log may be nil.
func NewMailBudget(counts Lockout, limits MailLimits, now func() time.Time, log *slog.Logger) *MailBudget {
	if counts == nil {
		counts = NewMemoryLockout(now)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &MailBudget{counts: counts, replica: NewMemoryLockout(now), limits: limits.withDefaults(), log: log}
}

// Limits returns the budgets in force.
func (b *MailBudget) Limits() MailLimits { return b.limits }

// Counts returns the Lockout the shared budgets are counted in.
func (b *MailBudget) Counts() Lockout { return b.counts }

// Namespaces of the mail budget's counters (SignInKey): each window of each kind apart.
const (
	mailMailbox    = "mail:mailbox"
	mailMailboxDay = "mail:mailbox:day"
	mailClient     = "mail:client"
	mailClientDay  = "mail:client:day"
	mailAccount    = "mail:account"
	mailAccountDay = "mail:account:day"
)

// Spend implements flightgraph.MailBudget.
func (b *MailBudget) Spend(ctx context.Context, c flightgraph.MailCharge) error {
	var mailboxes []string
	for _, to := range c.To {
		mailboxes = append(mailboxes, flightgraph.CanonicalMailbox(to))
	}
	slices.Sort(mailboxes)
	mailboxes = slices.Compact(mailboxes)
	if len(mailboxes) == 0 {
		return nil
	}
	l, decision := b.limits, c.Kind == flightgraph.MailDecision
	bound := func(n int) int {
		if decision {
			return 0 // counted, never refused
		}
		return n
	}
	// The replica's minute comes first: it refuses everyone alike, so its 429 tells nothing about
	// an address, and a refusal here counts nothing anywhere.
	replica := []Quota{{Key: "mail:replica", Max: bound(l.ReplicaPerMinute), Window: time.Minute, N: len(c.To)}}
	if d, _ := b.replica.Take(ctx, replica); !d.Allowed {
		b.log.InfoContext(ctx, "mail not queued: the replica queued its mails for this minute", "requestId", flightgraph.RequestIDFromContext(ctx))
		return &flightgraph.Error{Code: flightgraph.ECodeMailBusy, RetryAfter: d.RetryAfter,
			Message: "The service is sending as much mail as it may for now; try again later."}
	}
	var (
		quotas []Quota
		what   []string // what each quota bounds, for the log and the message
	)
	add := func(name, namespace, id string, max int, window time.Duration) {
		quotas = append(quotas, Quota{Key: SignInKey(namespace, id), Max: max, Window: window})
		what = append(what, name)
	}
	client := flightgraph.ClientAddressFromContext(ctx)
	if client != "" && !decision {
		// A decision is the operator's doing, not their client's; outside a request (a command,
		// a test) there is no client to count.
		add("client", mailClient, client, l.Client, MailWindow)
		add("client", mailClientDay, client, l.ClientDay, 24*time.Hour)
	}
	if c.Kind == flightgraph.MailToOperators {
		add("account", mailAccount, c.Account, l.Account, MailWindow)
		add("account", mailAccountDay, c.Account, l.AccountDay, 24*time.Hour)
	}
	mailbox, mailboxDay := bound(l.Mailbox), bound(l.MailboxDay)
	if c.Kind == flightgraph.MailToOperators {
		// The operators' mailboxes count what they are sent but never refuse a notice:
		// otherwise whoever floods an operator's address with sign-ups would silence the desk.
		mailbox, mailboxDay = 0, 0
	}
	for _, m := range mailboxes {
		add("mailbox", mailMailbox, m, mailbox, MailWindow)
		add("mailbox", mailMailboxDay, m, mailboxDay, 24*time.Hour)
	}
	d, err := b.counts.Take(ctx, quotas)
	if err != nil || !d.Allowed {
		b.replica.untake(replica)
	}
	if err != nil {
		if decision {
			// The change is made and must be told: its mail goes uncounted.
			b.log.WarnContext(ctx, "access: the mail budget could not count an operator's decision; it is mailed uncounted", "err", err)
			return nil
		}
		return err
	}
	if !d.Allowed {
		b.log.InfoContext(ctx, "mail not queued: over its "+what[d.Full]+"'s budget", "requestId", flightgraph.RequestIDFromContext(ctx))
		e := &flightgraph.Error{Code: flightgraph.ECodeTooManyMails, RetryAfter: d.RetryAfter}
		switch what[d.Full] {
		case "mailbox":
			e.Parameter, e.Message = "email", "this address was sent as much mail as it gets for now"
		case "client":
			e.Message = "as much mail was sent at this client's request as it may have for now"
		default:
			e.Message = "this account's requests were told to the operators as often as they may be for now"
		}
		return e
	}
	return nil
}
