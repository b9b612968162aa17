-- The flight graph: places, fleet, schedule, network and materialised flights.
CREATE TABLE countries (
    code      TEXT PRIMARY KEY,
    name      TEXT NOT NULL,
    label_en  TEXT NOT NULL,
    label_fr  TEXT NOT NULL,
    label_nl  TEXT NOT NULL,
    area_code TEXT NOT NULL,
    currency  TEXT NOT NULL,
    euro      BOOLEAN NOT NULL,
    eu        BOOLEAN NOT NULL,
    schengen  BOOLEAN NOT NULL
);

CREATE TABLE cities (
    code         TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    label_en     TEXT NOT NULL,
    label_fr     TEXT NOT NULL,
    label_nl     TEXT NOT NULL,
    country_code TEXT NOT NULL REFERENCES countries (code)
);

CREATE TABLE airports (
    code         TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    city_code    TEXT NOT NULL REFERENCES cities (code),
    country_code TEXT NOT NULL REFERENCES countries (code),
    latitude     DOUBLE PRECISION NOT NULL,
    longitude    DOUBLE PRECISION NOT NULL,
    time_zone    TEXT NOT NULL,
    hub          BOOLEAN NOT NULL
);
CREATE INDEX airports_city ON airports (city_code);
CREATE INDEX airports_country ON airports (country_code);

CREATE TABLE carriers (
    code TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    hub  TEXT NOT NULL REFERENCES airports (code)
);

CREATE TABLE aircraft_types (
    code TEXT PRIMARY KEY,
    icao TEXT NOT NULL,
    name TEXT NOT NULL,
    haul TEXT NOT NULL
);

CREATE TABLE aircraft (
    code      TEXT PRIMARY KEY,
    type_code TEXT NOT NULL REFERENCES aircraft_types (code),
    carrier   TEXT NOT NULL REFERENCES carriers (code),
    name      TEXT NOT NULL,
    wifi      BOOLEAN NOT NULL,
    layout    TEXT NOT NULL
);

CREATE TABLE cabin_products (
    code  TEXT PRIMARY KEY,
    class TEXT NOT NULL
);

CREATE TABLE cabins (
    configuration TEXT NOT NULL REFERENCES aircraft (code),
    class         TEXT NOT NULL,
    position      INTEGER NOT NULL,
    seats         INTEGER NOT NULL CHECK (seats > 0),
    product       TEXT NOT NULL REFERENCES cabin_products (code),
    PRIMARY KEY (configuration, class)
);

CREATE TABLE amenities (
    product     TEXT NOT NULL REFERENCES cabin_products (code),
    position    INTEGER NOT NULL,
    category    TEXT NOT NULL,
    feature     TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    weight      INTEGER NOT NULL,
    PRIMARY KEY (product, position)
);

CREATE TABLE schedule_legs (
    carrier              TEXT NOT NULL REFERENCES carriers (code),
    number               INTEGER NOT NULL,
    seq                  INTEGER NOT NULL,
    period_from          TEXT NOT NULL,
    period_to            TEXT NOT NULL,
    days                 TEXT NOT NULL,
    origin               TEXT NOT NULL REFERENCES airports (code),
    destination          TEXT NOT NULL REFERENCES airports (code),
    departure_local      TEXT NOT NULL,
    arrival_local        TEXT NOT NULL,
    departure_day_offset INTEGER NOT NULL,
    arrival_day_offset   INTEGER NOT NULL,
    configuration        TEXT NOT NULL REFERENCES aircraft (code),
    service_type         TEXT NOT NULL,
    distance_km          INTEGER NOT NULL,
    block_minutes        INTEGER NOT NULL,
    PRIMARY KEY (carrier, number, seq, period_from)
);

CREATE TABLE routes (
    carrier        TEXT NOT NULL REFERENCES carriers (code),
    origin         TEXT NOT NULL REFERENCES airports (code),
    destination    TEXT NOT NULL REFERENCES airports (code),
    distance_km    INTEGER NOT NULL,
    block_minutes  INTEGER NOT NULL,
    haul           TEXT NOT NULL,
    weekly_flights INTEGER NOT NULL,
    PRIMARY KEY (origin, destination, carrier)
);
CREATE INDEX routes_destination ON routes (destination);

CREATE TABLE flights (
    id            TEXT PRIMARY KEY,
    schedule_date TEXT NOT NULL,
    carrier       TEXT NOT NULL,
    number        INTEGER NOT NULL,
    suffix        TEXT NOT NULL,
    origin        TEXT NOT NULL,
    destination   TEXT NOT NULL,
    departure_utc TIMESTAMPTZ NOT NULL,
    arrival_utc   TIMESTAMPTZ NOT NULL,
    haul          TEXT NOT NULL
);
CREATE INDEX flights_origin ON flights (origin, schedule_date, departure_utc);
CREATE INDEX flights_destination ON flights (destination, schedule_date, departure_utc);
CREATE INDEX flights_number ON flights (carrier, number, schedule_date);
CREATE INDEX flights_date ON flights (schedule_date, departure_utc);
CREATE INDEX flights_departure ON flights (departure_utc);
CREATE INDEX flights_arrival ON flights (arrival_utc);

CREATE TABLE flight_legs (
    flight_id          TEXT NOT NULL REFERENCES flights (id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    origin             TEXT NOT NULL,
    destination        TEXT NOT NULL,
    scheduled_departure TIMESTAMPTZ NOT NULL,
    scheduled_arrival  TIMESTAMPTZ NOT NULL,
    departure_offset   INTEGER NOT NULL,
    arrival_offset     INTEGER NOT NULL,
    departure_delay    INTEGER NOT NULL,
    arrival_delay      INTEGER NOT NULL,
    cancelled          BOOLEAN NOT NULL,
    departure_terminal TEXT NOT NULL,
    departure_gate     TEXT NOT NULL,
    arrival_terminal   TEXT NOT NULL,
    arrival_gate       TEXT NOT NULL,
    configuration      TEXT NOT NULL,
    registration       TEXT NOT NULL,
    service_type       TEXT NOT NULL,
    distance_km        INTEGER NOT NULL,
    PRIMARY KEY (flight_id, seq)
);

CREATE TABLE dataset_state (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    seed  BIGINT NOT NULL,
    scale INTEGER NOT NULL
);

CREATE TABLE materialised_dates (
    schedule_date TEXT PRIMARY KEY
);
