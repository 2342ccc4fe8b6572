// The account's webhook endpoints in D1: create (within MAX_ENDPOINTS_PER_ACCOUNT, checked in the
// inserting statement), list, read, update, delete, rotate the secret. The secret leaves this module only
// in the answers of create and rotate.
import { randomBase62 } from '../accounts/keys.ts';
import { iso } from '../accounts/account-view.ts';
import { EVENT_TYPES, type EventType } from './events.ts';
import { MAX_ENDPOINTS_PER_ACCOUNT } from './limits.ts';
import { newSecret } from './signing.ts';
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import type { Env } from '../env.ts';

/** Who acts, on which account, when, and from where (for the audit log): every change to an endpoint. */
export interface WebhookCaller {
  env: Env;
  accountId: string;
  now: number;
  origin: AuditOrigin;
}

export interface EndpointView {
  id: string;
  url: string;
  description: string;
  events: EventType[];
  enabled: boolean;
  /** Why the endpoint is off: its owner switched it off, or it failed for 5 days. null while enabled. */
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** What the dispatcher needs to deliver. */
export interface EndpointTarget {
  id: string;
  url: string;
  secret: string;
  events: EventType[];
  enabled: boolean;
}

interface Row {
  id: string;
  url: string;
  description: string;
  events: string;
  secret: string;
  enabled: number;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
}

export const DISABLED_BY_OWNER = 'disabled by its owner';

const COLUMNS = 'id, url, description, events, secret, enabled, disabled_reason, created_at, updated_at';
const SQL = {
  insertCapped:
    `INSERT INTO webhook_endpoints (id, account_id, url, description, events, secret, enabled, created_at, updated_at) ` +
    `SELECT ?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?7 WHERE (SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = ?2) < ?8`,
  list: `SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ? ORDER BY created_at, id`,
  one: `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ? AND account_id = ?`,
  // ?6 is the patch's `enabled` (1, 0, or NULL when not given). Enabled state and reason are worked out
  // here, on the row as it is, so an edit cannot undo an automatic disable that landed meanwhile.
  // Only switching a disabled endpoint on clears the failure streak (SET sees the row as it was).
  update:
    `UPDATE webhook_endpoints SET url = ?3, description = ?4, events = ?5, ` +
    `enabled = CASE WHEN ?6 IS NULL THEN enabled ELSE ?6 END, ` +
    `disabled_reason = CASE WHEN ?6 IS NULL THEN disabled_reason WHEN ?6 = 1 THEN NULL WHEN enabled = 1 THEN '${DISABLED_BY_OWNER}' ELSE disabled_reason END, ` +
    `failing_since = CASE WHEN ?6 = 1 AND enabled = 0 THEN NULL ELSE failing_since END, updated_at = ?7 WHERE id = ?1 AND account_id = ?2`,
  delete: 'DELETE FROM webhook_endpoints WHERE id = ? AND account_id = ?',
  rotate: 'UPDATE webhook_endpoints SET secret = ?, updated_at = ? WHERE id = ? AND account_id = ?',
} as const;

export const parseEvents = (text: string): EventType[] => EVENT_TYPES.filter((t) => text.split(',').includes(t));

function view(row: Row): EndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: parseEvents(row.events),
    enabled: row.enabled === 1,
    disabled_reason: row.enabled === 1 ? null : (row.disabled_reason ?? DISABLED_BY_OWNER),
    created_at: iso(row.created_at) as string,
    updated_at: iso(row.updated_at) as string,
  };
}

export const target = (row: Pick<Row, 'id' | 'url' | 'secret' | 'events' | 'enabled'>): EndpointTarget => ({
  id: row.id,
  url: row.url,
  secret: row.secret,
  events: parseEvents(row.events),
  enabled: row.enabled === 1,
});

export interface EndpointInput {
  url: string;
  events: EventType[];
  description?: string;
}

export type CreateEndpointOutcome =
  | { ok: true; endpoint: EndpointView & { secret: string } }
  | { ok: false; max: number };

export async function createEndpoint(caller: WebhookCaller, input: EndpointInput): Promise<CreateEndpointOutcome> {
  const { env, accountId, now, origin } = caller;
  const db = env.DB;
  const id = `ep_${randomBase62(16)}`;
  const secret = newSecret();
  const events = input.events.join(',');
  // The audit record in the same batch, only when the capped insert made the endpoint.
  const [result] = await batchWithAudit(
    db,
    [
      db
        .prepare(SQL.insertCapped)
        .bind(id, accountId, input.url, input.description ?? '', events, secret, now, MAX_ENDPOINTS_PER_ACCOUNT),
    ],
    origin,
    { accountId, action: 'webhook.created', target: id, details: { url: input.url, events: input.events } },
    now,
    {
      sql: 'EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?)',
      params: [id],
    },
  );
  if (result?.meta.changes !== 1) return { ok: false, max: MAX_ENDPOINTS_PER_ACCOUNT };
  const row: Row = {
    id,
    url: input.url,
    description: input.description ?? '',
    events,
    secret,
    enabled: 1,
    disabled_reason: null,
    created_at: now,
    updated_at: now,
  };
  return { ok: true, endpoint: { ...view(row), secret } };
}

