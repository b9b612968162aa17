package flightgraph

import (
	"strings"
	"time"
)

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

// MaxAuditFilter bounds each filter of the audit log, in characters: actions, actors, target
// types and ids are all far shorter.
const MaxAuditFilter = 100

// AuditFilter selects audit entries; each field, when not empty, must match exactly. An Action
// that ends in '.' matches every action it begins, e.g. "subscription." the approvals,
// rejections, revocations, requests and plan changes of subscriptions.
type AuditFilter struct {
	Action     string
	Actor      string
	TargetType string
	TargetID   string
}

// ActionPrefix reports whether Action is a prefix rather than a whole action.
func (f AuditFilter) ActionPrefix() bool { return strings.HasSuffix(f.Action, ".") }

// Validate checks each filter's length and characters; it returns ECodeInvalidParameter naming
// the filter.
func (f AuditFilter) Validate() error {
	for _, v := range []struct{ name, value string }{
		{"action", f.Action}, {"actor", f.Actor}, {"targetType", f.TargetType}, {"targetId", f.TargetID},
	} {
		if err := optionalText(v.name, v.value, MaxAuditFilter); err != nil {
			return err
		}
	}
	return nil
}
