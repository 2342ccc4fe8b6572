import { createApp } from './app.ts';
import type { Env } from './env.ts';
import { sweepAuditLog } from './audit/retention.ts';
import { sweepOutbox } from './webhooks/sweep.ts';

export { AccountMeter } from './durable/account-meter.ts';
export { KeyMeter } from './durable/key-meter.ts';
export { LeaseHolder } from './durable/lease-holder.ts';
export { WebhookDispatcher } from './durable/webhook-dispatcher.ts';

const app = createApp();

export default {
  fetch: app.fetch,
  // The cron trigger (wrangler.toml): webhook events whose hand-off failed; audit records past retention.
  scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext): void {
    ctx.waitUntil(sweepOutbox(env, Date.now()).then(() => undefined));
    ctx.waitUntil(sweepAuditLog(env.DB, Date.now()).then(() => undefined));
  },
} satisfies ExportedHandler<Env>;
