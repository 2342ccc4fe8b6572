// Key management for signed-in account holders: list, create (the key is returned once), revoke. The
// console's own metering key is never listed and cannot be revoked.
import { generateKey, hashKey, displayPrefix, newKeyId } from '../accounts/keys.ts';
import { iso } from '../accounts/account-view.ts';
import type { KeyRow } from '../accounts/records.ts';
import { refreshKeys } from '../accounts/refresh.ts';
import { parseScopes, type Scope } from '../accounts/tiers.ts';
import type { Env } from '../env.ts';
import { dayWindow } from '../metering/windows.ts';
import { pokeDispatcher } from '../webhooks/dispatcher-stub.ts';
import { keyEventStatement } from '../webhooks/key-events.ts';
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import { MAX_ACTIVE_KEYS } from './limits.ts';

/**
 * Keys an account may create per UTC day, revoked ones included, so revoking and re-creating keys
 * cannot churn without bound (each key is a Durable Object and a D1 row). Above MAX_ACTIVE_KEYS, so a
 * new account can fill its keys in a day and still replace a few. The operator CLI is not capped.
 */
export const MAX_KEYS_CREATED_PER_DAY = 25;

export interface ConsoleKey {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

type Row = Omit<KeyRow, 'account_id'>;

const COLUMNS = 'id, name, prefix, scopes, created_at, last_used_at, revoked_at';
const SQL = {
  list: `SELECT ${COLUMNS} FROM api_keys WHERE account_id = ? AND kind = 'api' ORDER BY created_at DESC, id`,
  one: `SELECT ${COLUMNS} FROM api_keys WHERE id = ? AND account_id = ? AND kind = 'api'`,
  // The counts and the insert are one statement, so two concurrent creations cannot both pass a cap.
  insertCapped:
    `INSERT INTO api_keys (id, account_id, name, prefix, hash, scopes, created_at, kind) SELECT ?, ?, ?, ?, ?, ?, ?, 'api' ` +
    `WHERE (SELECT COUNT(*) FROM api_keys WHERE account_id = ? AND kind = 'api' AND revoked_at IS NULL) < ? ` +
    `AND (SELECT COUNT(*) FROM api_keys WHERE account_id = ? AND kind = 'api' AND created_at >= ?) < ?`,
  // Which cap refused a creation, for the answer.
  counts:
    `SELECT (SELECT COUNT(*) FROM api_keys WHERE account_id = ?1 AND kind = 'api' AND revoked_at IS NULL) AS active, ` +
    `(SELECT COUNT(*) FROM api_keys WHERE account_id = ?1 AND kind = 'api' AND created_at >= ?2) AS today`,
  revoke: `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND account_id = ? AND kind = 'api' AND revoked_at IS NULL`,
  consoleHash: `SELECT hash FROM api_keys WHERE account_id = ? AND kind = 'console'`,
  insertConsole:
    `INSERT INTO api_keys (id, account_id, name, prefix, hash, scopes, created_at, kind) VALUES (?, ?, 'Try it (web console)', ?, ?, 'image', ?, 'console') ` +
    `ON CONFLICT DO NOTHING`,
} as const;

function view(row: Row): ConsoleKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: parseScopes(row.scopes),
    created_at: iso(row.created_at) as string,
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}

export async function listKeys(db: D1Database, accountId: string): Promise<ConsoleKey[]> {
  const rows = await db.prepare(SQL.list).bind(accountId).all<Row>();
  return rows.results.map(view);
}

export type CreateOutcome =
  | { ok: true; key: ConsoleKey & { key: string } }
  | { ok: false; reason: 'too_many_keys'; max: number }
  /** The day's creations are used up; `reset` is the next 00:00 UTC (Unix ms). */
  | { ok: false; reason: 'too_many_today'; max: number; reset: number };

/**
 * Creates a key within the caps. The key.created webhook event is written in the same D1 batch (only when
 * the key row was), then handed to the account's dispatcher.
 */
