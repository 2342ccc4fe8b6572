// Deleting an account (owners only): every row that belongs to it goes in one D1 batch, with the
// account.deleted audit record. The audit log itself stays (append-only, kept AUDIT_RETENTION_DAYS), so
// the account's history outlives it for the operator. Then the keys' Durable Objects are told, so the
// very next request with a deleted key is refused, and the dispatcher drops the endpoints' deliveries.
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import type { Env } from '../env.ts';
import { keyMeter } from '../metering/key-meter-stub.ts';
import { dispatcher } from '../webhooks/dispatcher-stub.ts';

// Children before parents: D1 enforces the foreign keys.
const STATEMENTS = [
  'DELETE FROM sessions WHERE account_id = ?',
  'DELETE FROM invitations WHERE account_id = ?',
  'DELETE FROM members WHERE account_id = ?',
  'DELETE FROM sso_logins WHERE account_id = ?',
  'DELETE FROM sso_domains WHERE account_id = ?',
  'DELETE FROM sso_configs WHERE account_id = ?',
  'DELETE FROM webhook_outbox WHERE account_id = ?',
  'DELETE FROM webhook_endpoints WHERE account_id = ?',
  'DELETE FROM api_keys WHERE account_id = ?',
  'DELETE FROM accounts WHERE id = ?',
] as const;

export async function deleteAccount(env: Env, accountId: string, now: number, origin: AuditOrigin): Promise<boolean> {
  const db = env.DB;
  const account = await db
    .prepare('SELECT email, name FROM accounts WHERE id = ?')
    .bind(accountId)
    .first<{ email: string; name: string }>();
  if (!account) return false;
  // The hashes name the keys' Durable Objects; read before the rows go.
  const keys = await db
    .prepare('SELECT hash FROM api_keys WHERE account_id = ?')
    .bind(accountId)
    .all<{ hash: string }>();
  const endpoints = await db
    .prepare('SELECT id FROM webhook_endpoints WHERE account_id = ?')
    .bind(accountId)
    .all<{ id: string }>();
  await batchWithAudit(
    db,
    STATEMENTS.map((sql) => db.prepare(sql).bind(accountId)),
    origin,
    { accountId, action: 'account.deleted', target: accountId, details: { email: account.email, name: account.name } },
    now,
    {
      sql: 'NOT EXISTS (SELECT 1 FROM accounts WHERE id = ?)',
      params: [accountId],
    },
  );
  await Promise.all(keys.results.map((k) => keyMeter(env, k.hash).refresh()));
  for (const endpoint of endpoints.results) await dispatcher(env, accountId).forget(endpoint.id);
  return true;
}
