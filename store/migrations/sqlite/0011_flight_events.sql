-- The flight status events: each change to a flight's status (the status clock's transitions and
-- the operations API's writes), recorded once, in the transaction of the change, at a position
-- that only grows. Subscribers resume from a position; the events are kept for a retention
-- window (see README) and swept after it. clock_key makes a clock transition one row whichever
-- replica derives it first (NULL for the operations API's events: each of those is its own).
CREATE TABLE flight_events (
    position           INTEGER PRIMARY KEY AUTOINCREMENT,
    flight_id          TEXT NOT NULL,
    kind               TEXT NOT NULL,
    status             TEXT NOT NULL,
    origins            TEXT NOT NULL,
    destinations       TEXT NOT NULL,
    leg                INTEGER NOT NULL,
    departure_delay    INTEGER NOT NULL,
    arrival_delay      INTEGER NOT NULL,
    departure_gate     TEXT NOT NULL,
    departure_terminal TEXT NOT NULL,
    clock_key          TEXT,
    created_at         TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX flight_events_clock ON flight_events (clock_key);
CREATE INDEX flight_events_created ON flight_events (created_at);
