// metering-edge bench: the real Worker in workerd (the bench entry metering-edge-worker.ts injects three
// locations' distances), one free key (100 per minute) driven by Poisson traffic at 50 % of its minute
// for two windows, then at 150 % for two, spread evenly over the locations; then 150 parallel requests on
// a fresh key at the farthest location; then compressions at each location with the month reserved at the
// key's home (as before its leases) and from the location's slice, in alternation, and the management
// API's requests. Prints, last, one JSON line (docs/benchmarks.md).
import { HOME_RTT_MS } from './metering-edge-distances.ts';
import { readFileSync } from 'node:fs';
import type { Service } from './lib/server.ts';

export const EDGE_LIMIT = 100;
const COLOS = Object.keys(HOME_RTT_MS);
const FAR = COLOS.reduce((a, b) => ((HOME_RTT_MS[a] ?? 0) >= (HOME_RTT_MS[b] ?? 0) ? a : b));
const PHASES = [0.5, 0.5, 1.5, 1.5];
const MINUTE = 60_000;
/** Compressions per location and way of metering the month; management requests per location. */
const IMAGE_ROUNDS = 16;
const MANAGE_ROUNDS = 12;

interface Hit {
  colo: string;
  status: number;
  meterMs: number;
  /** The window the answer names (X-RateLimit-Reset, Unix seconds). */
  reset: number;
  minute: number;
}

function newKey(service: Service, name: string): string {
  const account = service.admin([
    'account',
    'create',
    '--email',
    `bench-${name}-${Date.now()}@shrinkray.local`,
    '--name',
    `Bench ${name}`,
    '--tools-tier',
    'free',
  ]) as { id: string };
  return (
    service.admin(['key', 'create', '--account', account.id, '--scopes', 'tools', '--name', name]) as { key: string }
  ).key;
}

/** One request; once more if the connection was closed under it (an idle keep-alive socket the server dropped). */
async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch {
    return fetch(url, init);
  }
}

async function hit(service: Service, key: string, colo: string, minute: number): Promise<Hit> {
  const res = await send(`${service.base}/api/v1/categories`, { headers: { 'x-api-key': key, 'x-bench-colo': colo } });
  await res.arrayBuffer();
  return {
    colo,
    status: res.status,
    meterMs: Number(res.headers.get('x-bench-meter-ms') ?? Number.NaN),
    reset: Number(res.headers.get('x-ratelimit-reset') ?? 0),
    minute,
  };
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

/** A new pro account's key with `scopes`. */
function proKey(service: Service, scopes: string): string {
  const account = service.admin([
    'account',
    'create',
    '--email',
    `bench-edge-${scopes}-${Date.now()}@shrinkray.local`,
    '--name',
    `Bench edge ${scopes}`,
    '--image-tier',
    'pro',
    '--tools-tier',
    'enterprise',
  ]) as { id: string };
  return (
    service.admin(['key', 'create', '--account', account.id, '--scopes', scopes, '--name', scopes]) as { key: string }
  ).key;
}

interface Timed {
  meter: number[];
  total: number[];
}

/** One request's metering time (the Worker's calls to its holder or the home) and whole time, into `into`. */
async function timed(into: Timed, url: string, init: RequestInit): Promise<void> {
  const t0 = performance.now();
  const res = await send(url, init);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  into.total.push(performance.now() - t0);
  into.meter.push(Number(res.headers.get('x-bench-meter-ms')));
}

const summary = (t: Timed) =>
  `metering p50 ${quantile(t.meter, 0.5).toFixed(0)} ms, p99 ${quantile(t.meter, 0.99).toFixed(0)} ms; request p50 ${quantile(t.total, 0.5).toFixed(0)} ms`;

/**
 * A compression's metering per location: the month reserved at the key's home (before its leases) and
 * from the location's slice (now), in alternation so that both see the same machine. The first leased
 * one of each location opens its lease.
 */
async function imageCost(service: Service): Promise<Record<string, { home: Timed; leased: Timed }>> {
  const key = proKey(service, 'image');
  const photo = readFileSync(new URL('../../src/web/assets/sample.jpg', import.meta.url));
  const out: Record<string, { home: Timed; leased: Timed }> = {};
  for (const colo of COLOS) {
    const ways = { home: { meter: [], total: [] }, leased: { meter: [], total: [] } };
    for (let i = 0; i < IMAGE_ROUNDS; i++) {
      for (const way of ['leased', 'home'] as const) {
        const form = new FormData();
        form.set('image', new Blob([photo]), 'sample.jpg');
        await timed(ways[way], `${service.base}/api/v1/compress`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'x-bench-colo': colo, 'x-bench-month': way },
          body: form,
        });
      }
    }
    out[colo] = ways;
    console.log(`image at ${colo}, month at the home: ${summary(ways.home)}`);
    console.log(`image at ${colo}, month leased: ${summary(ways.leased)}`);
  }
  return out;
}

/** The management API's minute (not leased): what its call to the key's home costs a request, per location. */
async function manageCost(service: Service): Promise<Record<string, Timed>> {
  const key = proKey(service, 'manage');
  const out: Record<string, Timed> = {};
  for (const colo of COLOS) {
    const t: Timed = { meter: [], total: [] };
    for (let i = 0; i < MANAGE_ROUNDS; i++)
      await timed(t, `${service.base}/api/v1/keys`, {
        headers: { authorization: `Bearer ${key}`, 'x-bench-colo': colo },
      });
    out[colo] = t;
    console.log(`manage at ${colo} (GET /api/v1/keys): ${summary(t)}`);
  }
  return out;
}

