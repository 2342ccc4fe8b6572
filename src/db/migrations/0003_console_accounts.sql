-- The web console: people sign in with an email and a password, hold sessions, and try the compressor
-- on a meter of their own. Accounts made by the operator CLI have no password until they sign up.

-- 'pbkdf2-sha256$<iterations>$<salt, base64>$<hash, base64>': the iteration count travels with each hash,
-- so raising it later re-hashes old passwords at their next sign-in instead of locking them out.
ALTER TABLE accounts ADD COLUMN password_hash TEXT;

-- 'console' is the one key per account that the "Try it" page meters against. Its secret is thrown away
-- at creation, so it can never be presented to the API; it exists so the same Durable Object metering
-- (tiers, monthly quota, daily usage) applies to the page.
ALTER TABLE api_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'api' CHECK (kind IN ('api', 'console'));
CREATE UNIQUE INDEX api_keys_console_unique ON api_keys (account_id) WHERE kind = 'console';

-- A session is found by the SHA-256 of its cookie token; the token itself is never stored.
CREATE TABLE sessions (
  token_hash  TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts (id),
  csrf_token  TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);
CREATE INDEX sessions_account ON sessions (account_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- Fixed-window counters of sign-in and sign-up attempts, per IP and per account (bucket names in
-- src/auth/throttle.ts). One upsert both counts and reads, so concurrent attempts cannot slip past.
CREATE TABLE auth_throttle (
  bucket        TEXT PRIMARY KEY,
  window_start  INTEGER NOT NULL,
  count         INTEGER NOT NULL
);
CREATE INDEX auth_throttle_window ON auth_throttle (window_start);
