// GET /api/v1/img/…: signatures (403, free), the cache (a hit fetches, decodes and charges nothing),
// f=auto against Accept, the source under the URL rules, and the month (a miss over it is 429).
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/img/signature.ts';
import { deleteSecret, createSecret } from '../../src/signing/secrets.ts';
import { expectEachRefused, FORBIDDEN_HOSTS } from './helpers.ts';
import { addKey, manage } from './webhook-helpers.ts';
import {
  expectError,
  fetchesOf,
  getImage,
  gradient,
  monthUsed,
  ORIGIN,
  signed,
  signingAccount,
} from './img-helpers.ts';

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];
const isPng = (b: Uint8Array) => PNG_MAGIC.every((v, i) => b[i] === v);
const isWebp = (b: Uint8Array) => new TextDecoder().decode(b.subarray(8, 12)) === 'WEBP';
const isAvif = (b: Uint8Array) => new TextDecoder().decode(b.subarray(4, 12)) === 'ftypavif';
const pngWidth = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset).getUint32(16);
const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());
const CHROME_ACCEPT = 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8';

describe('signatures', () => {
  it('a signed URL answers the compressed image with its caching headers', async () => {
    const a = await signingAccount();
    const src = gradient(120, 80);
    const res = await getImage(await signed(a, 'w=60,q=70', src.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('vary')).toBe('Accept');
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers.get('x-cache')).toBe('MISS');
    const body = await bytesOf(res);
    expect(isPng(body)).toBe(true);
    expect(pngWidth(body)).toBe(60);
  });

  it('tampered options, tampered source, a truncated or missing signature: 403, nothing fetched or charged', async () => {
    const a = await signingAccount();
    const src = gradient();
    const path = await signed(a, 'w=32', src.url);
    const [, , , , account, signature, options, source] = path.split('/');
    const other = gradient();
    const otherSource = (await signed(a, 'w=32', other.url)).split('/').at(-1)!;
    const refused = [
      `/api/v1/img/${account}/${signature}/w=33/${source}`,
      `/api/v1/img/${account}/${signature}/${options}/${otherSource}`,
      `/api/v1/img/${account}/${signature!.slice(0, 42)}/${options}/${source}`,
      `/api/v1/img/${account}/${signature!.slice(0, 20)}/${options}/${source}`,
      `/api/v1/img/${account}/_/${options}/${source}`,
      // Right signature, someone else's account: their secrets do not sign it.
      `/api/v1/img/${(await signingAccount()).accountId}/${signature}/${options}/${source}`,
      `/api/v1/img/acc_nosuchaccount00000/${signature}/${options}/${source}`,
    ];
    for (const p of refused) {
      const res = await getImage(p);
      const error = await expectError(res, 403, 'forbidden');
      expect(error.message).toMatch(/signature/);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    expect(await fetchesOf(src.group)).toBe(0);
    expect(await fetchesOf(other.group)).toBe(0);
    expect(await monthUsed(a)).toBe(0);
  });

  it('after rotation both secrets sign until the old one is deleted; then its URLs are 403, even cached ones', async () => {
    const a = await signingAccount();
    const src = gradient();
    const oldPath = await signed(a, '_', src.url);
    expect((await getImage(oldPath)).status).toBe(200);
    const created = await createSecret(env.DB, a.accountId, Date.now());
    if (!created.ok) throw new Error('no second secret');
    const newPath = await signed({ ...a, secret: created.created.secret }, '_', src.url);
    expect((await getImage(oldPath)).headers.get('x-cache')).toBe('HIT');
    expect((await getImage(newPath)).status).toBe(200);

    const oldId = (await env.DB.prepare('SELECT id FROM signing_secrets WHERE secret = ?')
      .bind(a.secret)
      .first<{ id: string }>())!.id;
    expect(await deleteSecret(env.DB, a.accountId, oldId)).toBe(true);
    await expectError(await getImage(oldPath), 403, 'forbidden');
    const still = await getImage(newPath);
    expect(still.status).toBe(200);
    expect(still.headers.get('x-cache')).toBe('HIT');
  });
});

describe('the cache', () => {
  it('a second request is a hit: same bytes and ETag, no fetch, no charge', async () => {
    const a = await signingAccount();
    const src = gradient(200, 150);
    const path = await signed(a, 'w=100,q=60', src.url);
    const first = await getImage(path);
    const firstBytes = await bytesOf(first);
    expect(first.headers.get('x-cache')).toBe('MISS');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('9999');
    expect(await monthUsed(a)).toBe(1);
    expect(await fetchesOf(src.group)).toBe(1);

    const second = await getImage(path);
    expect(second.status).toBe(200);
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(second.headers.get('vary')).toBe('Accept');
    expect(second.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(second.headers.get('x-ratelimit-remaining')).toBeNull();
    expect(await bytesOf(second)).toEqual(firstBytes);
    // Nothing fetched (the source was not asked again), so nothing decoded; nothing charged.
    expect(await fetchesOf(src.group)).toBe(1);
    expect(await monthUsed(a)).toBe(1);

    // Another spelling of the same URL is the same entry.
    const respelled = await getImage(path.replace('w=100,q=60', 'w%3D100%2Cq%3D60'));
    expect(respelled.headers.get('x-cache')).toBe('HIT');
    await respelled.arrayBuffer();

    const revalidated = await getImage(path, { 'If-None-Match': first.headers.get('etag')! });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(await monthUsed(a)).toBe(1);
  });
});

describe('the cache key', () => {
  it('is the variant: options reordered or with defaults written out, another Host, the rotated secret all hit; another account pays its own', async () => {
    const a = await signingAccount();
    const src = gradient(120, 90);
    const first = await getImage(await signed(a, 'w=60,q=70', src.url));
    expect(first.headers.get('x-cache')).toBe('MISS');
    await first.arrayBuffer();
    const created = await createSecret(env.DB, a.accountId, Date.now());
    if (!created.ok) throw new Error('no second secret');
    const rotated = { ...a, secret: created.created.secret };
    const spellings = [
      await signed(a, 'q=70,w=60', src.url),
      await signed(a, 'w=60,q=70,m=strip', src.url),
      await signed(rotated, 'w=60,q=70', src.url),
    ];
    for (const path of spellings) {
      const res = await getImage(path);
      expect(res.headers.get('x-cache'), path).toBe('HIT');
      await res.arrayBuffer();
    }
    const otherHost = await getImage(`http://img.example.net${await signed(a, 'w=60,q=70', src.url)}`);
    expect(otherHost.headers.get('x-cache')).toBe('HIT');
    await otherHost.arrayBuffer();
    expect(await monthUsed(a)).toBe(1);
    expect(await fetchesOf(src.group)).toBe(1);

    const b = await signingAccount();
    const theirs = await getImage(await signed(b, 'w=60,q=70', src.url));
    expect(theirs.headers.get('x-cache')).toBe('MISS');
    await theirs.arrayBuffer();
    expect(await monthUsed(b)).toBe(1);
  });
});

describe('concurrent misses', () => {
  it('of one image make it once: one fetch, one charge, the same bytes for all', async () => {
    const a = await signingAccount();
    const src = gradient(300, 200);
    const path = await signed(a, 'q=60', src.url);
    const answers = await Promise.all(Array.from({ length: 4 }, () => getImage(path)));
    const bodies = await Promise.all(answers.map(bytesOf));
    for (const [i, res] of answers.entries()) {
      expect(res.status).toBe(200);
      expect(bodies[i]).toEqual(bodies[0]);
    }
    expect(await fetchesOf(src.group)).toBe(1);
    expect(await monthUsed(a)).toBe(1);
  });
});

describe('f=auto', () => {
  // The AVIF encoder's module takes seconds to load in the test runner, during which the fixture origin
  // drops the idle connection that the next fetch would reuse: load it first.
  beforeAll(() => import('../../wasm/avif-engine.ts'), 30_000);

  it('is AVIF when Accept names image/avif, else WebP when it names image/webp, else the source format; each cached apart', async () => {
    const a = await signingAccount();
    const src = gradient();
    const path = await signed(a, 'f=auto,q=70', src.url);
    const avif = await getImage(path, { Accept: CHROME_ACCEPT });
    expect(avif.headers.get('content-type'), await avif.clone().text()).toBe('image/avif');
    expect(avif.headers.get('vary')).toBe('Accept');
    expect(isAvif(await bytesOf(avif))).toBe(true);

    for (const accept of ['image/webp,image/*;q=0.8', 'image/avif;q=0,image/webp']) {
      const webp = await getImage(path, { Accept: accept });
      expect(webp.headers.get('content-type'), accept).toBe('image/webp');
      expect(webp.headers.get('vary')).toBe('Accept');
      expect(isWebp(await bytesOf(webp))).toBe(true);
    }

    for (const accept of ['image/png,image/*;q=0.8', '*/*', 'image/webp;q=0']) {
      const png = await getImage(path, { Accept: accept });
      expect(png.headers.get('content-type'), accept).toBe('image/png');
      expect(png.headers.get('vary')).toBe('Accept');
      expect(isPng(await bytesOf(png))).toBe(true);
    }
    const none = await getImage(path);
    expect(none.headers.get('content-type')).toBe('image/png');
    expect(none.headers.get('x-cache')).toBe('HIT');

    const again = await getImage(path, { Accept: 'image/avif' });
    expect(again.headers.get('x-cache')).toBe('HIT');
    expect(again.headers.get('content-type')).toBe('image/avif');
    // Three variants, three compressions, three fetches.
    expect(await fetchesOf(src.group)).toBe(3);
    expect(await monthUsed(a)).toBe(3);
  });

  it('is JPEG XL when Accept names image/jxl, before AVIF; never on the free tier, where f=jxl is 403', async () => {
    await import('../../wasm/jxl-engine.ts');
    const a = await signingAccount();
    const src = gradient();
    const path = await signed(a, 'f=auto,q=70', src.url);
    const jxl = await getImage(path, { Accept: `image/jxl,${CHROME_ACCEPT}` });
    expect(jxl.headers.get('content-type'), await jxl.clone().text()).toBe('image/jxl');
    expect(jxl.headers.get('vary')).toBe('Accept');
    expect([...(await bytesOf(jxl)).subarray(0, 2)]).toEqual([0xff, 0x0a]);
    const avif = await getImage(path, { Accept: CHROME_ACCEPT });
    expect(avif.headers.get('content-type')).toBe('image/avif');

    const free = await signingAccount('free');
    const freeAuto = await getImage(await signed(free, 'f=auto', src.url), { Accept: 'image/jxl,*/*' });
    expect(freeAuto.headers.get('content-type')).toBe('image/png');
    const error = await expectError(await getImage(await signed(free, 'f=jxl', src.url)), 403, 'plan_upgrade_required');
    expect(error.message).toBe(
      'JPEG XL output needs the pro tier; the free tier writes JPEG and PNG (f=auto serves them)',
    );
  }, 30_000);

  it('is never AVIF or WebP on the free tier, and f=avif or f=webp there is 403 plan_upgrade_required', async () => {
    const a = await signingAccount('free');
    const src = gradient();
    const res = await getImage(await signed(a, 'f=auto', src.url), { Accept: CHROME_ACCEPT });
    expect(res.headers.get('content-type')).toBe('image/png');
    for (const [format, name] of [
      ['webp', 'WebP'],
      ['avif', 'AVIF'],
    ] as const) {
      const error = await expectError(
        await getImage(await signed(a, `f=${format}`, src.url)),
        403,
        'plan_upgrade_required',
      );
      expect(error.message).toBe(
        `${name} output needs the pro tier; the free tier writes JPEG and PNG (f=auto serves them)`,
      );
    }
    expect(await fetchesOf(src.group)).toBe(1);
  });
});

describe('options', () => {
  it('follow the bounds of /compress: 400 naming the option, nothing charged', async () => {
    const a = await signingAccount();
    const src = gradient();
    for (const [options, message] of [
      ['w=0', /w must be an integer from 1 to 16384/],
      ['q=101', /q must be an integer from 1 to 100/],
      ['f=gif', /f must be one of jpeg, png, webp, avif, jxl, keep, auto/],
      ['w=10,w=20', /w is given twice/],
      ['zoom=2', /unknown parameter "zoom"/],
      ['w', /not name=value/],
    ] as const) {
      const error = await expectError(await getImage(await signed(a, options, src.url)), 400, 'bad_request');
      expect(error.message, options).toMatch(message);
    }
    expect(await fetchesOf(src.group)).toBe(0);
    expect(await monthUsed(a)).toBe(0);
  });
});

describe('the source', () => {
  it('404, too large (streamed or declared), not an image: an error, released, nothing charged', async () => {
    const a = await signingAccount();
    const notFound = await getImage(await signed(a, '_', `${ORIGIN}/img/missing.png`));
    const error = await expectError(notFound, 502, 'fetch_failed');
    expect(error.details).toMatchObject({ status: 404 });

    for (const huge of [`${ORIGIN}/img/huge.png`, `${ORIGIN}/img/huge.png?declared`]) {
      const tooLarge = await expectError(await getImage(await signed(a, '_', huge)), 422, 'image_too_large');
      expect(tooLarge.message).toMatch(/larger than 10 MB/);
    }
    await expectError(
      await getImage(await signed(a, '_', `${ORIGIN}/img/not-an-image`)),
      415,
      'unsupported_media_type',
    );
    expect(await monthUsed(a)).toBe(0);
  });

  it('a private address, or a redirect to one, is refused: 400, nothing charged', async () => {
    const a = await signingAccount();
    await expectEachRefused(
      [...FORBIDDEN_HOSTS.map((host) => `http://${host}/a.png`), 'ftp://example.com/a.png'],
      async (url) => getImage(await signed(a, '_', url)),
      { param: 'url', message: /must not point at|must use http/ },
    );
    const redirected = await expectError(
      await getImage(await signed(a, '_', `${ORIGIN}/redirect-private`)),
      400,
      'bad_request',
    );
    expect(redirected.message).toMatch(
      /^url redirects to http:\/\/10\.0\.0\.1\/admin, which must not point at 10\.0\.0\.1: it is a private address/,
    );
    // Without the test origin let through, the fixture origin is itself a loopback address.
    const loopback = await expectError(
      await getImage(await signed(a, '_', gradient().url), {}, { FETCH_TEST_ORIGIN: '' }),
      400,
      'bad_request',
    );
    expect(loopback.message).toMatch(/loopback|port/);
    expect(await monthUsed(a)).toBe(0);
  });

  it('a source segment that is not base64url of a URL is 400 (the signature is checked first)', async () => {
    const a = await signingAccount();
    const bad = 'bm90IGEgdXJs'; // "not a url"
    const error = await expectError(
      await getImage(`/api/v1/img/${a.accountId}/${await sign(a.secret, '_', bad)}/_/${bad}`),
      400,
      'bad_request',
    );
    expect(error.message).toMatch(/absolute URL/);
  });
});

describe('allowed source hosts', () => {
  it('with a list, the source and every redirect must be on it; an empty list lifts it', async () => {
    const a = await signingAccount();
    const m = await addKey(a, ['manage']);
    const put = (hosts: string[]) => manage(m.key, '/api/v1/image-source-hosts', { method: 'PUT', body: { hosts } });
    expect((await put(['images.example.com', '*.cdn.example.net'])).status).toBe(200);
    const src = gradient();
    const off = await expectError(await getImage(await signed(a, '_', src.url)), 400, 'bad_request');
    expect(off.message).toBe(
      'url must be on one of the allowed source hosts (*.cdn.example.net, images.example.com), not 127.0.0.1',
    );
    expect(await fetchesOf(src.group)).toBe(0);

    expect((await put(['127.0.0.1'])).status).toBe(200);
    expect((await getImage(await signed(a, '_', src.url))).status).toBe(200);
    const redirected = await expectError(
      await getImage(await signed(a, '_', `${ORIGIN}/redirect-private`)),
      400,
      'bad_request',
    );
    expect(redirected.message).toMatch(
      /^url redirects to http:\/\/10\.0\.0\.1\/admin, which must be on one of the allowed source hosts \(127\.0\.0\.1\)/,
    );

    expect((await put([])).status).toBe(200);
    expect((await getImage(await signed(a, 'w=10', src.url))).status).toBe(200);
    expect(await monthUsed(a)).toBe(2);
  });
});

describe('hosts', () => {
  it('image URLs are part of the image API: with IMAGE_API_HOST set, only that host answers them', async () => {
    const a = await signingAccount();
    const path = await signed(a, '_', gradient().url);
    const hosts = { IMAGE_API_HOST: 'img.shrinkray.test', TOOLS_API_HOST: 'tools.shrinkray.test' };
    await expectError(await getImage(`https://tools.shrinkray.test${path}`, {}, hosts), 404, 'not_found');
    expect((await getImage(`https://img.shrinkray.test${path}`, {}, hosts)).status).toBe(200);
  });
});

describe('the month', () => {
  it('a miss over the quota is 429 with Retry-After; a hit still answers', async () => {
    const a = await signingAccount('free');
    const cached = gradient();
    const cachedPath = await signed(a, '_', cached.url);
    expect((await getImage(cachedPath)).status).toBe(200);
    // Spend the rest of the free month on the account's meter, as 99 answered compressions would.
    const now = Date.now();
    const meter = env.ACCOUNT_METER.get(env.ACCOUNT_METER.idFromName(a.accountId));
    await Promise.all(
      Array.from({ length: 99 }, async () => {
        const id = crypto.randomUUID();
        await meter.reserve('free', now, id);
        await meter.commit('free', id, now);
      }),
    );
    const fresh = gradient();
    const refused = await getImage(await signed(a, '_', fresh.url));
    const error = await expectError(refused, 429, 'quota_exceeded');
    expect(error.message).toMatch(/100 compressions/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await fetchesOf(fresh.group)).toBe(0);

    const hit = await getImage(cachedPath);
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    expect(await monthUsed(a)).toBe(100);
  });
});
