// Key management for signed-in account holders: list, create (the key is returned once), revoke. The
// console's own metering key is never listed and cannot be revoked. A key records who made it; a manage
// key never holds more than its maker may: only makers of manage keys (MANAGE_KEY_MAKERS) make one, and
// it is revoked in the batch that takes that role from its maker (src/teams/members.ts).
import { OPERATOR_MAKER } from '../db/statements.ts';
import { generateKey, hashKey, displayPrefix, newKeyId } from '../accounts/keys.ts';
import { iso } from '../accounts/account-view.ts';
import type { KeyRow } from '../accounts/records.ts';
import { refreshKeys } from '../accounts/refresh.ts';
import { hasScopeSql, parseScopes, type Scope } from '../accounts/tiers.ts';
import type { Env } from '../env.ts';
import { dayWindow } from '../metering/windows.ts';
import { roleMay, MANAGE_KEY_MAKERS, type Role } from '../teams/roles.ts';
import { pokeDispatcher } from '../webhooks/dispatcher-stub.ts';
import { keyEventStatement, makersKeyEventsStatement } from '../webhooks/key-events.ts';
import { appendAudit, batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import { MAX_ACTIVE_KEYS, MAX_KEYS_CREATED_PER_DAY } from './limits.ts';

/** Who made a key: a member (email null once they have left), the operator CLI, or unknown (made before keys recorded it). */
export interface KeyMaker {
  type: 'member' | 'operator' | 'unknown';
  id: string | null;
  email: string | null;
}

export interface ConsoleKey {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  created_by: KeyMaker;
}

type Row = Omit<KeyRow, 'account_id'> & { created_by: string | null; maker_email: string | null };

/** Who a new key records as its maker, and the role they act with (Principal's maker and role). */
export interface KeyCreator {
  role: Role;
  maker: string | null;
}

const COLUMNS =
  'k.id, k.name, k.prefix, k.scopes, k.created_at, k.last_used_at, k.revoked_at, k.created_by, m.email AS maker_email';
const FROM = 'api_keys k LEFT JOIN members m ON m.id = k.created_by AND m.account_id = k.account_id';
const MANAGE = hasScopeSql('scopes', 'manage');
/** SQL: maker `m` may hold manage keys of account `a`: the operator CLI, or a member with a role that makes them. */
const mayHoldManageKeys = (m: string, a: string): string =>
  `(${m} = '${OPERATOR_MAKER}' OR EXISTS (SELECT 1 FROM members WHERE id = ${m} AND account_id = ${a} AND role IN (${MANAGE_KEY_MAKERS.map((r) => `'${r}'`).join(', ')})))`;
const SQL = {
  list: `SELECT ${COLUMNS} FROM ${FROM} WHERE k.account_id = ? AND k.kind = 'api' ORDER BY k.created_at DESC, k.id`,
  one: `SELECT ${COLUMNS} FROM ${FROM} WHERE k.id = ? AND k.account_id = ? AND k.kind = 'api'`,
  // The counts, the maker's role and the insert are one statement, so two concurrent creations cannot both
  // pass a cap, and a manage key cannot be made by a maker demoted since the request's role check.
  insertCapped:
    `INSERT INTO api_keys (id, account_id, name, prefix, hash, scopes, created_at, kind, created_by) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, 'api', ?8 ` +
    `WHERE (SELECT COUNT(*) FROM api_keys WHERE account_id = ?2 AND kind = 'api' AND revoked_at IS NULL) < ?9 ` +
    `AND (SELECT COUNT(*) FROM api_keys WHERE account_id = ?2 AND kind = 'api' AND created_at >= ?10) < ?11 ` +
    `AND (?12 = 0 OR ${mayHoldManageKeys('?8', '?2')})`,
  // Which condition refused a creation, for the answer.
  counts:
    `SELECT (SELECT COUNT(*) FROM api_keys WHERE account_id = ?1 AND kind = 'api' AND revoked_at IS NULL) AS active, ` +
    `(SELECT COUNT(*) FROM api_keys WHERE account_id = ?1 AND kind = 'api' AND created_at >= ?2) AS today, ` +
    `${mayHoldManageKeys('?3', '?1')} AS maker_ok`,
  revoke: `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND account_id = ? AND kind = 'api' AND revoked_at IS NULL`,
  activeManageKeysOf: `SELECT id FROM api_keys WHERE account_id = ? AND created_by = ? AND kind = 'api' AND revoked_at IS NULL AND ${MANAGE} ORDER BY id`,
  // ?1 account, ?2 member, ?3 time. After the batch's member change: only when it took the role away.
  revokeMakers:
    `UPDATE api_keys SET revoked_at = ?3 WHERE account_id = ?1 AND created_by = ?2 AND kind = 'api' AND revoked_at IS NULL ` +
    `AND ${MANAGE} AND NOT ${mayHoldManageKeys('?2', '?1')}`,
  revokedMakersKeys: `SELECT id FROM api_keys WHERE account_id = ? AND created_by = ? AND revoked_at = ? AND ${MANAGE} ORDER BY id`,
  consoleHash: `SELECT hash FROM api_keys WHERE account_id = ? AND kind = 'console'`,
  insertConsole:
    `INSERT INTO api_keys (id, account_id, name, prefix, hash, scopes, created_at, kind) VALUES (?, ?, 'Try it (web console)', ?, ?, 'image', ?, 'console') ` +
    `ON CONFLICT DO NOTHING`,
} as const;

function makerOf(createdBy: string | null, email: string | null): KeyMaker {
  if (createdBy === null) return { type: 'unknown', id: null, email: null };
  if (createdBy === OPERATOR_MAKER) return { type: 'operator', id: null, email: null };
  return { type: 'member', id: createdBy, email };
}

function view(row: Row): ConsoleKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: parseScopes(row.scopes),
    created_at: iso(row.created_at) as string,
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
    created_by: makerOf(row.created_by, row.maker_email),
  };
}

