// GET /qr and GET /qr/image over HTTP: parameters, signing, caching headers, and the rendered images
// read back by a real QR decoder.
import { beforeAll, describe, expect, it } from 'vitest';
import { qrRenderStats } from '../../src/qr/qr-image.ts';
import { SIGNED_PARAMS } from '../../src/qr/signature.ts';
import {
  call,
  captureConsole,
  expectEachRefused,
  makeKey,
  toolsHeaders,
  type Refusal,
  type TestKey,
} from './helpers.ts';
import { decodePngQr, decodeSvgQr, readPng, rasteriseSvg } from './qr-decode.ts';

let k: TestKey;
beforeAll(async () => {
  k = await makeKey({ tools: 'enterprise' });
});

const ask = (query: string, overrides?: Record<string, unknown>) =>
  call(`/api/v1/qr?${query}`, { headers: toolsHeaders(k.key), ...(overrides ? { env: overrides } : {}) });

async function qr(query: string, overrides?: Record<string, unknown>) {
  const res = await ask(query, overrides);
  return { res, body: await res.json<any>() };
}

async function signedUrl(query: string): Promise<string> {
  const { res, body } = await qr(query);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.data.url;
}

/** The signed URL with one parameter replaced (or removed, with null). */
function withParam(url: string, name: string, value: string | null): string {
  const u = new URL(url);
  if (value === null) u.searchParams.delete(name);
  else u.searchParams.set(name, value);
  return u.toString();
}

const enc = (s: string) => encodeURIComponent(s);

