-- Webhooks: the endpoints an account registers, and the outbox of events born of a D1 change.
-- Events born in a Durable Object (usage thresholds, first 429s) are recorded in that object's own SQLite
-- storage instead; both kinds end in the account's WebhookDispatcher, which holds the delivery schedule.

-- `secret` is kept in clear: signing needs it (Standard Webhooks uses HMAC, not a public key). It is shown
-- to the account holder only when it is made (create, rotate-secret).
CREATE TABLE webhook_endpoints (
  id               TEXT PRIMARY KEY,
  account_id       TEXT NOT NULL REFERENCES accounts (id),
  url              TEXT NOT NULL,
  description      TEXT NOT NULL DEFAULT '',
  events           TEXT NOT NULL,             -- comma list of event types
  secret           TEXT NOT NULL,             -- whsec_<base64>
  enabled          INTEGER NOT NULL DEFAULT 1,
  disabled_reason  TEXT,                      -- why it was switched off (by its owner or after failing for 5 days)
  failing_since    INTEGER,                   -- first failed attempt since the last success; NULL when healthy
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at);

-- key.created and key.revoked, inserted in the same D1 batch as the key row they describe, so an event
-- exists exactly when its change does. The dispatcher copies a row into its own storage and then deletes
-- it here; rows left behind (the hand-off failed) are swept by the cron trigger.
CREATE TABLE webhook_outbox (
  id          TEXT PRIMARY KEY,               -- the message id (webhook-id header), fixed per event
  account_id  TEXT NOT NULL,
  type        TEXT NOT NULL,
  body        TEXT NOT NULL,                  -- the JSON body exactly as it will be signed and sent
  created_at  INTEGER NOT NULL
);
CREATE INDEX webhook_outbox_account ON webhook_outbox (account_id, created_at);
CREATE INDEX webhook_outbox_age ON webhook_outbox (created_at);
