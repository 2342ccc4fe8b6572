-- Accounts own tiers; keys own scopes. Times are Unix milliseconds (UTC).
CREATE TABLE accounts (
  id          TEXT PRIMARY KEY,
  email       TEXT NOT NULL,
  name        TEXT NOT NULL,
  image_tier  TEXT NOT NULL DEFAULT 'free' CHECK (image_tier IN ('free', 'pro')),
  tools_tier  TEXT NOT NULL DEFAULT 'free' CHECK (tools_tier IN ('free', 'developer', 'enterprise')),
  created_at  INTEGER NOT NULL
);
-- Emails are unique regardless of case: Foo@x.com and foo@x.com are one person.
CREATE UNIQUE INDEX accounts_email_unique ON accounts (email COLLATE NOCASE);

CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,
  account_id    TEXT NOT NULL REFERENCES accounts (id),
  name          TEXT NOT NULL,
  prefix        TEXT NOT NULL,
  hash          TEXT NOT NULL,          -- hex SHA-256 of the full key; the key itself is never stored
  scopes        TEXT NOT NULL,          -- comma list: image, tools
  created_at    INTEGER NOT NULL,
  last_used_at  INTEGER,
  revoked_at    INTEGER
);
-- Authentication looks keys up by hash; listing looks them up by account.
CREATE UNIQUE INDEX api_keys_hash_unique ON api_keys (hash);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);
