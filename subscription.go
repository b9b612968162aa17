package flightgraph

import "time"

// SubscriptionStatus is the state of a key's access to one product.
type SubscriptionStatus string

const (
	SubscriptionPending  SubscriptionStatus = "pending"
	SubscriptionApproved SubscriptionStatus = "approved"
	SubscriptionRejected SubscriptionStatus = "rejected"
	SubscriptionRevoked  SubscriptionStatus = "revoked"
)

// CanBecome reports whether the workflow allows the change from s to next: pending → approved or
// rejected; approved → revoked.
func (s SubscriptionStatus) CanBecome(next SubscriptionStatus) bool {
	switch s {
	case SubscriptionPending:
		return next == SubscriptionApproved || next == SubscriptionRejected
	case SubscriptionApproved:
		return next == SubscriptionRevoked
	}
	return false
}

// Subscription is a key's access to one product under one plan.
type Subscription struct {
	ID        string             `db:"id"`
	KeyID     string             `db:"key_id"`
	Product   string             `db:"product"`
	PlanID    string             `db:"plan_id"`
	Status    SubscriptionStatus `db:"status"`
	Reason    string             `db:"reason"` // why it was rejected or revoked
	CreatedAt time.Time          `db:"created_at"`
	DecidedAt *time.Time         `db:"decided_at"`
	DecidedBy string             `db:"decided_by"`
}
