package flightgraph

import "time"

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
	// RequestToken, when given, makes the request once however often it is sent (RequestToken).
	RequestToken string
}

// Validate checks the request; it returns ECodeMissingParameter or ECodeInvalidParameter.
func (in *LimitIncreaseInput) Validate() error {
	if in.SubscriptionID == "" {
		return ParamErrorf(ECodeMissingParameter, "subscriptionId", "subscriptionId is required")
	}
	if err := requiredText("description", in.Description, 4000); err != nil {
		return err
	}
	if err := ValidateRequestToken(in.RequestToken); err != nil {
		return err
	}
	return Limits{PerSecond: in.EstimatedPerSecond, PerDay: in.EstimatedPerDay}.Validate()
}