export async function listKeys(db: D1Database, accountId: string): Promise<ConsoleKey[]> {
  const rows = await db.prepare(SQL.list).bind(accountId).all<Row>();
  return rows.results.map(view);
}

export type CreateOutcome =
  | { ok: true; key: ConsoleKey & { key: string } }
  /** A manage key asked for by a role that does not make them. */
  | { ok: false; reason: 'forbidden' }
  /** A manage key asked for by a caller whose maker is no longer an owner or admin (demoted since the role check). */
  | { ok: false; reason: 'maker_lost_role' }
  | { ok: false; reason: 'too_many_keys'; max: number }
  /** The day's creations are used up; `reset` is the next 00:00 UTC (Unix ms). */
  | { ok: false; reason: 'too_many_today'; max: number; reset: number };

/**
 * Creates a key within the caps, recording its maker. The key.created webhook event is written in the same
 * D1 batch (only when the key row was), then handed to the account's dispatcher.
 */
export async function createKey(
  env: Env,
  accountId: string,
  input: { name: string; scopes: Scope[] },
  by: KeyCreator,
  now: number,
  origin: AuditOrigin,
): Promise<CreateOutcome> {
  const manage = input.scopes.includes('manage');
  if (manage && !roleMay(by.role, 'keys:manage')) return { ok: false, reason: 'forbidden' };
  const db = env.DB;
  const secret = generateKey();
  const id = newKeyId();
  const prefix = displayPrefix(secret);
  const scopes = input.scopes.join(',');
  const day = dayWindow(now);
  // The audit record too, written only when the capped insert made the key.
  const [result, recorded, made] = await batchWithAudit<Row>(
    db,
    [
      db
        .prepare(SQL.insertCapped)
        .bind(
          id,
          accountId,
          input.name,
          prefix,
          await hashKey(secret),
          scopes,
          now,
          by.maker,
          MAX_ACTIVE_KEYS,
          day.start,
          MAX_KEYS_CREATED_PER_DAY,
          manage ? 1 : 0,
        ),
      keyEventStatement(db, 'created', accountId, id, now),
      db.prepare(SQL.one).bind(id, accountId),
    ],
    origin,
    { accountId, action: 'key.created', target: id, details: { name: input.name, scopes: input.scopes } },
    now,
    {
      sql: 'EXISTS (SELECT 1 FROM api_keys WHERE id = ?)',
      params: [id],
    },
  );
  const row = made?.results[0];
  if (result?.meta.changes !== 1 || !row) {
    const counts = await db
      .prepare(SQL.counts)
      .bind(accountId, day.start, by.maker)
      .first<{ active: number; today: number; maker_ok: number }>();
    if (manage && !counts?.maker_ok) return { ok: false, reason: 'maker_lost_role' };
    if ((counts?.active ?? 0) >= MAX_ACTIVE_KEYS) return { ok: false, reason: 'too_many_keys', max: MAX_ACTIVE_KEYS };
    return { ok: false, reason: 'too_many_today', max: MAX_KEYS_CREATED_PER_DAY, reset: day.end };
  }
  if (recorded?.meta.changes === 1) await pokeDispatcher(env, accountId);
  return { ok: true, key: { ...view(row), key: secret } };
}

