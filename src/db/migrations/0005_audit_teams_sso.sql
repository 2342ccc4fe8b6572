-- Enterprise: the audit log. Teams and SSO follow below.

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


-- Teams: an account has members, each a person with a role. A person belongs to one account, so an email
-- names one member everywhere (sign-in finds the account from it).
CREATE TABLE members (
  id             TEXT PRIMARY KEY,                -- mem_<16>; an account's first owner is mem_ + its account id's 16
  account_id     TEXT NOT NULL REFERENCES accounts (id),
  email          TEXT NOT NULL,
  name           TEXT NOT NULL,
  role           TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  password_hash  TEXT,                            -- as accounts.password_hash; NULL: SSO only, or not yet set
  sso_subject    TEXT,                            -- the issuer's `sub`, once the member has signed in by SSO
  created_at     INTEGER NOT NULL
);
CREATE UNIQUE INDEX members_email_unique ON members (email COLLATE NOCASE);
CREATE INDEX members_account ON members (account_id, created_at);

-- Every existing account's person becomes its owner, with the password they have.
INSERT INTO members (id, account_id, email, name, role, password_hash, created_at)
  SELECT 'mem_' || substr(id, 5), id, email, name, 'owner', password_hash, created_at FROM accounts;

-- And every new account's (console sign-up, operator CLI, tests) in the statement that makes it, so no
-- account is ever without an owner.
CREATE TRIGGER accounts_owner AFTER INSERT ON accounts
BEGIN
  INSERT INTO members (id, account_id, email, name, role, password_hash, created_at)
    VALUES ('mem_' || substr(new.id, 5), new.id, new.email, new.name, 'owner', new.password_hash, new.created_at);
END;

-- A session is one member's; existing ones become their account owner's.
ALTER TABLE sessions ADD COLUMN member_id TEXT REFERENCES members (id);
UPDATE sessions SET member_id = 'mem_' || substr(account_id, 5);

-- Invitations: a single-use link (its token's SHA-256 here, never the token) that expires in 7 days.
-- member_id is set by the one acceptance that wins; the member row is inserted under that condition.
CREATE TABLE invitations (
  id           TEXT PRIMARY KEY,                  -- inv_<16>
  account_id   TEXT NOT NULL REFERENCES accounts (id),
  email        TEXT NOT NULL,
  role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  token_hash   TEXT NOT NULL UNIQUE,
  created_by   TEXT,                              -- mem_… or key_…
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  accepted_at  INTEGER,
  member_id    TEXT
);
CREATE INDEX invitations_account ON invitations (account_id, created_at);

-- Single sign-on (OpenID Connect), one configuration per account. The client secret is AES-GCM
-- ciphertext under the SSO_ENCRYPTION_KEY Worker secret (src/sso/secret.ts), never clear text.
CREATE TABLE sso_configs (
  account_id         TEXT PRIMARY KEY REFERENCES accounts (id),
  issuer             TEXT NOT NULL,
  client_id          TEXT NOT NULL,
  client_secret_enc  TEXT NOT NULL,               -- v1.<iv, base64url>.<ciphertext+tag, base64url>
  domains            TEXT NOT NULL,               -- comma list, lower case
  require_sso        INTEGER NOT NULL DEFAULT 0,
  updated_at         INTEGER NOT NULL
);
-- An email domain is covered by one account's SSO at most: sign-in goes from the email to the issuer.
CREATE TABLE sso_domains (
  domain      TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL REFERENCES accounts (id)
);
CREATE INDEX sso_domains_account ON sso_domains (account_id);

-- Sign-ins under way: the state's SHA-256 (the state travels in the URL), the PKCE verifier and the nonce.
-- Single use (deleted by the callback) and short-lived.
CREATE TABLE sso_logins (
  state_hash     TEXT PRIMARY KEY,
  account_id     TEXT NOT NULL,
  code_verifier  TEXT NOT NULL,
  nonce          TEXT NOT NULL,
  next           TEXT,
  created_at     INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL
);
CREATE INDEX sso_logins_expiry ON sso_logins (expires_at);
