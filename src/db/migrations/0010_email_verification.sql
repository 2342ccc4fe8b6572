-- Email verification and password reset (docs/console.md): mailed single-use links.

-- Whether the member proved they read mail at their address. Everyone who exists now counts as verified, and
-- so does every member made later by the operator CLI, by SSO (the issuer verified the address) or by an
-- accepted invitation (it was mailed there): the default. Console sign-up alone makes an unverified member,
-- in the batch that makes the account (src/auth/accounts.ts); such a member cannot sign in until verified.
ALTER TABLE members ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 1 CHECK (email_verified IN (0, 1));

-- The mailed links: the SHA-256 of each link's token (the token itself is only in the mail). A link is used
-- by the one request that stamps `claim` with its own random value; what it changes is conditioned on that
-- stamp, so two requests with one link cannot both succeed. No foreign key: a removed member's links are
-- dead because the member is gone, and they are pruned when they expire.
CREATE TABLE email_tokens (
  token_hash  TEXT PRIMARY KEY,
  member_id   TEXT NOT NULL,
  purpose     TEXT NOT NULL CHECK (purpose IN ('verify', 'reset')),
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  claim       TEXT
);
CREATE INDEX email_tokens_member ON email_tokens (member_id, purpose);
CREATE INDEX email_tokens_expiry ON email_tokens (expires_at);
