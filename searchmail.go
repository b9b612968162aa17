package flightgraph

import (
	"context"
	"time"
)

// MailedSearch is a search mailed with mail-my-search, recorded in the same transaction as its
// mail: no mail goes out unrecorded, and none is recorded that does not go out.
type MailedSearch struct {
	ID string `db:"id"`
	// RecipientHash is the address's MailboxHash (purpose "mailed-search-recipient"): it counts
	// a mailbox's mails without keeping the address beside the search (the outbox keeps it until
	// the mail is delivered or given up, then only a hash of its own: Mail.Trace).
	RecipientHash string    `db:"recipient_hash"`
	ClientID      string    `db:"client_id"` // the key that asked
	Search        string    `db:"search"`    // the search, as JSON
	CreatedAt     time.Time `db:"created_at"`
}

// MaxSearchMailsPerDay bounds the searches mailed to one mailbox in 24 hours, whoever asks,
// and MaxSearchMailsPerClientPerDay those one key has mailed to anyone: mail-my-search must not
// be a way to flood somebody's inbox, nor a free relay of the airline's mail to strangers.
const (
	MaxSearchMailsPerDay          = 5
	MaxSearchMailsPerClientPerDay = 50
)

// SearchStore records mailed searches.
type SearchStore interface {
	InSearchTx(ctx context.Context, fn func(tx SearchTx) error) error
}

// SearchTx is a transaction of the SearchStore; it queues mail with what it records.
type SearchTx interface {
	MailQueue
	// LockMailCounts holds a mailbox's and a client's counts until the transaction ends, so
	// that two requests at once cannot both take the last mail of the day.
	LockMailCounts(ctx context.Context, recipientHash, clientID string) error
	// RecentMailedSearches returns when the mailbox's latest searches after since were mailed,
	// newest first, at most limit of them.
	RecentMailedSearches(ctx context.Context, recipientHash string, since time.Time, limit int) ([]time.Time, error)
	// ClientMailedSearches is RecentMailedSearches of what a client (ClientID) had mailed.
	ClientMailedSearches(ctx context.Context, clientID string, since time.Time, limit int) ([]time.Time, error)
	RecordMailedSearch(ctx context.Context, m *MailedSearch) error
}
