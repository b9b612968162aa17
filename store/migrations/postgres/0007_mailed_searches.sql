-- Searches mailed with mail-my-search, written in the same transaction as their mail. The address
-- is kept as a keyed hash, enough to bound the mails one mailbox gets a day; the client, to bound
-- what one key has mailed.
CREATE TABLE mailed_searches (
    id             TEXT PRIMARY KEY,
    recipient_hash TEXT NOT NULL,
    client_id      TEXT NOT NULL,
    search         TEXT NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX mailed_searches_recipient ON mailed_searches (recipient_hash, created_at);
CREATE INDEX mailed_searches_client ON mailed_searches (client_id, created_at);
