// The cron trigger's sweep: events still in D1's outbox a minute after they were written lost their
// hand-off (the request's call to the dispatcher failed); hand them over now.
import type { Env } from '../env.ts';
import { dispatcher } from './dispatcher-stub.ts';
import { OUTBOX_SWEEP_AGE_MS } from './limits.ts';

/** Accounts swept per run at most; the next run takes the rest. */
const SWEEP_ACCOUNTS = 100;

export async function sweepOutbox(env: Env, now: number): Promise<number> {
  const rows = await env.DB.prepare('SELECT DISTINCT account_id FROM webhook_outbox WHERE created_at <= ? LIMIT ?')
    .bind(now - OUTBOX_SWEEP_AGE_MS, SWEEP_ACCOUNTS)
    .all<{ account_id: string }>();
  const results = await Promise.allSettled(rows.results.map((r) => dispatcher(env, r.account_id).pull(r.account_id)));
  for (const r of results)
    if (r.status === 'rejected') console.error('webhook sweep: hand-off failed', String(r.reason));
  return rows.results.length;
}
