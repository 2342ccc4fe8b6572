import { createApp } from './app.ts';
import type { Env } from './env.ts';
import { runScheduled } from './scheduled.ts';

export { AccountMeter } from './metering/account-meter.ts';
export { KeyMeter } from './metering/key-meter.ts';
export { LeaseHolder } from './metering/lease-holder.ts';
export { WebhookDispatcher } from './webhooks/dispatcher.ts';

const app = createApp();

export default {
  fetch: app.fetch,
  // The cron trigger (wrangler.toml).
  scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext): void {
    for (const job of runScheduled(env, Date.now())) ctx.waitUntil(job.then(() => undefined));
  },
} satisfies ExportedHandler<Env>;
