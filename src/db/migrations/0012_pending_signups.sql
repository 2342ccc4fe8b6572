-- Sign-ups waiting for their mailed link (docs/console.md, "Email verification and password reset"). A console
-- sign-up no longer makes an account: it stores what was typed here until the link is used, and the account
-- (with its owner member, verified) is made then. So a sign-up holds no address (anyone may sign up with any
-- address: until its mailbox answers, nothing is claimed) and sign-in cannot tell a pending address from a
-- free one. Several pending sign-ups may name one address (the owner's and a stranger's); the first link
-- used makes the account and removes them all.
CREATE TABLE pending_signups (
  token_hash     TEXT PRIMARY KEY,   -- SHA-256 of the mailed link's token; a new one on "send again"
  email          TEXT NOT NULL,
  name           TEXT NOT NULL,
  password_hash  TEXT NOT NULL,
  created_at     INTEGER NOT NULL,   -- Unix ms
  expires_at     INTEGER NOT NULL,   -- the link's end (VERIFY_LINK_TTL_MS after it was mailed)
  claim          TEXT                -- set by the one request that uses the link (as email_tokens.claim)
);
CREATE INDEX pending_signups_email ON pending_signups (email COLLATE NOCASE, created_at);
CREATE INDEX pending_signups_expiry ON pending_signups (expires_at);
