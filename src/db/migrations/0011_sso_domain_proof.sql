-- SSO domains are proved before they route anyone (docs/teams.md, "Proving a domain"), and an existing
-- member is linked to an SSO identity only after proving their password or mailbox.

-- A claim of an email domain by an account's SSO, with the TXT record that proves it. Several accounts may
-- claim a domain while none has proved it (so nobody can squat on a domain by naming it first); once one
-- has, the partial unique index keeps every other from proving it. Only a verified claim routes sign-ins
-- to SSO, blocks sign-ups and makes members. Claims made before this migration were never proved: they
-- start unverified, with a fresh value to publish.
CREATE TABLE sso_domains_proved (
  domain       TEXT NOT NULL,
  account_id   TEXT NOT NULL REFERENCES accounts (id),
  txt_value    TEXT NOT NULL,                    -- published at _shrinkray-challenge.<domain>
  verified_at  INTEGER,                          -- null until the record was seen
  checked_at   INTEGER,                          -- the last lookup (the scheduled recheck goes oldest first)
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (domain, account_id)
);
INSERT INTO sso_domains_proved (domain, account_id, txt_value, created_at)
  SELECT domain, account_id, 'shrinkray-verify=' || lower(hex(randomblob(20))), CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM sso_domains;
DROP TABLE sso_domains;
ALTER TABLE sso_domains_proved RENAME TO sso_domains;
CREATE UNIQUE INDEX sso_domains_verified ON sso_domains (domain) WHERE verified_at IS NOT NULL;
CREATE INDEX sso_domains_account ON sso_domains (account_id);
CREATE INDEX sso_domains_unverified ON sso_domains (checked_at) WHERE verified_at IS NULL;

-- An SSO sign-in that found an existing, unlinked member: the issuer's subject waits here until the person
-- proves the member is theirs (the password on the page, or a link mailed to the member's address). The
-- browser holds the token (a cookie), D1 its SHA-256; the mailed link's token likewise. Single use: the
-- row is deleted by the request that links.
CREATE TABLE sso_link_proofs (
  token_hash       TEXT PRIMARY KEY,
  member_id        TEXT NOT NULL,
  account_id       TEXT NOT NULL,
  subject          TEXT NOT NULL,
  next             TEXT,
  mail_token_hash  TEXT,
  created_at       INTEGER NOT NULL,
  expires_at       INTEGER NOT NULL
);
CREATE INDEX sso_link_proofs_expiry ON sso_link_proofs (expires_at);
CREATE INDEX sso_link_proofs_mail ON sso_link_proofs (mail_token_hash);
