// Transformations through signed image URLs: fit, g, r, flip, bg and dpr beside w, h, q, f; the crop answered
// on a miss and on a hit; one cache entry for every spelling of one transformation; invalid values refused 400 naming the option, before any fetch.
// The source is the fixture origin's 64×48 gradient: red grows to the right, green downwards.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RgbaImage } from '../../../wasm/image.ts';
import { makeKey } from '../helpers.ts';
import { compressCall, decodeAny, pixel, pngOf, quadrants } from '../image-fixtures.ts';
import { expectError, fetchesOf, getImage, gradient, monthUsed, signed, signingAccount } from '../img-helpers.ts';

beforeAll(async () => {
  // The engine's first instance is made on the first compression: not inside the first test's time.
  const warm = await makeKey({ image: 'pro' });
  await compressCall(warm.key, { image: pngOf(quadrants(8, 8)), filename: 'w.png', format: 'png' });
}, 30_000);

const image = async (res: Response): Promise<RgbaImage> => {
  expect(res.status).toBe(200);
  return decodeAny(new Uint8Array(await res.arrayBuffer()));
};

describe('transformations on signed image URLs', () => {
  it('r=90 turns the image clockwise: the source left is the output top, its bottom the output left', async () => {
    const a = await signingAccount();
    const out = await image(await getImage(await signed(a, 'r=90,f=png', gradient().url)));
    expect([out.width, out.height]).toEqual([48, 64]);
    expect(pixel(out, 24, 2)[0]).toBeLessThan(40);
    expect(pixel(out, 24, 61)[0]).toBeGreaterThan(215);
    expect(pixel(out, 2, 32)[1]).toBeGreaterThan(215);
    expect(pixel(out, 45, 32)[1]).toBeLessThan(40);
  });

  it('flip=h mirrors; fit=cover with g crops where asked', async () => {
    const a = await signingAccount();
    const flipped = await image(await getImage(await signed(a, 'flip=h,f=png', gradient().url)));
    expect(pixel(flipped, 2, 24)[0]).toBeGreaterThan(215);
    const left = await image(await getImage(await signed(a, 'fit=cover,w=32,h=32,g=left,f=png', gradient().url)));
    const right = await image(await getImage(await signed(a, 'fit=cover,w=32,h=32,g=right,f=png', gradient().url)));
    expect([left.width, left.height, right.width, right.height]).toEqual([32, 32, 32, 32]);
    // Resized to 43×32: the left crop ends at about source x 48 (red 190), the right one at the edge.
    expect(pixel(left, 31, 16)[0]).toBeLessThan(215);
    expect(pixel(right, 31, 16)[0]).toBeGreaterThan(230);
  });

  it('fit=pad fills with bg (hex without #); dpr multiplies w and h', async () => {
    const a = await signingAccount();
    const padded = await image(await getImage(await signed(a, 'fit=pad,w=64,h=64,bg=00ff00,f=png', gradient().url)));
    expect([padded.width, padded.height]).toEqual([64, 64]);
    expect(pixel(padded, 32, 2)).toEqual([0, 255, 0, 255]);
    const dense = await image(await getImage(await signed(a, 'w=16,dpr=2,f=png', gradient().url)));
    expect([dense.width, dense.height]).toEqual([32, 24]);
  });

  it('one transformation, however spelt, is one cache entry and one charge', async () => {
    const a = await signingAccount();
    const src = gradient();
    const first = await getImage(await signed(a, 'fit=cover,w=32,h=32,g=top-left,r=90', src.url));
    expect(first.headers.get('x-cache')).toBe('MISS');
    // Turned clockwise, the 64×48 source is 48×64, covered at 32×43: the top 32 rows kept were its left side.
    expect(first.headers.get('x-crop-box')).toBe('0,0,48,48');
    expect(first.headers.get('x-gravity')).toBe('top-left');
    await first.arrayBuffer();
    const again = await getImage(await signed(a, 'r=90,g=TOP-LEFT,h=16,w=16,dpr=2,fit=cover', src.url));
    expect(again.headers.get('x-cache')).toBe('HIT');
    // A hit answers where the crop was taken as the miss did.
    expect(again.headers.get('x-crop-box')).toBe('0,0,48,48');
    expect(again.headers.get('x-gravity')).toBe('top-left');
    await again.arrayBuffer();
    const other = await getImage(await signed(a, 'fit=cover,w=32,h=32,g=top-left,r=270', src.url));
    expect(other.headers.get('x-cache')).toBe('MISS');
    await other.arrayBuffer();
    expect(await fetchesOf(src.group)).toBe(2);
    expect(await monthUsed(a)).toBe(2);
  });

  it('invalid values: 400 naming the option, nothing fetched or charged', async () => {
    const a = await signingAccount();
    const src = gradient();
    for (const [options, message] of [
      ['g=2x0.5', /^options: g must be one of center.*focal point XxY/],
      ['fit=cover,w=10', /^options: fit=cover needs both w and h/],
      ['r=45', /^options: r must be one of 90, 180, 270/],
      ['flip=x', /^options: flip must be one of h, v, hv/],
      ['bg=red', /^options: bg must be a hex colour without #/],
      ['dpr=5', /^options: dpr must be a number from 1 to 4/],
      ['fit=fill', /^options: fit must be one of scale-down/],
    ] as const) {
      const error = await expectError(await getImage(await signed(a, options, src.url)), 400, 'bad_request');
      expect(error.message, options).toMatch(message);
    }
    expect(await fetchesOf(src.group)).toBe(0);
    expect(await monthUsed(a)).toBe(0);
  });
});
