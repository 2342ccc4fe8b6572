// Meta-tag bench: the early stop at </head> (a 1.5 MB page whose head ends early against a 20 KB head,
// with a tiny page as the floor of the HTTP round trips and a 1.1 MB head as what reading it all costs) and the bulk call's six-at-a-time fetching
// against a slow origin. Pages come from the loopback fixture origin; rounds are interleaved so the
// machine's noise hits every figure alike.
import { fetchOnce, median, percentile } from './lib/load.ts';
import type { Service } from './lib/server.ts';

export const EXTRACT_ROUNDS = 15;
export const EXTRACT_REQUESTS = 20;
export const BULK_ROUNDS = 7;
export const BULK_DELAY_MS = 200;
const BULK_SIZES = [25, 6] as const;
const BULK_CONCURRENCY = 6; // src/meta/limits.ts BULK_CONCURRENCY: what the ideal wall times assume

/**
 * Each page with the start of the title its extraction must find: a wrong page measures nothing.
 * /delay/0 answers after a 0 ms timer, which Node makes ≥ 1 ms: about 1 ms above a bare tiny page.
 * /big-head is the reference the early stop is for: 1.1 MB that must be parsed before </head>.
 */
const PAGES = [
  { path: '/delay/0', title: 'Delayed' },
  { path: '/head-20k', title: 'Twenty KB head' },
  { path: '/early-head', title: 'Early head' },
  { path: '/big-head', title: 'Big head' },
] as const;

export interface PageRun {
  path: string;
  /** As the origin sends it (content-length when given, else the bytes read). */
  bytes: number;
  p50: number;
  p99: number;
  roundMedians: number[];
}

export interface BulkRun {
  urls: number;
  waves: number;
  idealMs: number;
  p50: number;
  max: number;
  wallMs: number[];
}

export interface MetaBench {
  pages: PageRun[];
  ratio: number;
  bulk: BulkRun[];
}

async function pageBytes(origin: string, path: string): Promise<number> {
  const res = await fetchOnce(`${origin}${path}`);
  const read = (await res.arrayBuffer()).byteLength;
  return Number(res.headers.get('content-length') ?? read);
}

/** One GET /meta-tags, timed from send to the last byte of the answer. */
async function timedGet(service: Service, key: string, url: string, title: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetchOnce(`${service.base}/api/v1/meta-tags?url=${encodeURIComponent(url)}`, {
    headers: { 'x-api-key': key },
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`GET /meta-tags?url=${url} answered ${res.status}: ${text}`);
  const found = (JSON.parse(text) as { data: { title: string | null } }).data.title;
  if (!found?.startsWith(title))
    throw new Error(`GET /meta-tags?url=${url} found the title ${JSON.stringify(found)}, not ${title}…`);
  return ms;
}

/** One bulk call of `count` distinct slow URLs, timed; every URL must succeed. */
async function timedBulk(service: Service, key: string, origin: string, count: number, tag: string): Promise<number> {
  const urls = Array.from({ length: count }, (_, n) => `${origin}/delay/${BULK_DELAY_MS}?i=${tag}-${n}`);
  const t0 = performance.now();
  const res = await fetchOnce(`${service.base}/api/v1/meta-tags/bulk`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ urls }),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  const succeeded = res.status === 200 ? (JSON.parse(text) as { meta: { succeeded: number } }).meta.succeeded : -1;
  if (succeeded !== count)
    throw new Error(`bulk of ${count} (${tag}) answered ${res.status}, ${succeeded} succeeded: ${text.slice(0, 2000)}`);
  return ms;
}