export async function createKey(env: Env, accountId: string, input: { name: string; scopes: Scope[] }, now: number, origin: AuditOrigin): Promise<CreateOutcome> {
  const db = env.DB;
  const secret = generateKey();
  const id = newKeyId();
  const prefix = displayPrefix(secret);
  const scopes = input.scopes.join(',');
  const day = dayWindow(now);
  // The audit record too, written only when the capped insert made the key.
  const [result, recorded] = await batchWithAudit(db, [
    db
      .prepare(SQL.insertCapped)
      .bind(id, accountId, input.name, prefix, await hashKey(secret), scopes, now, accountId, MAX_ACTIVE_KEYS, accountId, day.start, MAX_KEYS_CREATED_PER_DAY),
    keyEventStatement(db, 'created', accountId, id, now),
  ], origin, { accountId, action: 'key.created', target: id, details: { name: input.name, scopes: input.scopes } }, now, {
    sql: 'EXISTS (SELECT 1 FROM api_keys WHERE id = ?)', params: [id],
  });
  if (result?.meta.changes !== 1) {
    const counts = await db.prepare(SQL.counts).bind(accountId, day.start).first<{ active: number; today: number }>();
    if ((counts?.active ?? 0) >= MAX_ACTIVE_KEYS) return { ok: false, reason: 'too_many_keys', max: MAX_ACTIVE_KEYS };
    return { ok: false, reason: 'too_many_today', max: MAX_KEYS_CREATED_PER_DAY, reset: day.end };
  }
  if (recorded?.meta.changes === 1) await pokeDispatcher(env, accountId);
  const created = view({ id, name: input.name, prefix, scopes, created_at: now, last_used_at: null, revoked_at: null });
  return { ok: true, key: { ...created, key: secret } };
}

/** Revokes one of the account's keys (a no-op when it already is); null when it is not theirs or unknown. */
export async function revokeKey(env: Env, accountId: string, keyId: string, now: number, origin: AuditOrigin): Promise<ConsoleKey | null> {
  // The key.revoked event and audit record, in the same transaction: only when this UPDATE revoked the key.
  const [update, recorded, select] = await batchWithAudit<Row>(env.DB, [
    env.DB.prepare(SQL.revoke).bind(now, keyId, accountId),
    keyEventStatement(env.DB, 'revoked', accountId, keyId, now),
    env.DB.prepare(SQL.one).bind(keyId, accountId),
  ], origin, { accountId, action: 'key.revoked', target: keyId }, now, {
    sql: "EXISTS (SELECT 1 FROM api_keys WHERE id = ? AND account_id = ? AND kind = 'api' AND revoked_at = ?)", params: [keyId, accountId, now],
  });
  const row = select?.results[0];
  if (!row) return null;
  // The key's Durable Object caches its state: tell it first, so the very next request is refused
  // (the webhook hand-off may wait; the outbox sweep covers it if it fails).
  if (update?.meta.changes === 1) await refreshKeys(env, { keyIds: [keyId] });
  if (recorded?.meta.changes === 1) await pokeDispatcher(env, accountId);
  return view(row);
}

/**
 * The hash that names the account's console meter, made on first use. Its secret is discarded at once:
 * the meter authenticates by hash, and nobody can present this key to the API.
 */
export async function consoleKeyHash(db: D1Database, accountId: string, now: number): Promise<string> {
  const existing = await db.prepare(SQL.consoleHash).bind(accountId).first<{ hash: string }>();
  if (existing) return existing.hash;
  const secret = generateKey();
  await db.prepare(SQL.insertConsole).bind(newKeyId(), accountId, displayPrefix(secret), await hashKey(secret), now).run();
  // Re-read: a concurrent first use may have won the unique index.
  const row = await db.prepare(SQL.consoleHash).bind(accountId).first<{ hash: string }>();
  if (!row) throw new Error('console key could not be created');
  return row.hash;
}
