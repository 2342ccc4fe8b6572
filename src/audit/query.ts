// Reading the audit log: pages newest first (the API and the console), and exports oldest first (the
// chain's own order, so a reader can verify it while streaming). Reads only: nothing here writes.
import type { ActorType, AuditResult, AuditRow } from './chain.ts';
import { AUDIT_EXPORT_CHUNK, AUDIT_EXPORT_MAX } from './limits.ts';

export interface AuditFilters {
  /** Unix ms, inclusive. */
  since?: number | undefined;
  /** Unix ms, exclusive. */
  until?: number | undefined;
  action?: string | undefined;
  /** An actor id (mem_…, key_…), or a type: member, key, operator, anonymous. */
  actor?: string | undefined;
}

export interface AuditRecord {
  id: string;
  time: string;
  actor: { type: ActorType; id: string | null };
  action: string;
  target: string | null;
  ip: string | null;
  user_agent: string | null;
  result: AuditResult;
  details: Record<string, unknown> | null;
  prev_hash: string;
  hash: string;
}

/** A stored record as the query reads it: the chain's fields, less the account, plus its order and hash. */
interface Row extends Omit<AuditRow, 'account_id'> {
  seq: number;
  hash: string;
}

export const ACTOR_TYPES: readonly ActorType[] = ['member', 'key', 'operator', 'anonymous'];

export function view(row: Row): AuditRecord {
  return {
    id: row.id,
    time: new Date(row.time).toISOString(),
    actor: { type: row.actor_type, id: row.actor_id },
    action: row.action,
    target: row.target,
    ip: row.ip,
    user_agent: row.user_agent,
    result: row.result,
    details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

function where(accountId: string, f: AuditFilters): { sql: string; params: (string | number)[] } {
  const parts = ['account_id = ?'];
  const params: (string | number)[] = [accountId];
  if (f.since !== undefined) parts.push('time >= ?'), params.push(f.since);
  if (f.until !== undefined) parts.push('time < ?'), params.push(f.until);
  if (f.action !== undefined) parts.push('action = ?'), params.push(f.action);
  if (f.actor !== undefined) {
    const byType = (ACTOR_TYPES as readonly string[]).includes(f.actor);
    parts.push(byType ? 'actor_type = ?' : 'actor_id = ?');
    params.push(f.actor);
  }
  return { sql: parts.join(' AND '), params };
}

const COLUMNS = 'seq, id, time, actor_type, actor_id, action, target, ip, user_agent, result, details, prev_hash, hash';

/** One page, newest first; `cursor` is the previous page's next_cursor. */
export async function listAudit(
  db: D1Database,
  accountId: string,
  filters: AuditFilters,
  page: { limit: number; cursor?: number | undefined },
): Promise<{ records: AuditRecord[]; nextCursor: string | null }> {
  const w = where(accountId, filters);
  const cursor = page.cursor === undefined ? '' : ' AND seq < ?';
  const params = page.cursor === undefined ? w.params : [...w.params, page.cursor];
  // One more than asked, to know whether a next page exists without a count.
  const rows = await db
    .prepare(`SELECT ${COLUMNS} FROM audit_logs WHERE ${w.sql}${cursor} ORDER BY seq DESC LIMIT ?`)
    .bind(...params, page.limit + 1)
    .all<Row>();
  const more = rows.results.length > page.limit;
  const kept = rows.results.slice(0, page.limit);
  return { records: kept.map(view), nextCursor: more ? String(kept.at(-1)!.seq) : null };
}

/** The matching records oldest first, at most AUDIT_EXPORT_MAX, read in chunks as the consumer pulls. */
export async function* exportAudit(
  db: D1Database,
  accountId: string,
  filters: AuditFilters,
): AsyncGenerator<AuditRecord> {
  const w = where(accountId, filters);
  let after = 0;
  let sent = 0;
  while (sent < AUDIT_EXPORT_MAX) {
    const limit = Math.min(AUDIT_EXPORT_CHUNK, AUDIT_EXPORT_MAX - sent);
    const rows = await db
      .prepare(`SELECT ${COLUMNS} FROM audit_logs WHERE ${w.sql} AND seq > ? ORDER BY seq LIMIT ?`)
      .bind(...w.params, after, limit)
      .all<Row>();
    for (const row of rows.results) yield view(row);
    sent += rows.results.length;
    if (rows.results.length < limit) return;
    after = rows.results.at(-1)!.seq;
  }
}

export const CSV_COLUMNS = [
  'id',
  'time',
  'actor_type',
  'actor_id',
  'action',
  'target',
  'ip',
  'user_agent',
  'result',
  'details',
  'prev_hash',
  'hash',
] as const;

/** RFC 4180 field; a leading =, +, - or @ gets a quote so a spreadsheet does not run it as a formula. */
function csvField(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function csvLine(r: AuditRecord): string {
  const cells = [
    r.id,
    r.time,
    r.actor.type,
    r.actor.id,
    r.action,
    r.target,
    r.ip,
    r.user_agent,
    r.result,
    r.details === null ? null : JSON.stringify(r.details),
    r.prev_hash,
    r.hash,
  ];
  return `${cells.map(csvField).join(',')}\r\n`;
}
