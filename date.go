package flightgraph

import (
	"strconv"
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
		return "PT" + strconv.Itoa(m/60) + "H"
	case m < 60:
		return "PT" + strconv.Itoa(m) + "M"
	}
	return "PT" + strconv.Itoa(m/60) + "H" + strconv.Itoa(m%60) + "M"
}
