// Signed image URL bench: what a cache hit saves. Per round, misses (a fresh source each: fetch from the
// loopback fixture origin, decode, resize, encode, charge), hits (the same URL again: the stored bytes),
// and refused signatures (403: one D1 read and an HMAC), interleaved so the machine's noise hits all alike.
import { signedPath } from '../../src/img/signature.ts';
import { fetchOnce, median } from './lib/load.ts';
import type { Service } from './lib/server.ts';

export const IMG_ROUNDS = 7;
export const IMG_MISSES = 4;
export const IMG_REPEATS = 20;
/** The source of every miss: a generated PNG of this size, asked for at half width as JPEG. */
export const IMG_SOURCE = { width: 1600, height: 1067 } as const;
const OPTIONS = 'w=800,f=jpeg,q=75';

export interface ImgRow {
  name: string;
  p50: number;
  roundMedians: number[];
}

async function timed(url: string, expect: { status: number; cache?: string }): Promise<number> {
  const t0 = performance.now();
  const res = await fetchOnce(url);
  await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status !== expect.status || (expect.cache && res.headers.get('x-cache') !== expect.cache)) {
    throw new Error(
      `${url} answered ${res.status} X-Cache ${res.headers.get('x-cache')}, not ${expect.status} ${expect.cache ?? ''}`,
    );
  }
  return ms;
}

export async function benchImg(service: Service, origin: string): Promise<ImgRow[]> {
  const accounts = service.admin(['account', 'list']) as { id: string; email: string }[];
  const account = accounts.find((a) => a.email === 'demo-image-pro@shrinkray.local');
  if (!account) throw new Error('no demo pro account');
  const manage = (
    service.admin(['key', 'create', '--account', account.id, '--scopes', 'manage', '--name', 'bench']) as {
      key: string;
    }
  ).key;
  const created = await fetchOnce(`${service.base}/api/v1/signing-secrets`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${manage}` },
  });
  if (created.status !== 201)
    throw new Error(`POST /signing-secrets answered ${created.status}: ${await created.text()}`);
  const secret = ((await created.json()) as { data: { secret: string } }).data.secret;
  const source = (tag: string) =>
    `${origin}/img/gradient.png?w=${IMG_SOURCE.width}&h=${IMG_SOURCE.height}&group=bench-${tag}`;
  const url = async (tag: string) => service.base + (await signedPath(account.id, secret, OPTIONS, source(tag)));

  const rounds = { miss: [] as number[], hit: [] as number[], refused: [] as number[] };
  // One warm-up miss: the first compression loads the codecs.
  await timed(await url('warm'), { status: 200, cache: 'MISS' });
  for (let r = 0; r < IMG_ROUNDS; r++) {
    const misses: number[] = [];
    const hits: number[] = [];
    const refused: number[] = [];
    let hitUrl = '';
    for (let i = 0; i < IMG_MISSES; i++) {
      hitUrl = await url(`${r}-${i}-${crypto.randomUUID()}`);
      misses.push(await timed(hitUrl, { status: 200, cache: 'MISS' }));
    }
    // Another last character (A and Q differ in its 4 bits that count): a signature ending in A stays valid with A.
    const bad = hitUrl.replace(
      /\/img\/([^/]+)\/([^/]+)\//,
      (_m, acc: string, sig: string) => `/img/${acc}/${sig.slice(0, -1)}${sig.endsWith('A') ? 'Q' : 'A'}/`,
    );
    for (let i = 0; i < IMG_REPEATS; i++) {
      hits.push(await timed(hitUrl, { status: 200, cache: 'HIT' }));
      refused.push(await timed(bad, { status: 403 }));
    }
    rounds.miss.push(median(misses));
    rounds.hit.push(median(hits));
    rounds.refused.push(median(refused));
  }
  return [
    {
      name: `miss (fetch ${IMG_SOURCE.width}×${IMG_SOURCE.height} PNG, ${OPTIONS})`,
      p50: median(rounds.miss),
      roundMedians: rounds.miss,
    },
    { name: 'hit (X-Cache: HIT)', p50: median(rounds.hit), roundMedians: rounds.hit },
    { name: '403 (bad signature)', p50: median(rounds.refused), roundMedians: rounds.refused },
  ];
}