export interface EdgeResult {
  colos: number;
  far_rtt_ms: number;
  p50_added_ms: number;
  p99_added_ms: number;
  over_admitted: number;
  under_admitted_pct: number;
  limit: number;
  exact_parallel: boolean;
  /** A compression's metering at the farthest location, the month reserved at the key's home (before its leases). */
  month_p50_added_ms_before: number;
  month_p99_added_ms_before: number;
  /** The same with the month leased near the caller. */
  month_p50_added_ms: number;
  month_p99_added_ms: number;
  /** A management request's metering at the farthest location (its minute is not leased), and its whole time. */
  manage_p50_added_ms: number;
  manage_p50_request_ms: number;
}

export async function benchMeteringEdge(service: Service): Promise<EdgeResult> {
  const key = newKey(service, 'edge');
  // Warm-up on another key: JIT, the objects' first D1 reads.
  const warm = newKey(service, 'warm');
  for (const colo of COLOS) await hit(service, warm, colo, -1);
  // Start on a window boundary, so each phase is whole windows.
  await new Promise((r) => setTimeout(r, MINUTE - (Date.now() % MINUTE) + 50));
  const start = Date.now();
  const pending: Promise<Hit>[] = [];
  for (const [i, load] of PHASES.entries()) {
    const perColoPerMs = (load * EDGE_LIMIT) / MINUTE / COLOS.length;
    for (const colo of COLOS) {
      let t = start + i * MINUTE;
      for (;;) {
        t += -Math.log(1 - Math.random()) / perColoPerMs;
        if (t >= start + (i + 1) * MINUTE) break;
        const at = t;
        pending.push(
          new Promise<void>((r) => setTimeout(r, Math.max(0, at - Date.now()))).then(() => hit(service, key, colo, i)),
        );
      }
    }
  }
  const hits = await Promise.all(pending);
  const byWindow = new Map<number, { admitted: number; demand: number }>();
  for (const h of hits) {
    const w = byWindow.get(h.minute) ?? { admitted: 0, demand: 0 };
    w.demand++;
    if (h.status === 200) w.admitted++;
    byWindow.set(h.minute, w);
  }
  // Admitted per window the server named, so a request on a boundary counts where it was metered.
  const admittedByReset = new Map<number, number>();
  for (const h of hits) if (h.status === 200) admittedByReset.set(h.reset, (admittedByReset.get(h.reset) ?? 0) + 1);
  const over = [...admittedByReset.values()].reduce((sum, n) => sum + Math.max(0, n - EDGE_LIMIT), 0);
  const full = [...byWindow.values()].filter((w) => w.demand > EDGE_LIMIT);
  const unused = full.reduce((sum, w) => sum + Math.max(0, EDGE_LIMIT - w.admitted), 0);
  const far = hits.filter((h) => h.colo === FAR).map((h) => h.meterMs);
  for (const colo of COLOS) {
    const ms = hits.filter((h) => h.colo === colo).map((h) => h.meterMs);
    console.log(
      `${colo} (${HOME_RTT_MS[colo]} ms from the home): ${ms.length} requests, metering p50 ${quantile(ms, 0.5)} ms, p90 ${quantile(ms, 0.9)} ms, p99 ${quantile(ms, 0.99)} ms`,
    );
  }
  for (const [i, w] of [...byWindow.entries()].sort((a, b) => a[0] - b[0]))
    console.log(`window ${i + 1} (${PHASES[i]! * 100} %): demand ${w.demand}, admitted ${w.admitted}`);

  // 150 at once on a fresh key at the farthest location: exactly the limit.
  const fresh = newKey(service, 'parallel');
  if (MINUTE - (Date.now() % MINUTE) < 10_000)
    await new Promise((r) => setTimeout(r, MINUTE - (Date.now() % MINUTE) + 50));
  const burst = await Promise.all(Array.from({ length: 150 }, () => hit(service, fresh, FAR, 0)));
  const ok = burst.filter((h) => h.status === 200).length;
  console.log(`parallel: ${ok} × 200, ${burst.filter((h) => h.status === 429).length} × 429`);
  const image = (await imageCost(service))[FAR]!;
  const manage = (await manageCost(service))[FAR]!;
  const ms = (xs: number[], q: number) => Number(quantile(xs, q).toFixed(2));

  return {
    colos: COLOS.length,
    far_rtt_ms: HOME_RTT_MS[FAR] ?? 0,
    p50_added_ms: Number(quantile(far, 0.5).toFixed(2)),
    p99_added_ms: Number(quantile(far, 0.99).toFixed(2)),
    over_admitted: over,
    under_admitted_pct: full.length === 0 ? 0 : Number(((100 * unused) / (full.length * EDGE_LIMIT)).toFixed(2)),
    limit: EDGE_LIMIT,
    exact_parallel: ok === EDGE_LIMIT,
    month_p50_added_ms_before: ms(image.home.meter, 0.5),
    month_p99_added_ms_before: ms(image.home.meter, 0.99),
    month_p50_added_ms: ms(image.leased.meter, 0.5),
    month_p99_added_ms: ms(image.leased.meter, 0.99),
    manage_p50_added_ms: ms(manage.meter, 0.5),
    manage_p50_request_ms: ms(manage.total, 0.5),
  };
}