describe('GET /api/v1/qr', () => {
  it('answers the signed image URL and the options with their defaults', async () => {
    const { res, body } = await qr('data=hello');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(body.data).toMatchObject({
      format: 'png',
      size: 300,
      color: '000000',
      bgcolor: 'ffffff',
      ecc: 'M',
      margin: 4,
      data: 'hello',
    });
    const url = new URL(body.data.url);
    expect(url.origin + url.pathname).toBe('https://api.shrinkray.test/api/v1/qr/image');
    expect([...url.searchParams.keys()]).toEqual([...SIGNED_PARAMS, 'sig']);
    expect(url.searchParams.get('sig')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.meta.tier).toBe('enterprise');
  });

  it('normalises colors, format and ecc to their canonical spelling', async () => {
    const { body } = await qr('data=x&color=F80&bgcolor=ABCDEF&format=SVG&ecc=h');
    expect(body.data).toMatchObject({ color: 'ff8800', bgcolor: 'abcdef', format: 'svg', ecc: 'H' });
  });

  it('accepts every bound and refuses just past it, naming the parameter', async () => {
    const ok = [
      'size=50',
      'size=1000',
      'margin=0',
      'margin=10',
      'ecc=L',
      'ecc=Q',
      'format=png',
      'color=000',
      'bgcolor=123456',
    ];
    for (const q of ok) expect((await qr(`data=a&${q}`)).res.status, q).toBe(200);
    const hex = 'must be a 3- or 6-digit hex color without #, such as 000000 or f80';
    const bad: Refusal[] = [
      ['size', 'size must be an integer from 50 to 1000', 'size=49', 'size=1001', 'size=3e2'],
      ['margin', 'margin must be an integer from 0 to 10', 'margin=11', 'margin=-1'],
      ['ecc', 'ecc must be one of L, M, Q, H', 'ecc=X'],
      ['format', 'format must be one of png, svg', 'format=gif'],
      ['color', `color ${hex}`, 'color=%23000000', 'color=0000', 'color=ggg'],
      ['bgcolor', `bgcolor ${hex}`, 'bgcolor=fff%22%3E%3Cscript%3E'],
      ['bgcolor', 'color and bgcolor must differ, or the code cannot be read', 'color=abc&bgcolor=AABBCC'],
    ];
    for (const [param, message, ...queries] of bad)
      await expectEachRefused(queries, (q) => ask(`data=a&${q}`), { param, message });
  });

  it('requires non-empty data', async () => {
    for (const q of ['', 'data=', 'size=300']) {
      const { res, body } = await qr(q);
      expect(res.status, q).toBe(400);
      expect(body.error.param, q).toBe('data');
    }
  });

  it('refuses data that does not fit at the chosen ecc, with the byte counts', async () => {
    const limits = { L: 2953, M: 2331, Q: 1663, H: 1273 } as const;
    for (const [ecc, max] of Object.entries(limits)) {
      expect((await qr(`data=${'a'.repeat(max)}&ecc=${ecc}&size=1000&margin=0`)).res.status, ecc).toBe(200);
      const { res, body } = await qr(`data=${'a'.repeat(max + 1)}&ecc=${ecc}`);
      expect(res.status, ecc).toBe(400);
      expect(body.error).toMatchObject({ code: 'bad_request', param: 'data', details: { bytes: max + 1, max } });
      expect(body.error.message).toContain(`at ecc=${ecc} a QR code holds at most ${max} bytes`);
    }
    // Counted in UTF-8 bytes: 800 × "é" is 1,600 bytes, over H's 1,273.
    const { body } = await qr(`data=${enc('é'.repeat(800))}&ecc=H`);
    expect(body.error.details).toEqual({ bytes: 1600, max: 1273 });
  });

  it('refuses a size too small to give every module a pixel', async () => {
    const { res, body } = await qr(`data=${'a'.repeat(500)}&size=50`);
    expect(res.status).toBe(400);
    expect(body.error.param).toBe('size');
    expect(body.error.details.min).toBeGreaterThan(50);
    expect((await qr(`data=${'a'.repeat(500)}&size=${body.error.details.min}`)).res.status).toBe(200);
  });

  it('refuses unknown parameters and text that is not valid percent-encoded UTF-8', async () => {
    const unknown = await qr('data=a&colour=fff');
    expect(unknown.body.error).toMatchObject({ code: 'bad_request', param: 'colour' });
    // An encoded lone surrogate and a truncated sequence: never silently replaced or kept as "%ED…".
    for (const data of ['%ED%A0%80', 'ab%E2%82', '%FF', 'a=b%E0']) {
      const { res, body } = await qr(`data=${data}`);
      expect(res.status, data).toBe(400);
      expect(body.error.param, data).toBe('data');
    }
  });

  it('needs a key and counts as a request', async () => {
    expect((await call('/api/v1/qr?data=a')).status).toBe(401);
    const free = await makeKey();
    const res = await call('/api/v1/qr?data=a', { headers: toolsHeaders(free.key) });
    expect(res.headers.get('x-ratelimit-remaining')).toBe('99');
  });

  it('is a 500 with the envelope, not a weak signature, when the secret is missing or short', async () => {
    for (const secret of [undefined, 'short']) {
      const {
        result: { res, body },
        lines,
      } = await captureConsole('error', () => qr('data=a', { QR_SIGNING_SECRET: secret }));
      expect(res.status).toBe(500);
      expect(body.error.code).toBe('internal_error');
      // The operator hears why; the secret itself is never logged.
      expect(lines.join('\n')).toMatch(/QR_SIGNING_SECRET/);
      expect(lines.join('\n')).not.toContain('short');
    }
  });
});

