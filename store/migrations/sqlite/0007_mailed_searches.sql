-- Searches mailed with mail-my-search, written in the same transaction as their mail. The address
-- is kept as a hash, enough to bound the mails one address gets a day.
CREATE TABLE mailed_searches (
    id             TEXT PRIMARY KEY,
    recipient_hash TEXT NOT NULL,
    client_id      TEXT NOT NULL,
    search         TEXT NOT NULL,
    created_at     TIMESTAMP NOT NULL
);
CREATE INDEX mailed_searches_recipient ON mailed_searches (recipient_hash, created_at);
