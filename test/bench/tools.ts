// Tools bench: the catalogue search and the QR image renderer against GET /api/v1/account (the
// foundation's metered baseline), interleaved round by round so all see the same machine load.
import { enterpriseAccount, newKey } from './lib/accounts.ts';
import { fetchOnce, runLoad, summarise, type LoadResult, type Summary } from './lib/load.ts';
import type { Service } from './lib/server.ts';

export const TOOLS_ROUNDS = 5;
export const TOOLS_REQUESTS = 2000;
/** A fresh render costs tens of milliseconds of CPU, so its rounds are shorter. */
export const RENDER_REQUESTS = 300;
export const TOOLS_CONCURRENCY = 16;

/** Signed image URLs from GET /qr, each for different data, so every request below is a fresh render. */
async function signedUrls(service: Service, key: string, count: number, query: string): Promise<string[]> {
  const urls: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const data = encodeURIComponent(`https://example.com/products/${i}?ref=qr-bench-${Date.now()}`);
      const res = await fetchOnce(`${service.base}/api/v1/qr?data=${data}&${query}`, { headers: { 'x-api-key': key } });
      if (res.status !== 200) throw new Error(`GET /qr answered ${res.status}: ${await res.text()}`);
      urls[i] = ((await res.json()) as { data: { url: string } }).data.url;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return urls;
}

export async function benchTools(
  service: Service,
): Promise<{ rows: Summary[]; png: { bytes: number }; svg: { bytes: number } }> {
  const accountId = enterpriseAccount(service, 'bench-tools@shrinkray.local', 'Bench tools');
  const keys = Array.from({ length: TOOLS_ROUNDS * 2 + 1 }, () => newKey(service, accountId, 'tools'));
  const spec = (path: string, key: string, total = TOOLS_REQUESTS) => ({
    url: `${service.base}${path}`,
    headers: { 'x-api-key': key },
    total,
    concurrency: TOOLS_CONCURRENCY,
    expectStatus: 200,
  });
  const urlKey = keys[TOOLS_ROUNDS * 2]!;
  const pngUrls = await signedUrls(service, urlKey, TOOLS_ROUNDS * RENDER_REQUESTS + 50, 'size=300&format=png');
  const svgUrls = await signedUrls(service, urlKey, TOOLS_ROUNDS * RENDER_REQUESTS + 50, 'size=300&format=svg');
  const cachedUrl = pngUrls.at(-1)!;
  const sizeOf = async (url: string) => (await (await fetchOnce(url)).arrayBuffer()).byteLength;
  const png = { bytes: await sizeOf(cachedUrl) };
  const svg = { bytes: await sizeOf(svgUrls.at(-1)!) };

  // Warm-up: JIT, codec instantiation, the Durable Objects' first D1 read, connection pools.
  await runLoad(spec('/api/v1/account', keys[0]!, 300));
  await runLoad(spec('/api/v1/tools?search=pdf', keys[1]!, 300));
  await runLoad({
    url: '',
    urlAt: (i) => pngUrls[TOOLS_ROUNDS * RENDER_REQUESTS + (i % 49)]!,
    total: 49,
    concurrency: 8,
    expectStatus: 200,
  });

  const rounds: Record<string, LoadResult[]> = { account: [], search: [], png: [], svg: [], cached: [] };
  for (let r = 0; r < TOOLS_ROUNDS; r++) {
    rounds.account!.push(await runLoad(spec('/api/v1/account', keys[2 * r]!)));
    rounds.search!.push(await runLoad(spec('/api/v1/tools?search=pdf', keys[2 * r + 1]!)));
    const offset = r * RENDER_REQUESTS;
    const render = { url: '', total: RENDER_REQUESTS, concurrency: TOOLS_CONCURRENCY, expectStatus: 200 };
    rounds.png!.push(await runLoad({ ...render, urlAt: (i) => pngUrls[offset + i]! }));
    rounds.svg!.push(await runLoad({ ...render, urlAt: (i) => svgUrls[offset + i]! }));
    rounds.cached!.push(
      await runLoad({ url: cachedUrl, total: TOOLS_REQUESTS, concurrency: TOOLS_CONCURRENCY, expectStatus: 200 }),
    );
  }
  return {
    rows: [
      summarise('GET /api/v1/account (baseline: authenticated and counted)', rounds.account!),
      summarise('GET /api/v1/tools?search=pdf', rounds.search!),
      summarise('GET /api/v1/qr/image PNG 300, fresh render (each URL once)', rounds.png!),
      summarise('GET /api/v1/qr/image SVG 300, fresh render (each URL once)', rounds.svg!),
      summarise('GET /api/v1/qr/image PNG 300, repeated URL (Cache API hit)', rounds.cached!),
    ],
    png,
    svg,
  };
}