/** Revokes one of the account's keys (a no-op when it already is); null when it is not theirs or unknown. */
export async function revokeKey(
  env: Env,
  accountId: string,
  keyId: string,
  now: number,
  origin: AuditOrigin,
): Promise<ConsoleKey | null> {
  // The key.revoked event and audit record, in the same transaction: only when this UPDATE revoked the key.
  const [update, recorded, select] = await batchWithAudit<Row>(
    env.DB,
    [
      env.DB.prepare(SQL.revoke).bind(now, keyId, accountId),
      keyEventStatement(env.DB, 'revoked', accountId, keyId, now),
      env.DB.prepare(SQL.one).bind(keyId, accountId),
    ],
    origin,
    { accountId, action: 'key.revoked', target: keyId },
    now,
    {
      sql: "EXISTS (SELECT 1 FROM api_keys WHERE id = ? AND account_id = ? AND kind = 'api' AND revoked_at = ?)",
      params: [keyId, accountId, now],
    },
  );
  const row = select?.results[0];
  if (!row) return null;
  // The key's Durable Object caches its state: tell it first, so the very next request is refused
  // (the webhook hand-off may wait; the outbox sweep covers it if it fails).
  if (update?.meta.changes === 1) await refreshKeys(env, { keyIds: [keyId] });
  if (recorded?.meta.changes === 1) await pokeDispatcher(env, accountId);
  return view(row);
}

/** The member's active manage keys: those a change that takes away their role would revoke. */
export async function activeManageKeysOf(db: D1Database, accountId: string, memberId: string): Promise<string[]> {
  return (await db.prepare(SQL.activeManageKeysOf).bind(accountId, memberId).all<{ id: string }>()).results.map(
    (r) => r.id,
  );
}

/**
 * For the batch that changes a member's role or removes them, after that change: revokes the manage keys
 * the member made, with their key.revoked events, when the change left the member without a role that
 * makes manage keys (a refused change, or a promotion, revokes nothing). By maker, not by a list read
 * earlier, so a key made meanwhile goes too.
 */
export function makersKeysRevoked(
  db: D1Database,
  accountId: string,
  memberId: string,
  now: number,
): D1PreparedStatement[] {
  return [
    db.prepare(SQL.revokeMakers).bind(accountId, memberId, now),
    makersKeyEventsStatement(db, accountId, memberId, now),
  ];
}

/**
 * After that batch: the revoked keys' Durable Objects drop their cached state, so the very next request
 * with one is refused; the events go to the dispatcher. The batch's audit record lists `listed` (read
 * before it); a key made between that read and the batch gets a key.revoked record of its own here.
 */
export async function settleMakersKeys(
  env: Env,
  accountId: string,
  memberId: string,
  listed: string[],
  now: number,
  origin: AuditOrigin,
): Promise<string[]> {
  const revoked = (
    await env.DB.prepare(SQL.revokedMakersKeys).bind(accountId, memberId, now).all<{ id: string }>()
  ).results.map((r) => r.id);
  if (revoked.length === 0) return revoked;
  await refreshKeys(env, { keyIds: revoked });
  for (const id of revoked.filter((k) => !listed.includes(k))) {
    await appendAudit(
      env.DB,
      origin,
      { accountId, action: 'key.revoked', target: id, details: { maker: memberId } },
      now,
    );
  }
  await pokeDispatcher(env, accountId);
  return revoked;
}

/**
 * The hash that names the account's console meter, made on first use. Its secret is discarded at once:
 * the meter authenticates by hash, and nobody can present this key to the API.
 */
export async function consoleKeyHash(db: D1Database, accountId: string, now: number): Promise<string> {
  const existing = await db.prepare(SQL.consoleHash).bind(accountId).first<{ hash: string }>();
  if (existing) return existing.hash;
  const secret = generateKey();
  await db
    .prepare(SQL.insertConsole)
    .bind(newKeyId(), accountId, displayPrefix(secret), await hashKey(secret), now)
    .run();
  // Re-read: a concurrent first use may have won the unique index.
  const row = await db.prepare(SQL.consoleHash).bind(accountId).first<{ hash: string }>();
  if (!row) throw new Error('console key could not be created');
  return row.hash;
}
