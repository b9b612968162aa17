package flightgraph

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FlightStatus is the public status of a flight or leg at a moment in time.
type FlightStatus string

// A flight is SCHEDULED until its operation is followed (OperationalWindow before departure),
// then ON_TIME or DELAYED until it boards. Both edges name the status the same way, so that a
// flight has one status at an instant whichever edge is asked.
const (
	StatusScheduled FlightStatus = "SCHEDULED"
	StatusOnTime    FlightStatus = "ON_TIME"
	StatusDelayed   FlightStatus = "DELAYED"
	StatusBoarding  FlightStatus = "BOARDING"
	StatusDeparted  FlightStatus = "DEPARTED"
	StatusArrived   FlightStatus = "ARRIVED"
	StatusCancelled FlightStatus = "CANCELLED"
)

// BoardingWindow is how long before departure boarding starts.
const BoardingWindow = 40 * time.Minute

// OperationalWindow is how long before its scheduled departure a leg's operation is followed:
// from then on it is on time or delayed; before, it is scheduled (a delay known weeks ahead is a
// new schedule, not a delay).
const OperationalWindow = 24 * time.Hour

// DelayThreshold is the delay from which a leg that has not left yet is shown as delayed.
const DelayThreshold = 15 * time.Minute

// Flight is one operational flight: a carrier's flight number on a schedule date (the local date
// of departure from its first leg's origin), flying one or more legs.
type Flight struct {
	ID              string    `db:"id"` // "20261122+XX+1234"
	ScheduleDate    string    `db:"schedule_date"`
	CarrierCode     string    `db:"carrier"`
	FlightNumber    int       `db:"number"`
	Suffix          string    `db:"suffix"` // operational suffix, usually empty
	OriginCode      string    `db:"origin"`
	DestinationCode string    `db:"destination"`
	DepartureUTC    time.Time `db:"departure_utc"` // scheduled departure of the first leg
	ArrivalUTC      time.Time `db:"arrival_utc"`   // scheduled arrival of the last leg
	// Codeshares are the designators other carriers sell the flight under, space-separated
	// ("YY8434"); "" for none. See MarketedAs.
	Codeshares string `db:"codeshares"`
	// OnwardFlightID and PreviousFlightID are the flights its aircraft flies next from its
	// destination, and flew before into its origin, on the same schedule date; "" for none.
	OnwardFlightID   string `db:"onward_flight_id"`
	PreviousFlightID string `db:"previous_flight_id"`
	Haul             string `db:"haul"` // SHORT, MEDIUM or LONG
}

// IsEntity marks Flight as an Apollo Federation entity; gqlgen's federation plugin requires it.
func (Flight) IsEntity() {}

// Codeshare is one carrier's designator of another's flight: who sells it, under which number.
type Codeshare struct {
	Carrier string
	Number  int
}

// MarketedAs returns the flight's codeshares, in the order they were given.
func (f *Flight) MarketedAs() []Codeshare {
	var out []Codeshare
	for _, d := range strings.Fields(f.Codeshares) {
		if len(d) < 3 {
			continue
		}
		if n, err := strconv.Atoi(d[2:]); err == nil {
			out = append(out, Codeshare{Carrier: d[:2], Number: n})
		}
	}
	return out
}

// Designator is the carrier code and number, e.g. "XX1234".
func (f *Flight) Designator() string {
	if f.FlightNumber < 0 {
		return fmt.Sprintf("%s%04d%s", f.CarrierCode, f.FlightNumber, f.Suffix)
	}
	// As the Sprintf above, without its cost: a deals answer names a flight per destination.
	n := strconv.Itoa(f.FlightNumber)
	b := make([]byte, 0, len(f.CarrierCode)+max(len(n), 4)+len(f.Suffix))
	b = append(b, f.CarrierCode...)
	for range 4 - len(n) {
		b = append(b, '0')
	}
	return string(append(append(b, n...), f.Suffix...))
}

