-- Sign-ups waiting for their e-mail address to be verified (signUp, verifyEmail): the account to
-- create, under the hash of the token mailed to the address. An address may have several.
CREATE TABLE signups (
    token_hash    TEXT PRIMARY KEY,
    email         TEXT NOT NULL,
    name          TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX signups_email ON signups (email);
CREATE INDEX signups_expires ON signups (expires_at);
