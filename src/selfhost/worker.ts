// The self-hosted Worker (docs/self-hosting.md): the very app of src/index.ts, plus what Cloudflare
// provides around a Worker and workerd does not:
// - /healthz (the process answers) and /readyz (D1 is open with its migrations applied) for a load
//   balancer, without a key;
// - one JSON line on stdout per request (workerd prints it; the platform's request log is missing);
// (Only handlers and classes may be exported from this module: workerd takes every export for one.)
// - unset vars take their wrangler.toml values (workerd binds them as null), except TRUSTED_IP_HEADER,
//   which trusts no header unless set (src/selfhost/env.ts);
// - the jobs of the cron trigger (src/scheduled.ts), which workerd never fires: run from requests
//   instead, at most once per SWEEP_INTERVAL_MS per isolate;
// - a store for the image cache, which workerd's Cache API lacks: the ImageStore Durable Object, bound as
//   IMAGE_STORE by the generated config (src/img/cache.ts uses it when bound);
// - no service with an ADMIN_TOKEN too short to be safe (src/operator/admin-token.ts): `npm run
//   selfhost:start` refuses to start with one, and workerd started directly answers every request but
//   /healthz 503 with the reason, so a load balancer never sends it anyone.
import worker from '../index.ts';
import type { Env } from '../env.ts';
import { adminTokenProblem } from '../operator/admin-token.ts';
import { runScheduled } from '../scheduled.ts';
import { selfhostEnv } from './env.ts';

export { AccountMeter } from '../metering/account-meter.ts';
export { ImageStore } from '../img/store.ts';
export { KeyMeter } from '../metering/key-meter.ts';
export { LeaseHolder } from '../metering/lease-holder.ts';
export { WebhookDispatcher } from '../webhooks/dispatcher.ts';

const HEALTH_PATH = '/healthz';
const READY_PATH = '/readyz';
/** The cron trigger's period in wrangler.toml (every 5 minutes). */
const SWEEP_INTERVAL_MS = 5 * 60_000;

let lastSweep = 0;
let refusalLogged = false;

async function ready(env: Env): Promise<Response> {
  try {
    // The database object applies pending migrations before it answers anything, so an answer means
    // the schema is current.
    const row = await env.DB.prepare('SELECT count(*) AS n FROM d1_migrations').first<{ n: number }>();
    return Response.json({ status: 'ready', migrations: row?.n ?? 0 });
  } catch (err) {
    log({ level: 'error', event: 'not_ready', error: err instanceof Error ? err.message : String(err) });
    return Response.json({ status: 'not_ready' }, { status: 503 });
  }
}

/**
 * One logfmt message; workerd's structuredLogging (config.capnp) wraps every console line, ours and the
 * app's, in a JSON object with timestamp and level, so stdout is JSON lines throughout.
 */
function log(entry: Record<string, unknown>): void {
  const text = Object.entries(entry)
    .filter(([key]) => key !== 'level')
    .map(
      ([key, value]) =>
        `${key}=${typeof value === 'string' && /^[\w./:-]*$/.test(value) ? value : JSON.stringify(value)}`,
    )
    .join(' ');
  if (entry.level === 'error') console.error(text);
  else console.log(text);
}

export default {
  async fetch(request: Request, rawEnv: Env, ctx: ExecutionContext): Promise<Response> {
    const env = selfhostEnv(rawEnv);
    const url = new URL(request.url);
    if (url.pathname === HEALTH_PATH) return Response.json({ status: 'ok' });
    const refusal = env.ADMIN_TOKEN ? adminTokenProblem(env.ADMIN_TOKEN) : null;
    if (refusal !== null) {
      if (!refusalLogged) log({ level: 'error', event: 'not_started', error: refusal });
      refusalLogged = true;
      return Response.json({ status: 'not_started', error: refusal }, { status: 503 });
    }
    if (url.pathname === READY_PATH) return ready(env);
    const started = Date.now();
    if (started - lastSweep >= SWEEP_INTERVAL_MS) {
      lastSweep = started;
      for (const job of runScheduled(env, started)) {
        ctx.waitUntil(
          job.then(
            () => undefined,
            (err: unknown) => log({ level: 'error', event: 'sweep_failed', error: String(err) }),
          ),
        );
      }
    }
    const response = await worker.fetch(request, env, ctx);
    log({
      level: response.status >= 500 ? 'error' : 'info',
      event: 'request',
      method: request.method,
      path: url.pathname,
      status: response.status,
      duration_ms: Date.now() - started,
      request_id: response.headers.get('x-request-id'),
    });
    return response;
  },
} satisfies ExportedHandler<Env>;
