-- Enterprise (issue 18): the audit log. Teams and SSO follow below.

-- One row per change of state or sign-in, per account. Append-only: the triggers below refuse every
-- UPDATE, and every DELETE of a row younger than AUDIT_RETENTION_DAYS (400, src/audit/limits.ts), so no
-- code path (nor a stray console query) can rewrite history. `hash` is SHA-256 over `prev_hash` and the
-- row's fields (src/audit/chain.ts), `prev_hash` the hash of the account's previous row (64 zeros for the
-- first): editing or removing a row breaks every hash after it.
CREATE TABLE audit_logs (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,    -- the order of the chain; AUTOINCREMENT never reuses one
  id          TEXT NOT NULL UNIQUE,                 -- aud_<16 base62>
  account_id  TEXT NOT NULL,
  time        INTEGER NOT NULL,                     -- Unix ms
  actor_type  TEXT NOT NULL CHECK (actor_type IN ('member', 'key', 'operator', 'anonymous')),
  actor_id    TEXT,                                 -- mem_…, key_…, or NULL (operator, anonymous)
  action      TEXT NOT NULL,                        -- key.created, session.signed_in, …
  target      TEXT,                                 -- what was acted on: key_…, wh_…, mem_…, acc_…
  ip          TEXT,
  user_agent  TEXT,
  result      TEXT NOT NULL CHECK (result IN ('success', 'failure')),
  details     TEXT,                                 -- JSON object or NULL
  prev_hash   TEXT NOT NULL,
  hash        TEXT NOT NULL
);
-- The chain cannot fork: two writers that read the same head both insert its hash as prev_hash, and the
-- second fails here, which rolls its whole batch (the change with it) back; the writer then retries.
CREATE UNIQUE INDEX audit_logs_chain ON audit_logs (account_id, prev_hash);
CREATE INDEX audit_logs_account ON audit_logs (account_id, seq);
CREATE INDEX audit_logs_action ON audit_logs (account_id, action, seq);

CREATE TRIGGER audit_logs_no_update BEFORE UPDATE ON audit_logs
BEGIN
  SELECT RAISE(ABORT, 'audit_logs is append-only: records are never updated');
END;
CREATE TRIGGER audit_logs_no_delete BEFORE DELETE ON audit_logs
WHEN old.time > (CAST(strftime('%s', 'now') AS INTEGER) - 400 * 86400) * 1000
BEGIN
  SELECT RAISE(ABORT, 'audit_logs is append-only: records are kept 400 days');
END;