export async function listEndpoints(db: D1Database, accountId: string): Promise<EndpointView[]> {
  return (await db.prepare(SQL.list).bind(accountId).all<Row>()).results.map(view);
}

export async function getEndpoint(db: D1Database, accountId: string, id: string): Promise<EndpointView | null> {
  const row = await db.prepare(SQL.one).bind(id, accountId).first<Row>();
  return row ? view(row) : null;
}

export interface EndpointPatch {
  url?: string;
  events?: EventType[];
  description?: string;
  enabled?: boolean;
}

export async function updateEndpoint(
  caller: WebhookCaller,
  id: string,
  patch: EndpointPatch,
): Promise<EndpointView | null> {
  const { env, accountId, now, origin } = caller;
  const db = env.DB;
  const row = await db.prepare(SQL.one).bind(id, accountId).first<Row>();
  if (!row) return null;
  const enabled = patch.enabled === undefined ? row.enabled : patch.enabled ? 1 : 0;
  // Switching on clears the reason (and the failure streak); switching off by hand says who did it.
  const reason =
    enabled === 1 ? null : patch.enabled === false && row.enabled === 1 ? DISABLED_BY_OWNER : row.disabled_reason;
  const next: Row = {
    ...row,
    url: patch.url ?? row.url,
    events: patch.events ? patch.events.join(',') : row.events,
    description: patch.description ?? row.description,
    enabled,
    disabled_reason: reason,
    updated_at: now,
  };
  const changed = {
    url: next.url,
    events: parseEvents(next.events),
    description: next.description,
    enabled: next.enabled === 1,
  };
  const patchEnabled = patch.enabled === undefined ? null : patch.enabled ? 1 : 0;
  await batchWithAudit(
    db,
    [db.prepare(SQL.update).bind(id, accountId, next.url, next.description, next.events, patchEnabled, now)],
    origin,
    { accountId, action: 'webhook.updated', target: id, details: changed },
    now,
  );
  return view(next);
}

export async function deleteEndpoint(caller: WebhookCaller, id: string): Promise<EndpointView | null> {
  const { env, accountId, now, origin } = caller;
  const db = env.DB;
  const row = await db.prepare(SQL.one).bind(id, accountId).first<Row>();
  if (!row) return null;
  await batchWithAudit(
    db,
    [db.prepare(SQL.delete).bind(id, accountId)],
    origin,
    { accountId, action: 'webhook.deleted', target: id, details: { url: row.url } },
    now,
    {
      sql: 'NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?)',
      params: [id],
    },
  );
  return view(row);
}

export async function rotateSecret(
  caller: WebhookCaller,
  id: string,
): Promise<(EndpointView & { secret: string }) | null> {
  const { env, accountId, now, origin } = caller;
  const db = env.DB;
  const secret = newSecret();
  const [result] = await batchWithAudit(
    db,
    [db.prepare(SQL.rotate).bind(secret, now, id, accountId)],
    origin,
    { accountId, action: 'webhook.secret_rotated', target: id },
    now,
    { sql: 'EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ? AND account_id = ?)', params: [id, accountId] },
  );
  if (result?.meta.changes !== 1) return null;
  const endpoint = await getEndpoint(db, accountId, id);
  return endpoint ? { ...endpoint, secret } : null;
}

/** The dispatcher's view of the account's endpoints, secrets included. */
export async function endpointTargets(db: D1Database, accountId: string): Promise<EndpointTarget[]> {
  return (await db.prepare(SQL.list).bind(accountId).all<Row>()).results.map(target);
}

const HEALTH_SQL = {
  healthy: 'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL',
  // A streak is unbroken failures: a failure after a quiet spell longer than any retry gap (no attempt
  // at all, so nothing to say the endpoint was down) starts a new one.
  failing:
    'UPDATE webhook_endpoints SET failing_since = CASE WHEN failing_since IS NULL OR last_failure_at IS NULL OR last_failure_at < ?1 - ?3 ' +
    'THEN ?1 ELSE failing_since END, last_failure_at = ?1 WHERE id = ?2',
  // Disabled only while still failing since before the cutoff, and only once.
  disable:
    'UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, updated_at = ? ' +
    'WHERE id = ? AND enabled = 1 AND failing_since IS NOT NULL AND failing_since <= ?',
} as const;

/**
 * Records an attempt's outcome on the endpoint; returns true when it has just been disabled. `quietMs`
 * is the longest gap of the retry schedule: failures further apart than that are not one streak.
 */
export async function recordHealth(
  db: D1Database,
  id: string,
  success: boolean,
  now: number,
  disableAfterMs: number,
  quietMs: number,
): Promise<boolean> {
  if (success) {
    await db.prepare(HEALTH_SQL.healthy).bind(id).run();
    return false;
  }
  const reason = `disabled automatically: every delivery attempt failed for ${describeSpan(disableAfterMs)} (since the last success); fix the endpoint, then enable it again`;
  const [, disabled] = await db.batch([
    db.prepare(HEALTH_SQL.failing).bind(now, id, quietMs),
    db.prepare(HEALTH_SQL.disable).bind(reason, now, id, now - disableAfterMs),
  ]);
  return disabled?.meta.changes === 1;
}

function describeSpan(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} days`;
  return `${Math.round(ms / 1000)} seconds`;
}
