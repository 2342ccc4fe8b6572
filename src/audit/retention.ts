// The cron trigger's retention sweep: records older than AUDIT_RETENTION_DAYS go, in bounded batches.
// The D1 trigger refuses to delete younger ones, so this is the only deletion there is, and it cannot
// reach into the kept window even if its arithmetic were wrong. An export or `audit verify` starting after
// a sweep takes the first kept record's prev_hash on trust (src/audit/chain.ts).
import { AUDIT_RETENTION_DAYS } from './limits.ts';

/** Records deleted per run at most; the next run takes the rest. */
const SWEEP_MAX = 1000;

export async function sweepAuditLog(db: D1Database, now: number): Promise<number> {
  const cutoff = now - AUDIT_RETENTION_DAYS * 86_400_000;
  const result = await db
    .prepare('DELETE FROM audit_logs WHERE seq IN (SELECT seq FROM audit_logs WHERE time < ? ORDER BY seq LIMIT ?)')
    .bind(cutoff, SWEEP_MAX)
    .run();
  return result.meta.changes;
}
