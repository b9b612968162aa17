package flightgraph

import "time"

// AuditEntry records one change to accounts, applications, keys, subscriptions or plans.
type AuditEntry struct {
	ID         int64     `db:"id"`
	At         time.Time `db:"at"`
	Actor      string    `db:"actor"` // account id, or "system"
	Action     string    `db:"action"`
	TargetType string    `db:"target_type"`
	TargetID   string    `db:"target_id"`
	Before     string    `db:"before"` // JSON, secrets never included
	After      string    `db:"after"`
}
