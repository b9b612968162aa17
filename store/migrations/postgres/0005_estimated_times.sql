-- A flight's estimated departure (its first leg's) and arrival (its last leg's), which a flight
-- status search bounds instead of the scheduled ones when asked (timeOriginType M, I or P). The
-- materialised flights are derived data: they are dropped here and materialised again, with these
-- times, by the next roll of the window (serve rolls it at start). The columns are nullable, as
-- SQLite cannot add a NOT NULL column without a default; the store always writes both.
DELETE FROM flight_legs;
DELETE FROM flights;
DELETE FROM materialised_dates;
ALTER TABLE flights ADD COLUMN est_departure_utc TIMESTAMPTZ;
ALTER TABLE flights ADD COLUMN est_arrival_utc TIMESTAMPTZ;
CREATE INDEX flights_est_departure ON flights (est_departure_utc);
CREATE INDEX flights_est_arrival ON flights (est_arrival_utc);
