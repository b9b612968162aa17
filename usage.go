package flightgraph

// Usage is the number of admitted calls of one subscription on one UTC day.
type Usage struct {
	SubscriptionID string `db:"subscription_id"`
	Day            string `db:"day"`
	Calls          int64  `db:"calls"`
}

// DailyUsage is a subscription's calls on one UTC day (Day is YYYY-MM-DD), as the portal shows
// its history: a day without calls is there too, with Calls 0.
type DailyUsage struct {
	Day   string
	Calls int
}

// MaxUsageDays is the longest usage history the portal shows: the last 90 UTC days, today
// included.
const MaxUsageDays = 90

// ValidateUsageDays checks the length of a usage history; it returns ECodeInvalidParameter naming
// days.
func ValidateUsageDays(days int) error {
	if days < 1 || days > MaxUsageDays {
		return ParamErrorf(ECodeInvalidParameter, "days", "days must be between 1 and %d, got %d", MaxUsageDays, days)
	}
	return nil
}
