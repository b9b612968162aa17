-- What a flight status shows of a flight's operation beyond its schedule: its estimated departure
-- (its first leg's) and arrival (its last leg's), which a search bounds instead of the scheduled
-- ones when asked (timeOriginType M, I or P); the other carriers' designators it is sold under
-- (codeshares, space-separated); and the flights its aircraft flies next and flew before that day.
-- The materialised flights are derived data: they are dropped here and materialised again, with
-- these, by the next roll of the window (serve rolls it at start). The times are nullable, as
-- SQLite cannot add a NOT NULL column without a default; the store always writes them.
DELETE FROM flight_legs;
DELETE FROM flights;
DELETE FROM materialised_dates;
ALTER TABLE flights ADD COLUMN est_departure_utc TIMESTAMPTZ;
ALTER TABLE flights ADD COLUMN est_arrival_utc TIMESTAMPTZ;
ALTER TABLE flights ADD COLUMN codeshares TEXT NOT NULL DEFAULT '';
ALTER TABLE flights ADD COLUMN onward_flight_id TEXT NOT NULL DEFAULT '';
ALTER TABLE flights ADD COLUMN previous_flight_id TEXT NOT NULL DEFAULT '';
CREATE INDEX flights_est_departure ON flights (est_departure_utc);
CREATE INDEX flights_est_arrival ON flights (est_arrival_utc);
