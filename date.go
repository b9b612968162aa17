package flightgraph

import "time"

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
