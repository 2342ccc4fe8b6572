// The periodic jobs, in one list for both entry points: the cron trigger runs them on Cloudflare
// (src/index.ts), and the self-hosted Worker, where no cron fires, runs them from requests
// (src/selfhost/worker.ts). A job added here runs in both places.
import { sweepAuditLog } from './audit/retention.ts';
import type { Env } from './env.ts';
import { recheckDomains } from './sso/domains.ts';
import { sweepOutbox } from './webhooks/sweep.ts';

/**
 * Webhook events whose hand-off failed; audit records past retention; SSO domains looked up again: those
 * not yet proved (a resolver remembers a missing record for a while), and the proved ones (a record
 * removed for days unproves its domain). Each job's failure is its own.
 */
export function runScheduled(env: Env, now: number): Promise<unknown>[] {
  return [sweepOutbox(env, now), sweepAuditLog(env.DB, now), recheckDomains(env, now)];
}
