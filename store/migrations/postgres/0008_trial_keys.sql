-- Trial keys: short-lived stand-ins for a key that a portal session mints for the portal's Try it
-- page and playground, which call the APIs as one of the account's keys without its secret. Only
-- hashes of their two halves are stored. A trial key ends with the session that minted it (the
-- cascade; the store deletes them itself first, to revoke their tokens and announce their keys);
-- its key's deletion must delete it first (no cascade: the application's deletion names what goes).
CREATE TABLE trial_keys (
    key_hash     TEXT PRIMARY KEY,
    secret_hash  TEXT NOT NULL,
    key_id       TEXT NOT NULL REFERENCES api_keys (id),
    session_hash TEXT NOT NULL REFERENCES sessions (token_hash) ON DELETE CASCADE,
    created_at   TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL
);
-- A key's trials, oldest first: bounded per key, deleted with the key's secret, status or application.
CREATE INDEX trial_keys_key ON trial_keys (key_id, created_at);
-- A session's trials, deleted with it.
CREATE INDEX trial_keys_session ON trial_keys (session_hash);
