package flightgraph

// Usage is the number of admitted calls of one subscription on one UTC day.
type Usage struct {
	SubscriptionID string `db:"subscription_id"`
	Day            string `db:"day"`
	Calls          int64  `db:"calls"`
}
