package flightgraph

import (
	"fmt"
	"time"
)

// DateLayout is the layout of schedule dates: "2026-11-22".
const DateLayout = "2006-01-02"

// ParseDate parses a YYYY-MM-DD date; it returns ECodeBadFormat naming param.
func ParseDate(param, s string) (time.Time, error) {
	d, err := time.Parse(DateLayout, s)
	if err != nil {
		return time.Time{}, ParamErrorf(ECodeBadFormat, param, "%s must be a date like 2026-11-22, got %q", param, s)
	}
	return d, nil
}

// ISODuration formats a duration in whole minutes as ISO 8601: PT2H40M, PT45M, PT3H.
func ISODuration(d time.Duration) string {
	m := int(d.Minutes())
	switch {
	case m%60 == 0:
		return fmt.Sprintf("PT%dH", m/60)
	case m < 60:
		return fmt.Sprintf("PT%dM", m)
	}
	return fmt.Sprintf("PT%dH%dM", m/60, m%60)
}