// FlightLeg is one take-off and landing of a flight. Times are in UTC; the offsets give the local
// time at each end. Estimated times are the scheduled ones plus the delay.
type FlightLeg struct {
	FlightID          string    `db:"flight_id"`
	Sequence          int       `db:"seq"`
	OriginCode        string    `db:"origin"`
	DestinationCode   string    `db:"destination"`
	ScheduledDep      time.Time `db:"scheduled_departure"`
	ScheduledArr      time.Time `db:"scheduled_arrival"`
	DepartureOffset   int       `db:"departure_offset"` // minutes east of UTC at the origin
	ArrivalOffset     int       `db:"arrival_offset"`   // minutes east of UTC at the destination
	DepartureDelay    int       `db:"departure_delay"`  // minutes
	ArrivalDelay      int       `db:"arrival_delay"`    // minutes
	Cancelled         bool      `db:"cancelled"`
	DepartureTerminal string    `db:"departure_terminal"`
	DepartureGate     string    `db:"departure_gate"`
	ArrivalTerminal   string    `db:"arrival_terminal"`
	ArrivalGate       string    `db:"arrival_gate"`
	ConfigurationCode string    `db:"configuration"`
	Registration      string    `db:"registration"`
	ServiceType       string    `db:"service_type"` // SSIM service type, "J" for scheduled passenger
	DistanceKm        int       `db:"distance_km"`
}

// Duration is the leg's scheduled block time, in ISO 8601 (PT2H40M).
func (l *FlightLeg) Duration() string { return ISODuration(l.ScheduledArr.Sub(l.ScheduledDep)) }

// EstimatedDeparture returns the expected off-block time.
func (l *FlightLeg) EstimatedDeparture() time.Time {
	return l.ScheduledDep.Add(time.Duration(l.DepartureDelay) * time.Minute)
}

// EstimatedArrival returns the expected on-block time.
func (l *FlightLeg) EstimatedArrival() time.Time {
	return l.ScheduledArr.Add(time.Duration(l.ArrivalDelay) * time.Minute)
}

// StatusAt returns the leg's public status at now: the status follows the clock.
func (l *FlightLeg) StatusAt(now time.Time) FlightStatus {
	dep, arr := l.EstimatedDeparture(), l.EstimatedArrival()
	switch {
	case l.Cancelled:
		return StatusCancelled
	case !now.Before(arr):
		return StatusArrived
	case !now.Before(dep):
		return StatusDeparted
	case !now.Before(dep.Add(-BoardingWindow)):
		return StatusBoarding
	case now.Before(l.ScheduledDep.Add(-OperationalWindow)):
		return StatusScheduled
	case l.DepartureDelay >= int(DelayThreshold/time.Minute):
		return StatusDelayed
	}
	return StatusOnTime
}

// FlightStatusAt sums up the legs of a flight: cancelled if any leg is, arrived when the last leg
// has, otherwise the status of the first leg that has not arrived.
func FlightStatusAt(legs []*FlightLeg, now time.Time) FlightStatus {
	if len(legs) == 0 {
		return StatusScheduled
	}
	for _, l := range legs {
		if l.Cancelled {
			return StatusCancelled
		}
	}
	for i, l := range legs {
		s := l.StatusAt(now)
		if s != StatusArrived {
			if i > 0 && (s == StatusScheduled || s == StatusOnTime || s == StatusBoarding || s == StatusDelayed) {
				// Between two legs the flight is still under way.
				return StatusDeparted
			}
			return s
		}
	}
	return StatusArrived
}

// LocalTime returns t in the fixed zone offsetMinutes east of UTC, so it renders with its offset.
func LocalTime(t time.Time, offsetMinutes int) time.Time {
	return t.In(time.FixedZone("", offsetMinutes*60))
}

// FlightID is the parsed form of a flight id "YYYYMMDD+CC+NNNN[S]".
type FlightID struct {
	Date    string // YYYY-MM-DD
	Carrier string
	Number  int
	Suffix  string
}

