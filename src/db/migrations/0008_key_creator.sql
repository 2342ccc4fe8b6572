-- Keys record who made them, so that a key never holds more than its maker may. A `manage` key acts as an
-- admin: only owners and admins make one, and it is revoked in the batch that removes its maker or demotes
-- them below admin (src/teams/members.ts). Image and tools keys belong to the account and stay.
--   created_by: 'mem_…'     a member: the signed-in one, or the member recorded on the manage key that made it
--               'operator'  the operator CLI (no member: its manage keys act as admin and stay)
--               NULL        unknown: a key made before this migration whose maker the audit log does not name
ALTER TABLE api_keys ADD COLUMN created_by TEXT;
CREATE INDEX api_keys_created_by ON api_keys (created_by) WHERE created_by IS NOT NULL;

-- Existing keys: the maker is the actor of the key's key.created audit record; a key made by a manage key
-- takes that key's maker, followed up the chain of keys.
WITH RECURSIVE made (key_id, actor_type, actor_id, depth) AS (
  SELECT target, actor_type, actor_id, 0 FROM audit_logs WHERE action = 'key.created' AND result = 'success'
  UNION ALL
  SELECT made.key_id, a.actor_type, a.actor_id, made.depth + 1
  FROM made JOIN audit_logs a ON a.action = 'key.created' AND a.result = 'success' AND a.target = made.actor_id
  WHERE made.actor_type = 'key' AND made.depth < 100
)
UPDATE api_keys SET created_by = (
  SELECT CASE made.actor_type WHEN 'member' THEN made.actor_id ELSE 'operator' END FROM made
  WHERE made.key_id = api_keys.id AND made.actor_type IN ('member', 'operator') ORDER BY made.depth LIMIT 1
) WHERE kind = 'api';

-- An existing manage key whose maker is unknown, gone, or no longer an owner or admin would hold more than
-- its maker may (a developer's manage key is how a developer became an admin): it is revoked. Unknown ones
-- too, though most were made by an owner before teams existed: the audit log cannot tell them from a
-- developer's whose record has aged out, and an owner or admin makes a new one in a minute. A key's Durable
-- Object re-reads D1 within KEY_STATE_TTL_MS (a minute), so the revocation binds by then. No audit record:
-- SQL cannot extend the hash chain (SHA-256); revoked_at is the trace.
UPDATE api_keys SET revoked_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000
WHERE kind = 'api' AND revoked_at IS NULL AND instr(',' || scopes || ',', ',manage,') > 0
  AND (created_by IS NULL OR (created_by <> 'operator' AND NOT EXISTS (
    SELECT 1 FROM members m WHERE m.id = api_keys.created_by AND m.account_id = api_keys.account_id AND m.role IN ('owner', 'admin'))));
