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

// TrialKey is a short-lived stand-in for a key, minted by a portal session so that the portal's
// Try it page and playground can call the APIs as one of the account's keys without the key's
// secret, which is shown once and never stored. Its own public half and secret act as the key's
// (the api-key header, the OAuth client_id and client_secret of the client credentials grant)
// until ExpiresAt, and no longer than the key is active with this secret and the session lasts.
// Only hashes of its halves are stored.
type TrialKey struct {
	KeyHash     string    `db:"key_hash" json:"-"`
	SecretHash  string    `db:"secret_hash" json:"-"`
	KeyID       string    `db:"key_id"`
	SessionHash string    `db:"session_hash" json:"-"`
	CreatedAt   time.Time `db:"created_at"`
	ExpiresAt   time.Time `db:"expires_at"`
}

// NewTrialKey is a trial key as minted: with its plaintext halves, which exist only in this
// answer, and the key it acts as.
type NewTrialKey struct {
	*TrialKey
	APIKey string
	Secret string
	Key    *Key
}
