package flightgraph

import (
	"context"
	"time"
)

// MailedSearch is a search mailed with mail-my-search, recorded in the same transaction as its
// mail: no mail goes out unrecorded, and none is recorded that does not go out.
type MailedSearch struct {
	ID string `db:"id"`
	// RecipientHash is the SHA-256 of the normalized address: it counts an address's mails
	// without keeping the address beside the search (the outbox keeps it until delivery).
	RecipientHash string    `db:"recipient_hash"`
	ClientID      string    `db:"client_id"` // the key that asked
	Search        string    `db:"search"`    // the search, as JSON
	CreatedAt     time.Time `db:"created_at"`
}

// MaxSearchMailsPerDay bounds the searches mailed to one address in 24 hours, whoever asks:
// mail-my-search must not be a way to flood somebody's inbox.
const MaxSearchMailsPerDay = 5

// SearchStore records mailed searches.
type SearchStore interface {
	InSearchTx(ctx context.Context, fn func(tx SearchTx) error) error
}

// SearchTx is a transaction of the SearchStore; it queues mail with what it records.
type SearchTx interface {
	MailQueue
	// LockRecipient holds an address's count until the transaction ends, so that two requests
	// at once cannot both take the last mail of the day.
	LockRecipient(ctx context.Context, recipientHash string) error
	// RecentMailedSearches returns when the address's latest searches after since were mailed,
	// newest first, at most limit of them.
	RecentMailedSearches(ctx context.Context, recipientHash string, since time.Time, limit int) ([]time.Time, error)
	RecordMailedSearch(ctx context.Context, m *MailedSearch) error
}