export async function benchMeta(service: Service, origin: string): Promise<MetaBench> {
  // An enterprise key, as the other benches use: the ~1,200 single requests below would pass the demo
  // developer key's 1,000 per minute, and a 429 would stop the run. Enterprise allows 25 URLs a call too.
  const account = service.admin([
    'account',
    'create',
    '--email',
    'bench-meta@shrinkray.local',
    '--name',
    'Bench meta',
    '--tools-tier',
    'enterprise',
  ]) as { id: string };
  const key = (
    service.admin(['key', 'create', '--account', account.id, '--scopes', 'tools', '--name', 'bench']) as { key: string }
  ).key;

  // Warm-up: JIT, HTMLRewriter instantiation, the key's Durable Object, connection pools both ways.
  for (let i = 0; i < 5; i++) for (const p of PAGES) await timedGet(service, key, `${origin}${p.path}`, p.title);
  await timedBulk(service, key, origin, BULK_CONCURRENCY, 'warm');

  const samples = PAGES.map(() => [] as number[][]);
  const walls = BULK_SIZES.map(() => [] as number[]);
  for (let r = 0; r < Math.max(EXTRACT_ROUNDS, BULK_ROUNDS); r++) {
    if (r < EXTRACT_ROUNDS) {
      const round = PAGES.map(() => [] as number[]);
      // Page by page within the round, so a slow moment lands on every page, not on one page's block.
      for (let n = 0; n < EXTRACT_REQUESTS; n++) {
        for (const [i, p] of PAGES.entries())
          round[i]!.push(await timedGet(service, key, `${origin}${p.path}`, p.title));
      }
      round.forEach((ms, i) => {
        samples[i]!.push(ms);
      });
    }
    if (r < BULK_ROUNDS) {
      for (const [i, size] of BULK_SIZES.entries())
        walls[i]!.push(await timedBulk(service, key, origin, size, `${r}-b${size}`));
    }
  }

  const pages: PageRun[] = [];
  for (const [i, p] of PAGES.entries()) {
    const rounds = samples[i]!;
    pages.push({
      path: p.path,
      bytes: await pageBytes(origin, p.path),
      p50: median(rounds.map(median)),
      p99: percentile(
        rounds.flat().sort((a, b) => a - b),
        99,
      ),
      roundMedians: rounds.map(median),
    });
  }
  const bulk = BULK_SIZES.map((urls, i): BulkRun => {
    const waves = Math.ceil(urls / BULK_CONCURRENCY);
    return {
      urls,
      waves,
      idealMs: waves * BULK_DELAY_MS,
      p50: median(walls[i]!),
      max: Math.max(...walls[i]!),
      wallMs: walls[i]!,
    };
  });
  const p50Of = (path: string) => pages.find((p) => p.path === path)!.p50;
  return { pages, ratio: p50Of('/early-head') / p50Of('/head-20k'), bulk };
}

export function metaReport(b: MetaBench): string {
  const head20k = b.pages.find((p) => p.path === '/head-20k')!;
  const extraction = [
    '| GET /api/v1/meta-tags?url= | page bytes | p50 ms | p99 ms | p50 ÷ /head-20k |',
    '|---|---:|---:|---:|---:|',
    ...b.pages.map(
      (p) =>
        `| ${p.path} | ${p.bytes.toLocaleString('en')} | ${p.p50.toFixed(2)} | ${p.p99.toFixed(2)} | ${(p.p50 / head20k.p50).toFixed(2)} |`,
    ),
  ];
  const bulk = [
    `| POST /api/v1/meta-tags/bulk, /delay/${BULK_DELAY_MS} URLs | waves of ${BULK_CONCURRENCY} | ideal ms | p50 ms | max ms |`,
    '|---|---:|---:|---:|---:|',
    ...b.bulk.map((r) => `| ${r.urls} URLs | ${r.waves} | ${r.idealMs} | ${r.p50.toFixed(0)} | ${r.max.toFixed(0)} |`),
  ];
  const b25 = b.bulk.find((r) => r.urls === 25)!;
  const verdicts =
    `early-head ÷ head-20k = ${b.ratio.toFixed(2)} (target ≤ 1.5: ${b.ratio <= 1.5 ? 'met' : 'MISSED'}); ` +
    `bulk of 25: max ${b25.max.toFixed(0)} ms (target ≤ 1200: ${b25.max <= 1200 ? 'met' : 'MISSED'}).`;
  return `${extraction.join('\n')}\n\n${bulk.join('\n')}\n\n${verdicts}`;
}
