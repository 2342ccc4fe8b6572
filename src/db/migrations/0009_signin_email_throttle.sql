-- The per-email sign-in throttle (src/auth/throttle.ts, emailGate): one row per email that failed to sign
-- in, whatever addresses the attempts came from, so no client header can reset it. Every attempt is
-- counted before the password is checked (as a failure until it succeeds, which deletes the row), so
-- concurrent guesses cannot slip past the limit. The per-account delay rows of auth_throttle
-- ('signin-failures:…') it replaces are pruned there within a day.
CREATE TABLE signin_email_throttle (
  email          TEXT PRIMARY KEY,   -- trimmed and lower-cased
  attempts       INTEGER NOT NULL,   -- attempts counted since `since`, none of them successful
  since          INTEGER NOT NULL,   -- ms: the first attempt counted
  blocked_until  INTEGER NOT NULL    -- ms: every attempt before this is refused (0: none)
);
CREATE INDEX signin_email_throttle_age ON signin_email_throttle (blocked_until, since);
