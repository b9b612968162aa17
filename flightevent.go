package flightgraph

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// FlightEventKind says what a flight status event records.
type FlightEventKind string

// The kinds of flight status events: STATUS is the status clock's (a flight boards, departs,
// arrives as time passes); the others are the operations API's.
const (
	EventStatus       FlightEventKind = "STATUS"
	EventDelay        FlightEventKind = "DELAY"
	EventGate         FlightEventKind = "GATE"
	EventTerminal     FlightEventKind = "TERMINAL"
	EventCancellation FlightEventKind = "CANCELLATION"
)

// DefaultEventRetention is how long flight status events are kept: a client that resumes from a
// position older than that is told to start over (ECodePositionExpired).
const DefaultEventRetention = 24 * time.Hour

// FlightEvent is one recorded change to a flight's status, written once, in the transaction of
// the change, at a position that only grows: a subscriber resumes from the last position it saw.
type FlightEvent struct {
	Position int64           `db:"position"`
	FlightID string          `db:"flight_id"`
	Kind     FlightEventKind `db:"kind"`
	// Status is the flight's status once the change is made.
	Status FlightStatus `db:"status"`
	// Origins and Destinations are the airports the flight's legs leave and reach,
	// space-separated with a space at each end (" AMS JFK "), for the boards.
	Origins      string `db:"origins"`
	Destinations string `db:"destinations"`
	// Leg is the sequence of the leg an operation changed, 0 for the whole flight.
	Leg               int       `db:"leg"`
	DepartureDelay    int       `db:"departure_delay"`
	ArrivalDelay      int       `db:"arrival_delay"`
	DepartureGate     string    `db:"departure_gate"`
	DepartureTerminal string    `db:"departure_terminal"`
	At                time.Time `db:"created_at"`
	// End, set only on the last value a subscription's stream carries, says why the stream ends
	// (ECodeResume, ECodeSubscriptionRevoked …); Position is then the last one sent.
	End error `db:"-"`
}

// Cursor is the event's position as clients see it: a decimal string.
func (e *FlightEvent) Cursor() string { return strconv.FormatInt(e.Position, 10) }

// Departs reports whether one of the flight's legs leaves airport.
func (e *FlightEvent) Departs(airport string) bool {
	return strings.Contains(e.Origins, " "+airport+" ")
}

// Arrives reports whether one of the flight's legs reaches airport.
func (e *FlightEvent) Arrives(airport string) bool {
	return strings.Contains(e.Destinations, " "+airport+" ")
}

// ParsePosition parses a position a client resumes from: "" is none (0, the live stream only);
// anything but a decimal number from 0 to 2^63-1 is ECodeBadFormat naming param.
func ParsePosition(param, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if len(s) > 19 {
		return 0, ParamErrorf(ECodeBadFormat, param, "a position is a decimal number, got %q", Clip(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, ParamErrorf(ECodeBadFormat, param, "a position is a decimal number, got %q", Clip(s))
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, ParamErrorf(ECodeBadFormat, param, "a position is a decimal number, got %q", Clip(s))
	}
	return n, nil
}

// FlightOperation is what an airline's operations control records of one flight: a delay, a gate
// or terminal change, or a cancellation. Leg 0 means the first leg.
type FlightOperation struct {
	FlightID string
	Leg      int
	Kind     FlightEventKind
	// DelayMinutes is the new departure delay of a DELAY; the arrival is delayed as much.
	DelayMinutes int
	Gate         string
	Terminal     string
}

// Validate checks the operation; it returns ECodeInvalidParameter or ECodeBadFormat.
func (o *FlightOperation) Validate() error {
	if _, err := ParseFlightID("flightId", o.FlightID); err != nil {
		return err
	}
	if o.Leg < 0 || o.Leg > 9 {
		return ParamErrorf(ECodeInvalidParameter, "leg", "leg must be between 1 and 9, or 0 for the first")
	}
	switch o.Kind {
	case EventDelay:
		if o.DelayMinutes < 0 || o.DelayMinutes > 48*60 {
			return ParamErrorf(ECodeInvalidParameter, "delayMinutes", "a delay is from 0 to 2880 minutes")
		}
	case EventGate:
		if !shortCode(o.Gate) {
			return ParamErrorf(ECodeInvalidParameter, "gate", "a gate is 1 to 6 letters and digits")
		}
	case EventTerminal:
		if !shortCode(o.Terminal) {
			return ParamErrorf(ECodeInvalidParameter, "terminal", "a terminal is 1 to 6 letters and digits")
		}
	case EventCancellation:
	default:
		return ParamErrorf(ECodeInvalidParameter, "kind", "kind is DELAY, GATE, TERMINAL or CANCELLATION")
	}
	return nil
}

func shortCode(s string) bool {
	if len(s) == 0 || len(s) > 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// StatusTransition is a status the clock derived for a flight: recorded once whichever replica
// derives it first.
type StatusTransition struct {
	Flight *Flight
	Legs   []*FlightLeg
	Status FlightStatus
}

// FlightEventStore records and reads flight status events.
type FlightEventStore interface {
	// RecordOperation applies op to the flight's leg and records its event, in one transaction,
	// at now; ECodeFlightNotFound when the flight or leg is not stored.
	RecordOperation(ctx context.Context, op FlightOperation, now time.Time) (*FlightEvent, error)
	// RecordTransitions records the clock's transitions that no replica recorded yet and returns
	// those it recorded.
	RecordTransitions(ctx context.Context, ts []StatusTransition, now time.Time) ([]*FlightEvent, error)
	// EventsAfter returns at most limit events after position, in position order.
	EventsAfter(ctx context.Context, after int64, limit int) ([]*FlightEvent, error)
	// OldestPosition returns the position of the oldest event kept and the latest position, 0s
	// when none is kept.
	Positions(ctx context.Context) (oldest, latest int64, err error)
	// DeleteEventsBefore deletes the events recorded before t, but never the latest one, which
	// keeps the positions counting up where the table is emptied.
	DeleteEventsBefore(ctx context.Context, t time.Time) (int64, error)
	// FlightsChangingBetween returns the flights whose clock status may change in (from, to]:
	// a boarding, departure or arrival of their estimated times, or the start of their
	// operational window, falls in it.
	FlightsChangingBetween(ctx context.Context, from, to time.Time) ([]*Flight, error)
}
