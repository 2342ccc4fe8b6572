// lossless=true: WebP output that keeps every pixel, from PNG input and from a lossy
// WebP; refused where it means nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { makeKey, type TestKey } from './helpers.ts';
import { bodyBytes, compressCall, decodeAny, photo, pngOf } from './image-fixtures.ts';
import { channelsOf, lossyWebp } from './webp-fixtures.ts';

let pro: TestKey;
beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
});

/** A photo with a soft alpha edge: lossless means colour and alpha come back bit for bit. */
const source = () => photo(97, 61, (x, y) => Math.min(255, (x * 5 + y * 3) % 300));

describe('lossless=true', () => {
  it('turns a PNG into a lossless WebP: every alpha value kept, and every colour that can be seen', async () => {
    const image = source();
    const res = await compressCall(pro.key, {
      filename: 'in.png',
      image: pngOf(image),
      format: 'webp',
      lossless: 'true',
    });
    expect(res.status).toBe(200);
    const body = await bodyBytes(res);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(channelsOf(body)).toContain('VP8L');
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['97', '61']);
    // As cwebp without -exact: under a fully transparent pixel the colour is not kept (nothing shows it).
    const back = decodeAny(body);
    const differs: number[] = [];
    for (let i = 0; i < image.data.length; i += 4) {
      const alpha = image.data[i + 3]!;
      const same =
        back.data[i + 3] === alpha && (alpha === 0 || [0, 1, 2].every((c) => back.data[i + c] === image.data[i + c]));
      if (!same) differs.push(i / 4);
    }
    expect(differs).toEqual([]);
  });

  it('turns a lossy WebP into a lossless one (the decoded pixels, kept exactly)', async () => {
    const res = await compressCall(pro.key, {
      filename: 'in.webp',
      image: lossyWebp(photo(64, 48)),
      format: 'webp',
      lossless: 'true',
    });
    expect(res.status).toBe(200);
    expect(channelsOf(await bodyBytes(res))).toContain('VP8L');
  });

  it('is refused with other outputs and with a size target', async () => {
    const png = pngOf(photo(16, 16));
    for (const [parts, message] of [
      [{ format: 'png', lossless: 'true' }, /lossless=true works with webp output/],
      [{ format: 'jpeg', lossless: 'true' }, /lossless=true works with webp output/],
      [{ format: 'webp', lossless: 'true', target_kb: '5' }, /leave out target_kb/],
    ] as const) {
      const res = await compressCall(pro.key, { filename: 'in.png', image: png, ...parts });
      expect(res.status).toBe(400);
      const error = ((await res.json()) as { error: { param: string; message: string } }).error;
      expect(error.param).toBe('lossless');
      expect(error.message).toMatch(message);
    }
  });
});
