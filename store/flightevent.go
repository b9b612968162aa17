package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/flightgraph/flightgraph"
)

// eventsChannel is the SQL of the PostgreSQL notification channel of flight status events, one
// per schema as the access feed's (accessChannel). Its payload is the event's position.
const eventsChannel = `'flightgraph_events_' || left(md5(current_schema()), 16)`

// FlightEventStore implements flightgraph.FlightEventStore.
//
// Positions are handed out in commit order: on PostgreSQL every transaction that records events
// first takes a transaction-level advisory lock of the schema, so that no event commits with a
// smaller position than one already visible (a reader that has read up to position P never
// misses one that commits at P-1 later); SQLite has one writer at a time anyway. Recording is
// rare (an operation's write, a clock tick's transitions), so the lock costs nothing to speak of.
type FlightEventStore struct {
	db *DB

	mu       sync.Mutex
	recorded []func(position int64)
}

var _ flightgraph.FlightEventStore = (*FlightEventStore)(nil)

// NewFlightEventStore returns the flight event store of db.
func NewFlightEventStore(db *DB) *FlightEventStore { return &FlightEventStore{db: db} }

// OnRecorded has f called, in this process, with the latest position each time events commit
// through this store; other processes hear of them on the event feed (EventFeed).
func (s *FlightEventStore) OnRecorded(f func(position int64)) {
	s.mu.Lock()
	s.recorded = append(s.recorded, f)
	s.mu.Unlock()
}

func (s *FlightEventStore) tell(position int64) {
	s.mu.Lock()
	fs := s.recorded
	s.mu.Unlock()
	for _, f := range fs {
		f(position)
	}
}

const eventCols = `position, flight_id, kind, status, origins, destinations, leg, departure_delay, arrival_delay,
	departure_gate, departure_terminal, created_at`

// lock serialises the transactions that record events (see FlightEventStore).
func (s *FlightEventStore) lock(ctx context.Context, tx *sqlx.Tx) error {
	if s.db.dialect != Postgres {
		return nil
	}
	_, err := s.db.exec(ctx, tx, `SELECT pg_advisory_xact_lock(7420267, hashtext(current_schema()))`)
	return err
}

// announce notifies the other processes of position, delivered when the transaction commits.
func (s *FlightEventStore) announce(ctx context.Context, tx *sqlx.Tx, position int64) error {
	if s.db.dialect != Postgres {
		return nil
	}
	_, err := s.db.exec(ctx, tx, `SELECT pg_notify(`+eventsChannel+`, ?)`, strconv.FormatInt(position, 10))
	return err
}

// airports returns the origins and destinations of legs, space-separated with a space at each end.
func airports(legs []*flightgraph.FlightLeg) (origins, destinations string) {
	o, d := []string{""}, []string{""}
	for _, l := range legs {
		o, d = append(o, l.OriginCode), append(d, l.DestinationCode)
	}
	return strings.Join(append(o, ""), " "), strings.Join(append(d, ""), " ")
}