// String formats the id as "20261122+XX+1234".
func (id FlightID) String() string {
	if id.Number < 0 {
		return fmt.Sprintf("%s+%s+%04d%s", strings.ReplaceAll(id.Date, "-", ""), id.Carrier, id.Number, id.Suffix)
	}
	b := make([]byte, 0, 20)
	for i := 0; i < len(id.Date); i++ {
		if id.Date[i] != '-' {
			b = append(b, id.Date[i])
		}
	}
	b = append(b, '+')
	b = append(b, id.Carrier...)
	b = append(b, '+')
	for d := 1000; d > 1 && id.Number < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(id.Number), 10)
	b = append(b, id.Suffix...)
	return string(b)
}

// ParseFlightID parses "YYYYMMDD+CC+NNNN" with an optional one-letter suffix; it returns
// ECodeBadFormat naming param. It is on the path of every call that names a flight, and
// allocates only the date it returns.
func ParseFlightID(param, s string) (FlightID, error) {
	bad := func() (FlightID, error) {
		return FlightID{}, ParamErrorf(ECodeBadFormat, param, "flight id must look like 20261122+XX+1234, got %q", Clip(s))
	}
	date, carrier, num, ok := cut3(s, '+')
	if !ok || len(date) != 8 {
		date, carrier, num, ok = cut3(s, ' ') // a '+' decoded as a space from a query string
		if !ok || len(date) != 8 {
			return bad()
		}
	}
	y, okY := digits(date[:4])
	m, okM := digits(date[4:6])
	d, okD := digits(date[6:])
	if !okY || !okM || !okD || m < 1 || m > 12 || d < 1 || time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Day() != d {
		return bad()
	}
	if len(carrier) == 2 && (carrier[0] >= 'a' && carrier[0] <= 'z' || carrier[1] >= 'a' && carrier[1] <= 'z') {
		carrier = strings.ToUpper(carrier)
	}
	if !IsCarrierCode(carrier) {
		return bad()
	}
	suffix := ""
	if n := len(num); n > 0 && num[n-1] >= 'A' && num[n-1] <= 'Z' {
		num, suffix = num[:n-1], num[n-1:]
	}
	n, okN := digits(num)
	if !okN || n < 1 || n > 9999 || len(num) > 4 {
		return bad()
	}
	return FlightID{Date: date[:4] + "-" + date[4:6] + "-" + date[6:], Carrier: carrier, Number: n, Suffix: suffix}, nil
}

// cut3 splits s at the two seps it holds: ok is false unless it holds exactly two.
func cut3(s string, sep byte) (a, b, c string, ok bool) {
	i := strings.IndexByte(s, sep)
	if i < 0 {
		return "", "", "", false
	}
	j := strings.IndexByte(s[i+1:], sep)
	if j < 0 {
		return "", "", "", false
	}
	j += i + 1
	if strings.IndexByte(s[j+1:], sep) >= 0 {
		return "", "", "", false
	}
	return s[:i], s[i+1 : j], s[j+1:], true
}

// digits is the value of s, one to four decimal digits and nothing else.
func digits(s string) (int, bool) {
	if len(s) == 0 || len(s) > 4 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// normalizeCarrier upper-cases an optional carrier code of a filter and checks it; it returns
// ECodeBadFormat naming "carrier".
func normalizeCarrier(c *string) error {
	*c = strings.ToUpper(strings.TrimSpace(*c))
	if *c != "" && !IsCarrierCode(*c) {
		return ParamErrorf(ECodeBadFormat, "carrier", "carrier must be a two-character airline code, got %q", *c)
	}
	return nil
}

// IsCarrierCode reports whether s is a two-character airline designator (letters or digits, not
// two digits).
func IsCarrierCode(s string) bool {
	if len(s) != 2 {
		return false
	}
	digits := 0
	for i := 0; i < 2; i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9':
			digits++
		default:
			return false
		}
	}
	return digits < 2
}

// FlightFilter selects flights. Date is the schedule date (local date of departure); Origin and
// Destination are places (a city matches all its airports).
type FlightFilter struct {
	Origin      *Place
	Destination *Place
	Date        string
	// LastDate, with Date, makes Date the first schedule date of a range that ends on LastDate.
	LastDate     string
	Carrier      string
	FlightNumber int
	// DepartureFrom and DepartureTo bound the scheduled departure (UTC) of the first leg when set.
	DepartureFrom, DepartureTo time.Time
	// ArrivalFrom and ArrivalTo bound the scheduled arrival (UTC) of the last leg when set.
	ArrivalFrom, ArrivalTo time.Time
	// Estimated makes those bounds apply to the estimated times instead of the scheduled ones.
	Estimated bool
	Page
}

