// A PNG that declares alpha but is opaque (a screenshot's RGBA) → WebP: planned without libwebp's alpha
// encoder (18 bytes a pixel), so it fits where its alpha would not; one with a transparent pixel is
// refused 422 before encoding, naming the width that fits with alpha. Before, both were refused from
// the header (a 12 MP screenshot "needs about 249 MB").
import { beforeAll, describe, expect, it } from 'vitest';
import { readHeader } from '../../../src/compress/header.ts';
import { plan } from '../../../src/compress/memory-plan.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { bodyBytes, compressCall, decodeAny, expectLargestWidthWorks, photo, pngOf } from '../image-fixtures.ts';
import { ihdrOf } from '../png-fixtures.ts';
import { channelsOf } from '../webp-fixtures.ts';

const MiB = 1024 * 1024;
const [W, H] = [1000, 800];
let pro: TestKey;
let opaquePng: Uint8Array;
let translucentPng: Uint8Array;
let budgetMb: number;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  opaquePng = pngOf(photo(W, H));
  // One translucent pixel, in the last row: the refusal comes when the rows reach it.
  translucentPng = pngOf(photo(W, H, (x, y) => (x === W - 1 && y === H - 1 ? 128 : 255)));
  const header = readHeader('png', opaquePng);
  const request = { format: 'webp' as const, quality: 80 };
  const opaque = plan('png', { ...header, hasAlphaChannel: false }, opaquePng.length, request).estimate;
  budgetMb = Math.ceil(opaque / MiB) + 1;
  const withAlpha = plan('png', header, opaquePng.length, { ...request, guessOpaque: false }).estimate;
  // The case this test is about: the alpha plan would not fit the budget.
  expect(ihdrOf(opaquePng).colourType).toBe(6);
  expect(withAlpha).toBeGreaterThan(budgetMb * MiB);
});

describe('PNG with an alpha channel → WebP under a budget its alpha would not fit', () => {
  it('opaque: 200, a WebP without alpha, the same pixels', async () => {
    const res = await compressCall(
      pro.key,
      { image: opaquePng, filename: 'shot.png', format: 'webp', quality: '90' },
      { env: { MEMORY_BUDGET_MB: String(budgetMb) } },
    );
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(channelsOf(body)).not.toContain('ALPH');
    const decoded = decodeAny(body);
    expect([decoded.width, decoded.height]).toEqual([W, H]);
    const source = photo(W, H).data;
    let sum = 0;
    for (let i = 0; i < source.length; i++) sum += Math.abs(decoded.data[i]! - source[i]!);
    expect(sum / source.length).toBeLessThan(6);
  }, 30_000);

  it('with a transparent pixel: 422 image_too_large naming the width that fits with alpha, and that width works', async () => {
    const { error } = await expectLargestWidthWorks(
      pro.key,
      { image: translucentPng, filename: 'shot.png', format: 'webp' },
      W,
      { env: { MEMORY_BUDGET_MB: String(budgetMb) } },
    );
    expect(error.message).toMatch(/transparent pixels/);
  }, 30_000);
});