describe('GET /api/v1/qr/image', () => {
  it('renders a PNG of exactly size × size with immutable caching headers, no key needed', async () => {
    const url = await signedUrl('data=hello&size=256');
    const res = await call(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('etag')).toMatch(/^"r1-[A-Za-z0-9_-]{43}"$/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    const png = new Uint8Array(await res.arrayBuffer());
    const pixels = await readPng(png);
    expect([pixels.width, pixels.height]).toEqual([256, 256]);
    expect((await decodePngQr(png))?.text).toBe('hello');
  });

  it('renders SVG of that size, with a viewBox and a restrictive CSP', async () => {
    const url = await signedUrl('data=hello&format=svg&size=333&color=224466');
    const res = await call(url);
    expect(res.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'");
    const svg = await res.text();
    const raster = rasteriseSvg(svg);
    expect([raster.svgWidth, raster.svgHeight, raster.viewBox]).toEqual([333, 333, '0 0 333 333']);
    expect(svg).toContain('fill:#224466');
    expect(decodeSvgQr(svg)?.text).toBe('hello');
  });

  const texts = {
    'short text': 'Shrinkray',
    'a long URL': `https://example.com/a/very/long/path?utm_source=newsletter&utm_medium=email&q=${'x'.repeat(200)}&page=2#section-3`,
    'non-ASCII text': 'Grüße, 東京! Ça coûte 5 € — 🎉👍🏽 𝄞 \u0080\u07ff\u0800\uffff',
  };
  for (const [label, text] of Object.entries(texts)) {
    for (const format of ['png', 'svg'] as const) {
      it(`carries the exact UTF-8 bytes of ${label} (${format})`, async () => {
        const url = await signedUrl(`data=${enc(text)}&format=${format}&size=600&ecc=Q`);
        const res = await call(url);
        expect(res.status).toBe(200);
        const decoded =
          format === 'png' ? await decodePngQr(new Uint8Array(await res.arrayBuffer())) : decodeSvgQr(await res.text());
        expect(decoded).not.toBeNull();
        expect([...decoded!.bytes]).toEqual([...new TextEncoder().encode(text)]);
        expect(decoded!.text).toBe(text);
      });
    }
  }

  it('refuses a changed value of every signed parameter with 403', async () => {
    const url = await signedUrl('data=hello&size=300&color=000000&bgcolor=ffffff&format=png&ecc=M&margin=4');
    expect((await call(url)).status).toBe(200);
    const tampered: Record<(typeof SIGNED_PARAMS)[number], string[]> = {
      data: ['hellO', 'hello ', 'hello2', ''],
      size: ['301', '0300', '1000'],
      color: ['000001', '000', 'ff0000'],
      bgcolor: ['fffffe', 'FFFFFF'],
      format: ['svg', 'PNG'],
      ecc: ['H', 'm'],
      margin: ['0', '04', '10'],
    };
    for (const [param, values] of Object.entries(tampered)) {
      for (const value of [...values, null]) {
        const res = await call(withParam(url, param, value));
        const body = await res.json<any>();
        expect(res.status, `${param}=${value}`).toBe(403);
        expect(body.error, `${param}=${value}`).toMatchObject({ code: 'forbidden', param: 'sig' });
      }
    }
  });

  it('refuses a missing, altered or malformed signature with 403', async () => {
    const url = await signedUrl('data=hello');
    const sig = new URL(url).searchParams.get('sig')!;
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    for (const value of [
      null,
      '',
      flipped,
      sig.slice(0, -1),
      `${sig}A`,
      sig.toLowerCase(),
      '%%%',
      `${sig.slice(0, -2)}==`,
    ]) {
      const res = await call(withParam(url, 'sig', value));
      expect(res.status, String(value)).toBe(403);
    }
  });

  it('refuses unknown and repeated parameters with 400', async () => {
    const url = await signedUrl('data=hello');
    const extra = await call(`${url}&v=2`);
    expect(extra.status).toBe(400);
    expect((await extra.json<any>()).error.param).toBe('v');
    const twice = await call(`${url}&size=300`);
    expect(twice.status).toBe(400);
    expect((await twice.json<any>()).error).toMatchObject({ param: 'size', message: 'size must be given once' });
  });

  it('answers If-None-Match with 304 and no body', async () => {
    const url = await signedUrl('data=etag-test');
    const etag = (await call(url)).headers.get('etag')!;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await call(url, { headers: { 'If-None-Match': header } });
      expect(res.status, header).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(await res.text()).toBe('');
    }
    expect((await call(url, { headers: { 'If-None-Match': '"r1-something-else"' } })).status).toBe(200);
  });

  it('keeps the render in the Cache API under the signed URL', async () => {
    const url = await signedUrl(`data=cache-${crypto.randomUUID()}`);
    const first = new Uint8Array(await (await call(url)).arrayBuffer());
    const cached = await caches.default.match(url);
    expect(cached?.status).toBe(200);
    expect(new Uint8Array(await cached!.arrayBuffer())).toEqual(first);
    const hit = await call(url);
    expect(hit.headers.get('x-request-id')).toMatch(/^req_/);
    expect(hit.headers.get('etag')).toMatch(/^"r1-/);
    expect(new Uint8Array(await hit.arrayBuffer())).toEqual(first);
  });

  it('accepts URLs signed with the previous secret during a rotation, and only then', async () => {
    const old = 'the-old-qr-secret-that-is-being-rotated-away';
    const { body } = await qr('data=rotation', { QR_SIGNING_SECRET: old });
    const url = body.data.url;
    expect((await call(url)).status).toBe(403);
    expect((await call(url, { env: { QR_SIGNING_SECRET_PREVIOUS: old } })).status).toBe(200);
  });

  it('answers HEAD with the headers and no body', async () => {
    const url = await signedUrl('data=head');
    const res = await call(url, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(await res.text()).toBe('');
  });

  it('renders each signed image once: other spellings redirect to the canonical URL, HEAD and concurrent misses share the render', async () => {
    // A space, a slash and a plus: three characters with more than one spelling in a query string.
    const data = `render once/${crypto.randomUUID()}+x`;
    const url = await signedUrl(`data=${enc(data)}`);
    const u = new URL(url);
    const q = u.search.slice(1);
    const before = qrRenderStats.renders;

    // Ten HEADs and ten GETs at once, all cache misses: one render between them.
    const answers = await Promise.all([...Array(10)].flatMap(() => [call(url, { method: 'HEAD' }), call(url)]));
    for (const res of answers) expect(res.status).toBe(200);
    const bodies = await Promise.all(answers.map((r) => r.arrayBuffer()));
    const png = new Uint8Array(bodies.find((b) => b.byteLength > 0)!);
    expect(bodies.filter((b) => b.byteLength > 0)).toHaveLength(10);
    expect(new Set(answers.map((r) => r.headers.get('etag'))).size).toBe(1);
    expect(qrRenderStats.renders - before).toBe(1);

    // Spellings the signature cannot tell apart: each is a 301 to the canonical URL, never a render.
    const params = q.split('&');
    const variants = [
      q.replace('format=png', 'format=%70ng'),
      q.replace('format=png', 'f%6Frmat=png'),
      [...params].reverse().join('&'),
      [params[6], ...params.slice(0, 6), params[7]].join('&'),
      q.replace('%20', '+'),
      q.replace(/%2F/g, '%2f'),
      q.replace('%2B', '%2b'),
      q.replace('size=300', 'size=%33%30%30'),
      q.replace(/sig=(.)/, (_m, ch: string) => `sig=%${ch.charCodeAt(0).toString(16).toUpperCase()}`),
      `${q}&`,
    ];
    for (const variant of variants) {
      expect(variant, variant).not.toBe(q);
      for (const method of ['GET', 'HEAD']) {
        const res = await call(`${u.origin}${u.pathname}?${variant}`, { method });
        expect(res.status, `${method} ${variant}`).toBe(301);
        expect(res.headers.get('location'), variant).toBe(url);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
      }
    }
    const otherPath = await call(`${u.origin}/api/v1/qr/%69mage?${q}`);
    expect([otherPath.status, otherPath.headers.get('location')]).toEqual([301, url]);
    // Followed, the redirect lands on the one cache entry.
    const followed = await call(url);
    expect(new Uint8Array(await followed.arrayBuffer())).toEqual(png);
    expect(await call(url, { method: 'HEAD' }).then((r) => r.status)).toBe(200);
    expect(qrRenderStats.renders - before).toBe(1);
    // The data reads back exactly.
    expect((await decodePngQr(png))?.text).toBe(data);
  });

  it('checks the signature before redirecting a spelling', async () => {
    const url = await signedUrl('data=redirect-check');
    const q = new URL(url).search.slice(1);
    const forged = q.replace('data=redirect-check', 'data=redirect-chec%6B2');
    const res = await call(`/api/v1/qr/image?${forged.split('&').reverse().join('&')}`);
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
  });

  it("fills the cache from a HEAD, and answers a HEAD from a GET's entry", async () => {
    const first = await signedUrl(`data=head-first-${crypto.randomUUID()}`);
    const before = qrRenderStats.renders;
    expect((await call(first, { method: 'HEAD' })).status).toBe(200);
    expect((await caches.default.match(first))?.status).toBe(200);
    expect((await call(first)).status).toBe(200);
    const second = await signedUrl(`data=get-first-${crypto.randomUUID()}`);
    expect((await call(second)).status).toBe(200);
    const head = await call(second, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, 'image/png', '']);
    expect(qrRenderStats.renders - before).toBe(2);
  });

  it('needs the signing secret configured', async () => {
    const url = await signedUrl('data=a');
    const { result: res, lines } = await captureConsole('error', () =>
      call(url, { env: { QR_SIGNING_SECRET: undefined } }),
    );
    expect(res.status).toBe(500);
    expect(lines.join('\n')).toMatch(/QR_SIGNING_SECRET/);
  });
});
