-- The access core: products and plans, accounts and sessions, applications, keys and their
-- subscriptions, OAuth tokens, usage, audit log and the mail outbox.
CREATE TABLE products (
    slug        TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    visibility  TEXT NOT NULL CHECK (visibility IN ('public', 'partner', 'internal')),
    auth        TEXT NOT NULL CHECK (auth IN ('api_key', 'oauth')),
    grants      TEXT NOT NULL,
    operations  TEXT NOT NULL
);

CREATE TABLE plans (
    id         TEXT PRIMARY KEY,
    product    TEXT NOT NULL REFERENCES products (slug),
    name       TEXT NOT NULL,
    custom     BOOLEAN NOT NULL,
    per_second INTEGER NOT NULL CHECK (per_second > 0),
    per_day    INTEGER NOT NULL CHECK (per_day > 0)
);
CREATE UNIQUE INDEX plans_standard ON plans (product, name) WHERE NOT custom;

CREATE TABLE accounts (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('developer', 'partner', 'staff', 'operator')),
    password_hash TEXT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_account ON sessions (account_id);

CREATE TABLE customers (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    tier          TEXT NOT NULL,
    password_hash TEXT NOT NULL
);

CREATE TABLE applications (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    name         TEXT NOT NULL,
    website      TEXT NOT NULL,
    description  TEXT NOT NULL,
    callback_url TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX applications_account ON applications (account_id);

CREATE TABLE api_keys (
    id             TEXT PRIMARY KEY,
    application_id TEXT NOT NULL REFERENCES applications (id),
    hint           TEXT NOT NULL,
    key_hash       TEXT NOT NULL UNIQUE,
    secret_hash    TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
    created_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX api_keys_application ON api_keys (application_id);

CREATE TABLE subscriptions (
    id         TEXT PRIMARY KEY,
    key_id     TEXT NOT NULL REFERENCES api_keys (id),
    product    TEXT NOT NULL REFERENCES products (slug),
    plan_id    TEXT NOT NULL REFERENCES plans (id),
    status     TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'revoked')),
    reason     TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    decided_at TIMESTAMPTZ,
    decided_by TEXT NOT NULL,
    UNIQUE (key_id, product)
);
CREATE INDEX subscriptions_status ON subscriptions (status);

CREATE TABLE limit_requests (
    id                   TEXT PRIMARY KEY,
    subscription_id      TEXT NOT NULL REFERENCES subscriptions (id),
    account_id           TEXT NOT NULL REFERENCES accounts (id),
    description          TEXT NOT NULL,
    estimated_per_second INTEGER NOT NULL,
    estimated_per_day    INTEGER NOT NULL,
    status               TEXT NOT NULL CHECK (status IN ('pending', 'granted', 'declined')),
    reply                TEXT NOT NULL,
    reviewed_by          TEXT NOT NULL,
    created_at           TIMESTAMPTZ NOT NULL,
    reviewed_at          TIMESTAMPTZ
);

CREATE TABLE oauth_tokens (
    token_hash  TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    key_id      TEXT NOT NULL REFERENCES api_keys (id),
    customer_id TEXT NOT NULL,
    grant_type  TEXT NOT NULL,
    family_id   TEXT NOT NULL,
    scope       TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    used_at     TIMESTAMPTZ,
    revoked_at  TIMESTAMPTZ
);
CREATE INDEX oauth_tokens_family ON oauth_tokens (family_id);
CREATE INDEX oauth_tokens_key ON oauth_tokens (key_id);

CREATE TABLE usage_daily (
    subscription_id TEXT NOT NULL REFERENCES subscriptions (id),
    day             TEXT NOT NULL,
    calls           BIGINT NOT NULL,
    PRIMARY KEY (subscription_id, day)
);

CREATE TABLE audit_log (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_id   TEXT NOT NULL,
    before      TEXT NOT NULL,
    after       TEXT NOT NULL
);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id);

CREATE TABLE mail_outbox (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recipient       TEXT NOT NULL,
    subject         TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    attempts        INTEGER NOT NULL,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    sent_at         TIMESTAMPTZ,
    last_error      TEXT NOT NULL
);
CREATE INDEX mail_outbox_due ON mail_outbox (sent_at, next_attempt_at);
