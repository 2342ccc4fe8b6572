// Appending to the audit log. A record goes into the same D1 batch as the change it describes (a batch is
// one transaction): no change without its record, no record without its change. The chain's head is read
// first; if another writer appends in between, the unique (account_id, prev_hash) index fails this batch
// as a whole and it is retried on the new head.
import { AUDIT_APPEND_ATTEMPTS, AUDIT_RETRY_JITTER_MS } from './limits.ts';
import {
  AUDIT_SQL,
  buildRecord,
  insertSql,
  recordParams,
  type AuditCondition,
  type AuditEvent,
  type AuditOrigin,
} from './record.ts';

export {
  AUDIT_ACTIONS,
  OPERATOR,
  type AuditAction,
  type AuditActor,
  type AuditCondition,
  type AuditEvent,
  type AuditOrigin,
} from './record.ts';

export const isChainRace = (err: unknown): boolean =>
  String(err).includes('audit_logs.account_id, audit_logs.prev_hash');

/**
 * Runs `statements` and the audit record of `event` as one D1 batch; returns the statements' results
 * (the record's own comes last and is left out). With `when`, the record is written only if the condition
 * holds after the change (a revoke that revoked nothing leaves no record).
 */
export async function batchWithAudit<T = Record<string, unknown>>(
  db: D1Database,
  statements: D1PreparedStatement[],
  origin: AuditOrigin,
  event: AuditEvent,
  now: number,
  when?: AuditCondition,
): Promise<D1Result<T>[]> {
  for (let attempt = 1; ; attempt++) {
    const head = await db.prepare(AUDIT_SQL.head).bind(event.accountId).first<{ hash: string }>();
    const record = await buildRecord(origin, event, now, head?.hash ?? null);
    const insert = insertSql(when);
    try {
      const results = await db.batch<T>([
        ...statements,
        db.prepare(insert.sql).bind(...recordParams(record), ...insert.params),
      ]);
      return results.slice(0, statements.length);
    } catch (err) {
      if (!isChainRace(err) || attempt >= AUDIT_APPEND_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * attempt * AUDIT_RETRY_JITTER_MS));
    }
  }
}

/** A record with no change of its own (a failed sign-in). */
export async function appendAudit(db: D1Database, origin: AuditOrigin, event: AuditEvent, now: number): Promise<void> {
  await batchWithAudit(db, [], origin, event, now);
}

/** A sign-in refused for a known account (wrong password, SSO required, the issuer's refusal): its record. */
export function recordFailedSignIn(
  db: D1Database,
  origin: AuditOrigin,
  accountId: string,
  details: Record<string, unknown>,
  now: number,
): Promise<void> {
  return appendAudit(
    db,
    origin,
    { accountId, action: 'session.sign_in_failed', target: accountId, result: 'failure', details },
    now,
  );
}
