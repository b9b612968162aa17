package flightgraph

import "time"

// TokenKind tells OAuth access tokens from refresh tokens.
type TokenKind string

const (
	TokenAccess  TokenKind = "access"
	TokenRefresh TokenKind = "refresh"
)

// Token is an issued OAuth 2.0 token, stored by the hash of its value. Tokens of one refresh
// chain share a family: reuse of a rotated refresh token revokes the family. The tokens issued
// to a trial key are the family TrialFamily of its hash, revoked when the trial key is deleted.
type Token struct {
	Hash       string     `db:"token_hash"`
	Kind       TokenKind  `db:"kind"`
	KeyID      string     `db:"key_id"`
	CustomerID string     `db:"customer_id"`
	Grant      Grant      `db:"grant_type"`
	FamilyID   string     `db:"family_id"`
	Scope      string     `db:"scope"`
	CreatedAt  time.Time  `db:"created_at"`
	ExpiresAt  time.Time  `db:"expires_at"`
	UsedAt     *time.Time `db:"used_at"`
	RevokedAt  *time.Time `db:"revoked_at"`
}

// TrialFamilyPrefix starts the family id of the tokens issued to a trial key.
const TrialFamilyPrefix = "trial:"

// TrialFamily is the family id of the tokens issued to the trial key with this hash.
func TrialFamily(trialHash string) string { return TrialFamilyPrefix + trialHash }
