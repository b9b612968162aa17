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

// LimitRequestStatus is the state of a limit increase request.
type LimitRequestStatus string

const (
	LimitRequestPending  LimitRequestStatus = "pending"
	LimitRequestGranted  LimitRequestStatus = "granted"
	LimitRequestDeclined LimitRequestStatus = "declined"
)

// LimitIncreaseRequest asks an operator for higher limits on one subscription.
type LimitIncreaseRequest struct {
	ID                 string             `db:"id"`
	SubscriptionID     string             `db:"subscription_id"`
	AccountID          string             `db:"account_id"`
	Description        string             `db:"description"`
	EstimatedPerSecond int                `db:"estimated_per_second"`
	EstimatedPerDay    int                `db:"estimated_per_day"`
	Status             LimitRequestStatus `db:"status"`
	Reply              string             `db:"reply"`
	ReviewedBy         string             `db:"reviewed_by"`
	CreatedAt          time.Time          `db:"created_at"`
	ReviewedAt         *time.Time         `db:"reviewed_at"`
}

// LimitIncreaseInput is a developer's request for higher limits.
type LimitIncreaseInput struct {
	SubscriptionID     string
	Description        string
	EstimatedPerSecond int
	EstimatedPerDay    int
}

// Validate checks the request; it returns ECodeMissingParameter or ECodeInvalidParameter.
func (in *LimitIncreaseInput) Validate() error {
	if in.SubscriptionID == "" {
		return ParamErrorf(ECodeMissingParameter, "subscriptionId", "subscriptionId is required")
	}
	if err := requiredText("description", in.Description, 4000); err != nil {
		return err
	}
	return Limits{PerSecond: in.EstimatedPerSecond, PerDay: in.EstimatedPerDay}.Validate()
}

// Usage is the number of admitted calls of one subscription on one UTC day.
type Usage struct {
	SubscriptionID string `db:"subscription_id"`
	Day            string `db:"day"`
	Calls          int64  `db:"calls"`
}

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
