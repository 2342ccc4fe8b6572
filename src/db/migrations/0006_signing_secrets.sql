-- Signed image URLs: the secrets an account signs its image URLs with. At most two exist at a
-- time (src/signing/limits.ts), so a new one can be deployed before the old one is deleted. Deleting is
-- the end of a secret's grace period: its URLs are refused from the next request on.

-- `secret` is kept in clear: verifying an HMAC needs it. It is shown to the account holder only when made.
CREATE TABLE signing_secrets (
  id          TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts (id),
  secret      TEXT NOT NULL,
  created_at  INTEGER NOT NULL
);
CREATE INDEX signing_secrets_account ON signing_secrets (account_id, created_at);

-- The hosts an account's image URLs may fetch from (exact names, or `*.example.com` for its subdomains).
-- None: any host the URL rules allow.
CREATE TABLE image_source_hosts (
  account_id  TEXT NOT NULL REFERENCES accounts (id),
  host        TEXT NOT NULL,
  PRIMARY KEY (account_id, host)
);
