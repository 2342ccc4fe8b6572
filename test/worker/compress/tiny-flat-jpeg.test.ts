// A small flat JPEG is whole: its scan is a few bytes, which libjpeg's bit buffer reads ahead up to the
// end-of-image marker before the last rows are decoded. The engine took that marker, seen early, for a
// scan cut short and refused the file with 422 (a 64 × 48 grey placeholder, 170 bytes). A scan really
// cut short stays refused (image-liars.test.ts, jpeg-engine.test.ts).
import { expect, it } from 'vitest';
import { encodePixelsJpeg } from '../../../wasm/jpeg-engine.ts';
import { makeKey } from '../helpers.ts';
import { bodyBytes, compressCall, decodeAny } from '../image-fixtures.ts';

it('a small flat grey JPEG compresses (its whole scan read ahead before the last row)', async () => {
  const key = (await makeKey({ scopes: ['image'], image: 'free' })).key;
  for (const [width, height, level] of [
    [64, 48, 128],
    [16, 16, 200],
  ] as const) {
    const jpeg = encodePixelsJpeg(new Uint8Array(width * height).fill(level), width, height, 1, { quality: 80 });
    const res = await compressCall(key, { image: jpeg, format: 'png' });
    const body = await bodyBytes(res);
    expect(res.status, new TextDecoder().decode(body.subarray(0, 200))).toBe(200);
    const out = decodeAny(body);
    expect([out.width, out.height]).toEqual([width, height]);
    expect(Math.abs(out.data[0]! - level)).toBeLessThanOrEqual(2);
  }
}, 15_000);