func (s *FlightEventStore) insert(ctx context.Context, tx *sqlx.Tx, e *flightgraph.FlightEvent, clockKey *string) (bool, error) {
	q := `INSERT INTO flight_events (flight_id, kind, status, origins, destinations, leg, departure_delay, arrival_delay,
		departure_gate, departure_terminal, clock_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	if clockKey != nil {
		q += ` ON CONFLICT (clock_key) DO NOTHING`
	}
	err := s.db.get(ctx, tx, &e.Position, q+` RETURNING position`, e.FlightID, e.Kind, e.Status, e.Origins, e.Destinations, e.Leg,
		e.DepartureDelay, e.ArrivalDelay, e.DepartureGate, e.DepartureTerminal, clockKey, e.At.UTC())
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // a replica recorded it first
	}
	return err == nil, err
}

// event returns the event of a flight's legs at now.
func event(f *flightgraph.Flight, legs []*flightgraph.FlightLeg, kind flightgraph.FlightEventKind, status flightgraph.FlightStatus, leg int, now time.Time) *flightgraph.FlightEvent {
	e := &flightgraph.FlightEvent{FlightID: f.ID, Kind: kind, Status: status, Leg: leg, At: now.UTC()}
	e.Origins, e.Destinations = airports(legs)
	if i := max(leg, 1) - 1; i < len(legs) {
		l := legs[i]
		e.DepartureDelay, e.ArrivalDelay, e.DepartureGate, e.DepartureTerminal = l.DepartureDelay, l.ArrivalDelay, l.DepartureGate, l.DepartureTerminal
	}
	return e
}

// RecordOperation implements flightgraph.FlightEventStore.
func (s *FlightEventStore) RecordOperation(ctx context.Context, op flightgraph.FlightOperation, now time.Time) (*flightgraph.FlightEvent, error) {
	if err := op.Validate(); err != nil {
		return nil, err
	}
	var e *flightgraph.FlightEvent
	err := s.db.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := s.lock(ctx, tx); err != nil {
			return err
		}
		var f flightgraph.Flight
		err := s.db.get(ctx, tx, &f, `SELECT `+flightCols+` FROM flights WHERE id = ?`, op.FlightID)
		if errors.Is(err, sql.ErrNoRows) {
			return flightgraph.ParamErrorf(flightgraph.ECodeFlightNotFound, "flightId", "no flight %s in the operational window", op.FlightID)
		} else if err != nil {
			return err
		}
		var legs []*flightgraph.FlightLeg
		if err := s.db.selectIn(ctx, tx, &legs, `SELECT `+legCols+` FROM flight_legs WHERE flight_id = ? ORDER BY seq`, op.FlightID); err != nil {
			return err
		}
		seq := max(op.Leg, 1)
		if seq > len(legs) {
			return flightgraph.ParamErrorf(flightgraph.ECodeFlightNotFound, "leg", "flight %s has %d legs", op.FlightID, len(legs))
		}
		l := legs[seq-1]
		switch op.Kind {
		case flightgraph.EventDelay:
			l.DepartureDelay, l.ArrivalDelay = op.DelayMinutes, op.DelayMinutes
		case flightgraph.EventGate:
			l.DepartureGate = op.Gate
		case flightgraph.EventTerminal:
			l.DepartureTerminal = op.Terminal
		case flightgraph.EventCancellation:
			l.Cancelled = true
		}
		if _, err := s.db.exec(ctx, tx, `UPDATE flight_legs SET departure_delay = ?, arrival_delay = ?, departure_gate = ?, departure_terminal = ?,
			cancelled = ? WHERE flight_id = ? AND seq = ?`, l.DepartureDelay, l.ArrivalDelay, l.DepartureGate, l.DepartureTerminal, l.Cancelled, op.FlightID, seq); err != nil {
			return err
		}
		first, last := legs[0], legs[len(legs)-1]
		if _, err := s.db.exec(ctx, tx, `UPDATE flights SET est_departure_utc = ?, est_arrival_utc = ? WHERE id = ?`,
			first.EstimatedDeparture().UTC(), last.EstimatedArrival().UTC(), op.FlightID); err != nil {
			return err
		}
		e = event(&f, legs, op.Kind, flightgraph.FlightStatusAt(legs, now), op.Leg, now)
		if _, err := s.insert(ctx, tx, e, nil); err != nil {
			return err
		}
		return s.announce(ctx, tx, e.Position)
	})
	if err != nil {
		return nil, err
	}
	s.tell(e.Position)
	return e, nil
}

// clockKey identifies a clock transition: a flight reaching a status with given delays is one
// event, however many replicas derive it, and a new delay makes the same status a new one.
func clockKey(t flightgraph.StatusTransition) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s", t.Flight.ID, t.Status)
	for _, l := range t.Legs {
		fmt.Fprintf(&b, "|%d,%d", l.DepartureDelay, l.ArrivalDelay)
	}
	return b.String()
}

// RecordTransitions implements flightgraph.FlightEventStore.
func (s *FlightEventStore) RecordTransitions(ctx context.Context, ts []flightgraph.StatusTransition, now time.Time) ([]*flightgraph.FlightEvent, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	var out []*flightgraph.FlightEvent
	err := s.db.inTx(ctx, func(tx *sqlx.Tx) error {
		out = out[:0]
		if err := s.lock(ctx, tx); err != nil {
			return err
		}
		for _, t := range ts {
			e := event(t.Flight, t.Legs, flightgraph.EventStatus, t.Status, 0, now)
			key := clockKey(t)
			ok, err := s.insert(ctx, tx, e, &key)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return s.announce(ctx, tx, out[len(out)-1].Position)
	})
	if err != nil {
		return nil, err
	}
	if len(out) > 0 {
		s.tell(out[len(out)-1].Position)
	}
	return out, nil
}

// EventsAfter implements flightgraph.FlightEventStore.
func (s *FlightEventStore) EventsAfter(ctx context.Context, after int64, limit int) ([]*flightgraph.FlightEvent, error) {
	var rows []*flightgraph.FlightEvent
	err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+eventCols+` FROM flight_events WHERE position > ? ORDER BY position LIMIT ?`, after, limit)
	return rows, err
}

// Positions implements flightgraph.FlightEventStore.
func (s *FlightEventStore) Positions(ctx context.Context) (oldest, latest int64, err error) {
	var r struct {
		Oldest int64 `db:"oldest"`
		Latest int64 `db:"latest"`
	}
	err = s.db.get(ctx, s.db.db, &r, `SELECT COALESCE(MIN(position), 0) AS oldest, COALESCE(MAX(position), 0) AS latest FROM flight_events`)
	return r.Oldest, r.Latest, err
}

// DeleteEventsBefore implements flightgraph.FlightEventStore.
func (s *FlightEventStore) DeleteEventsBefore(ctx context.Context, t time.Time) (int64, error) {
	r, err := s.db.exec(ctx, s.db.db, `DELETE FROM flight_events WHERE created_at < ? AND position < (SELECT MAX(position) FROM flight_events)`, t.UTC())
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// FlightsChangingBetween implements flightgraph.FlightEventStore.
func (s *FlightEventStore) FlightsChangingBetween(ctx context.Context, from, to time.Time) ([]*flightgraph.Flight, error) {
	from, to = from.UTC(), to.UTC()
	board, window := flightgraph.BoardingWindow, flightgraph.OperationalWindow
	var rows []*flightgraph.Flight
	err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+flightCols+` FROM flights WHERE
		(est_departure_utc > ? AND est_departure_utc <= ?) OR (est_departure_utc > ? AND est_departure_utc <= ?)
		OR (est_arrival_utc > ? AND est_arrival_utc <= ?) OR (departure_utc > ? AND departure_utc <= ?)
		ORDER BY id`, from, to, from.Add(board), to.Add(board), from, to, from.Add(window), to.Add(window))
	return rows, err
}

// EventFeed tells this process of the flight status events other processes record, over
// PostgreSQL LISTEN/NOTIFY on a connection of its own (application_name …-event-feed), as the
// access feed does for access changes. A notification only wakes the reader (live.Hub), which
// reads by position from the store: a lost one costs the reader's poll interval, never an event.
type EventFeed struct{ db *DB }

// NewEventFeed returns the event feed of db.
func NewEventFeed(db *DB) *EventFeed { return &EventFeed{db: db} }

// Watch calls notify with each position announced, and with 0 whenever the feed (re)connects,
// until ctx is done. On SQLite, which one process owns, it waits: the store tells its own
// process (FlightEventStore.OnRecorded).
func (f *EventFeed) Watch(ctx context.Context, notify func(position int64)) error {
	if f.db.dialect != Postgres {
		<-ctx.Done()
		return nil
	}
	dsn, err := listenerDSN(f.db.dsn)
	if err != nil {
		return err
	}
	dsn = strings.Replace(dsn, "-access-feed", "-event-feed", 1)
	var channel string
	for {
		if err := f.db.db.GetContext(ctx, &channel, `SELECT `+eventsChannel); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(feedReconnectMin):
		}
	}
	l := pq.NewListener(dsn, feedReconnectMin, feedReconnectMax, func(ev pq.ListenerEventType, err error) {
		if ev == pq.ListenerEventConnected || ev == pq.ListenerEventReconnected {
			notify(0)
		}
	})
	defer l.Close()
	go l.Listen(channel)
	for {
		select {
		case <-ctx.Done():
			return nil
		case n, ok := <-l.Notify:
			if !ok {
				return nil
			}
			var p int64
			if n != nil {
				p, _ = strconv.ParseInt(n.Extra, 10, 64)
			}
			notify(p)
		}
	}
}