// Validate checks the filter; it returns ECodeBadFormat or ECodeInvalidParameter.
func (f *FlightFilter) Validate() error {
	if f.Date != "" {
		if _, err := ParseDate("date", f.Date); err != nil {
			return err
		}
	}
	if f.LastDate != "" {
		if _, err := ParseDate("lastDate", f.LastDate); err != nil {
			return err
		}
		if f.Date == "" || f.LastDate < f.Date {
			return ParamErrorf(ECodeInvalidParameter, "lastDate", "a range of dates needs a first date on or before its last")
		}
	}
	if err := normalizeCarrier(&f.Carrier); err != nil {
		return err
	}
	if f.FlightNumber < 0 || f.FlightNumber > 9999 {
		return ParamErrorf(ECodeInvalidParameter, "flightNumber", "flight number must be between 1 and 9999")
	}
	if f.Origin == nil && f.Destination == nil && f.Date == "" && f.Carrier == "" && f.DepartureFrom.IsZero() && f.ArrivalFrom.IsZero() {
		return ParamErrorf(ECodeMissingParameter, "date", "give at least an origin, a destination, a carrier, a date or a time range")
	}
	return f.Page.Validate()
}

// FlightStore reads materialised flights.
type FlightStore interface {
	// FlightsByIDs returns one flight per id, in the order of ids, nil where none exists.
	FlightsByIDs(ctx context.Context, ids []string) ([]*Flight, error)
	// FindFlights returns one page of matching flights ordered by scheduled departure and id, and
	// the number of all matches.
	FindFlights(ctx context.Context, f FlightFilter) ([]*Flight, int, error)
	// LegsByFlightIDs returns, for each flight id, its legs in sequence order.
	LegsByFlightIDs(ctx context.Context, ids []string) ([][]*FlightLeg, error)
	// FlightsWithLegs is FlightsByIDs and LegsByFlightIDs in one read.
	FlightsWithLegs(ctx context.Context, ids []string) ([]*Flight, [][]*FlightLeg, error)
	// FindLegs returns the legs of every flight that FindFlights matches with f, f's page aside,
	// ordered by flight id and sequence: the legs of many flights in one query.
	FindLegs(ctx context.Context, f FlightFilter) ([]*FlightLeg, error)
}

// Movement is one end of a leg as a traveller sees it: times in the airport's local offset.
type Movement struct {
	Scheduled    time.Time
	Estimated    time.Time
	Terminal     string
	Gate         string
	DelayMinutes int
	Cancelled    bool
}

// ActualAt returns when the movement happened, or nil if it has not happened at now.
func (m *Movement) ActualAt(now time.Time) *time.Time {
	if m.Cancelled || now.Before(m.Estimated) {
		return nil
	}
	a := m.Estimated
	return &a
}

// DepartureMovement returns the leg's departure. Only its actual time depends on the clock.
func (l *FlightLeg) DepartureMovement() *Movement {
	return movement(l.ScheduledDep, l.DepartureDelay, l.DepartureOffset, l.DepartureTerminal, l.DepartureGate, l.Cancelled)
}

// ArrivalMovement returns the leg's arrival.
func (l *FlightLeg) ArrivalMovement() *Movement {
	return movement(l.ScheduledArr, l.ArrivalDelay, l.ArrivalOffset, l.ArrivalTerminal, l.ArrivalGate, l.Cancelled)
}

func movement(sched time.Time, delay, offset int, terminal, gate string, cancelled bool) *Movement {
	est := sched.Add(time.Duration(delay) * time.Minute)
	return &Movement{Scheduled: LocalTime(sched, offset), Estimated: LocalTime(est, offset), Terminal: terminal, Gate: gate,
		DelayMinutes: delay, Cancelled: cancelled}
}
