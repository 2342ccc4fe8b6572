// The format part as people write it: `jpg` and media types (`image/png`) name their formats, `keep` keeps
// the input's format, palette=true alone means PNG, and a lossless output says `X-Quality: lossless`
// instead of a quality nothing used. Image URLs' `f` reads the same words.
import { describe, expect, it } from 'vitest';
import { makeKey, type TestKey } from './helpers.ts';
import { bodyBytes, compressCall, jpegOf, photo, pngOf, webpOf, type Parts } from './image-fixtures.ts';
import { expectError, getImage, gradient, signed, signingAccount } from './img-helpers.ts';

const free = () => makeKey({ scopes: ['image'], image: 'free' });
const pro = () => makeKey({ scopes: ['image'], image: 'pro' });

const INPUTS = { jpeg: jpegOf(photo(64, 48)), png: pngOf(photo(64, 48)), webp: webpOf(photo(64, 48)) };

async function compressed(k: TestKey, parts: Parts): Promise<Response> {
  const res = await compressCall(k.key, { image: INPUTS.png, filename: 'photo.png', ...parts });
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${await res.text()}`);
  await bodyBytes(res);
  return res;
}

async function badRequest(res: Response, param: string, message: RegExp) {
  const body = (await res.json()) as { error: { code: string; param: string; message: string } };
  expect(res.status, JSON.stringify(body)).toBe(400);
  expect(body.error.code).toBe('bad_request');
  expect(body.error.param).toBe(param);
  expect(body.error.message).toMatch(message);
  expect(res.headers.get('x-ratelimit-remaining')).toBe(res.headers.get('x-ratelimit-limit'));
}

describe('format spellings', () => {
  it('reads jpg as jpeg, and media types as their formats, case-insensitively', async () => {
    const k = await pro();
    for (const [format, type] of [
      ['jpg', 'image/jpeg'],
      ['JPG', 'image/jpeg'],
      ['image/jpeg', 'image/jpeg'],
      ['image/jpg', 'image/jpeg'],
      ['image/png', 'image/png'],
      ['Image/WebP', 'image/webp'],
    ]) {
      const res = await compressed(k, { format: format! });
      expect(res.headers.get('content-type'), format).toBe(type);
    }
  });

  it('still refuses what is no format, listing the choices', async () => {
    for (const bad of ['gif', 'image/gif', 'jpe', '', 'auto']) {
      const res = await compressCall((await pro()).key, { image: INPUTS.png, format: bad });
      await badRequest(
        res,
        'format',
        /^format must be one of jpeg, png, webp, avif, jxl, keep, json \(jpg and media types/,
      );
    }
  });

  it('keeps the tiers: image/webp on the free tier is 403 plan_upgrade_required', async () => {
    const res = await compressCall((await free()).key, { image: INPUTS.png, format: 'image/webp' });
    expect(res.status).toBe(403);
  });
});

describe('format=keep', () => {
  it('keeps each input format (WebP on pro)', async () => {
    const k = await pro();
    for (const [input, type] of [
      ['jpeg', 'image/jpeg'],
      ['png', 'image/png'],
      ['webp', 'image/webp'],
    ] as const) {
      const res = await compressed(k, { image: INPUTS[input], format: 'keep' });
      expect(res.headers.get('content-type'), input).toBe(type);
    }
  });

  it('answers a WebP input on the free tier with JPEG, as an image URL without f does', async () => {
    const k = await free();
    const res = await compressed(k, { image: INPUTS.webp, format: 'keep' });
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const png = await compressed(k, { image: INPUTS.png, format: 'KEEP' });
    expect(png.headers.get('content-type')).toBe('image/png');
  });

  it('applies the rules of the format it keeps, and spends nothing when they refuse', async () => {
    const k = await pro();
    await badRequest(
      await compressCall(k.key, { image: INPUTS.png, format: 'keep', target_kb: '10' }),
      'target_kb',
      /target_kb works with jpeg, webp, avif and jxl output only/,
    );
    await badRequest(
      await compressCall(k.key, { image: INPUTS.jpeg, format: 'keep', palette: 'true' }),
      'palette',
      /palette=true works with png output only/,
    );
    const palette = await compressed(k, { image: INPUTS.png, format: 'keep', palette: 'true' });
    expect(palette.headers.get('content-type')).toBe('image/png');
  });
});

describe('palette=true', () => {
  it('without format means PNG', async () => {
    const res = await compressed(await free(), { palette: 'true', colors: '16' });
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-disposition')).toBe('inline; filename="photo.png"');
  });

  it('with another format is still refused', async () => {
    await badRequest(
      await compressCall((await free()).key, { image: INPUTS.png, format: 'jpeg', palette: 'true' }),
      'palette',
      /palette=true works with png output only/,
    );
  });

  it('leaves the default JPEG without it', async () => {
    const res = await compressed(await free(), {});
    expect(res.headers.get('content-type')).toBe('image/jpeg');
  });
});

describe('X-Quality', () => {
  it('says lossless for lossless output: PNG without a palette, and lossless WebP', async () => {
    const k = await pro();
    const png = await compressed(k, { format: 'png', quality: '60' });
    expect(png.headers.get('x-quality')).toBe('lossless');
    const fromJpeg = await compressed(k, { image: INPUTS.jpeg, format: 'png' });
    expect(fromJpeg.headers.get('x-quality')).toBe('lossless');
    const webp = await compressed(k, { format: 'webp', lossless: 'true' });
    expect(webp.headers.get('x-quality')).toBe('lossless');
  });

  it('stays the quality used for lossy output', async () => {
    const res = await compressed(await pro(), { format: 'webp', quality: '60' });
    expect(res.headers.get('x-quality')).toBe('60');
  });
});

describe("image URLs' f", () => {
  it('reads jpg as jpeg, and keep as no f (the source format)', async () => {
    const a = await signingAccount('free');
    const src = gradient();
    const jpg = await getImage(await signed(a, 'f=jpg', src.url));
    expect(jpg.status).toBe(200);
    expect(jpg.headers.get('content-type')).toBe('image/jpeg');
    const kept = await getImage(await signed(a, 'f=keep', src.url));
    expect(kept.status).toBe(200);
    expect(kept.headers.get('content-type')).toBe('image/png');
  });

  it('lists keep among the choices when refusing', async () => {
    const a = await signingAccount('free');
    const error = await expectError(await getImage(await signed(a, 'f=gif', gradient().url)), 400, 'bad_request');
    expect(error.message).toMatch(/f must be one of jpeg, png, webp, avif, jxl, keep, auto/);
  });
});
