-- Requests for the partner and internal APIs: a developer asks the operators for one (what it is
-- for, the expected use), and an operator answers with a role that opens it or a refusal with a
-- reason. One request of an account for an API waits at a time.
CREATE TABLE access_requests (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    product      TEXT NOT NULL,
    description  TEXT NOT NULL,
    expected_use TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('pending', 'granted', 'refused')),
    role         TEXT NOT NULL,
    reply        TEXT NOT NULL,
    reviewed_by  TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    reviewed_at  TIMESTAMP
);
CREATE UNIQUE INDEX access_requests_waiting ON access_requests (account_id, product) WHERE status = 'pending';
CREATE INDEX access_requests_account ON access_requests (account_id, created_at);
CREATE INDEX access_requests_status ON access_requests (status, created_at);

-- The tokens of the portal's forms, each used once: a form sent again (a double click, the back
-- button, a client's retry) carries the token of its first sending and changes nothing.
CREATE TABLE request_tokens (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    token      TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (account_id, token)
);
