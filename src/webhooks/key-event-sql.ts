// key.created and key.revoked: D1 statements that go into the same batch as the key row's change, so the
// event is recorded exactly when the change is (a D1 batch is one transaction). Each is written only when
// the account can use webhooks (tools tier) and has an enabled endpoint that listens for the type: the
// outbox holds nothing nobody will receive. Ids are fixed per key, so a repeated statement adds nothing.
import { tiersWith } from '../accounts/entitlements.ts';
import { hasScopeSql } from '../accounts/tiers.ts';

/** The tools tiers with webhooks, as an SQL list (fixed words, safe to splice). */
const WEBHOOK_TIERS_SQL = tiersWith('webhooks')
  .map((t) => `'${t}'`)
  .join(', ');

/** An enabled endpoint of account ?1 listens for the type ?2, and the account's tier has webhooks. */
const SUBSCRIBED =
  `EXISTS (SELECT 1 FROM webhook_endpoints e JOIN accounts a ON a.id = e.account_id WHERE e.account_id = ?1 ` +
  `AND e.enabled = 1 AND instr(',' || e.events || ',', ',' || ?2 || ',') > 0 AND a.tools_tier IN (${WEBHOOK_TIERS_SQL}))`;

/** The key as events describe it, built from the row; scopes are a fixed word list, safe to splice. */
const KEY_JSON =
  `json_object('key_id', k.id, 'name', k.name, 'prefix', k.prefix, ` +
  `'scopes', json('["' || replace(k.scopes, ',', '","') || '"]'), ` +
  `'created_at', strftime('%Y-%m-%dT%H:%M:%fZ', k.created_at / 1000.0, 'unixepoch'))`;

export const KEY_EVENT_SQL = {
  // ?1 account, ?2 type, ?3 key id, ?4 ISO time of the event, ?5 ms time.
  created:
    `INSERT OR IGNORE INTO webhook_outbox (id, account_id, type, body, created_at) ` +
    `SELECT 'msg_' || k.id || '_created', k.account_id, ?2, ` +
    `json_object('type', ?2, 'timestamp', ?4, 'data', ${KEY_JSON}), ?5 ` +
    `FROM api_keys k WHERE k.id = ?3 AND k.account_id = ?1 AND ${SUBSCRIBED}`,
  // Only when this key is revoked at exactly this time: the batch's own UPDATE did it.
  revoked:
    `INSERT OR IGNORE INTO webhook_outbox (id, account_id, type, body, created_at) ` +
    `SELECT 'msg_' || k.id || '_revoked', k.account_id, ?2, ` +
    `json_object('type', ?2, 'timestamp', ?4, 'data', json_patch(${KEY_JSON}, json_object('revoked_at', ?4))), ?5 ` +
    `FROM api_keys k WHERE k.id = ?3 AND k.account_id = ?1 AND k.revoked_at = ?5 AND ${SUBSCRIBED}`,
} as const;

/**
 * key.revoked for every manage key of one maker (?3, a member id) revoked at exactly ?5: the batch that
 * removed or demoted that member did it. Parameters as KEY_EVENT_SQL.
 */
export const MAKERS_KEYS_REVOKED_SQL = KEY_EVENT_SQL.revoked.replace(
  'k.id = ?3',
  `k.created_by = ?3 AND ${hasScopeSql('k.scopes', 'manage')}`,
);

/**
 * The statement for the operator CLI, which knows the key but not always its account: the account is
 * read from the key row in the same statement. Parameters as KEY_EVENT_SQL (?1 unused).
 */
export function keyEventSqlByKey(kind: 'created' | 'revoked'): string {
  return KEY_EVENT_SQL[kind].replaceAll('?1', '(SELECT account_id FROM api_keys WHERE id = ?3)');
}
