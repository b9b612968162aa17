package flightgraph

import "time"

// KeyStatus is a key's state.
type KeyStatus string

const (
	KeyActive  KeyStatus = "active"
	KeyRevoked KeyStatus = "revoked"
)

// Key is an application's credential pair. The public half is the api-key and the OAuth
// client_id; the secret is the client_secret. Both are shown once and stored only as hashes;
// Hint is a recognisable, harmless part of the public half for lists.
type Key struct {
	ID            string    `db:"id"`
	ApplicationID string    `db:"application_id"`
	Hint          string    `db:"hint"`
	KeyHash       string    `db:"key_hash" json:"-"`
	SecretHash    string    `db:"secret_hash" json:"-"`
	Status        KeyStatus `db:"status"`
	CreatedAt     time.Time `db:"created_at"`
}

// NewKey is a key as created: with its plaintext halves, which exist only in this answer.
type NewKey struct {
	*Key
	APIKey string
	Secret string
}
