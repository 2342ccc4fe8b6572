// blur and sharpen (src/compress/transform/filters.ts) against sharp on the same pixels: blur against
// sharp's Gaussian at the sigma `blur` stands for (in float, its mask not cut at a fifth of its peak as
// sharp's default is), on both of our paths (one kernel up to sigma 2, three box filters past it);
// sharpen against sharp's unsharp mask of the same sigma and amount (its thresholds and clamps opened),
// by the detail each adds: libvips sharpens L* in Lab, we the luma, so alike, not equal. A small picture.
import sharp, { type Sharp } from 'sharp';
import { describe, expect, it } from 'vitest';
import { blurRows, sharpenRows, type RowFilter } from '../../src/compress/transform/filters.ts';
import { BLUR_SIGMA_PER_STEP, SHARPEN_AMOUNT_PER_STEP, SHARPEN_SIGMA } from '../../src/compress/transform/options.ts';

const [W, H] = [160, 120];

/** Smooth gradients, stripes and a little noise: detail at every scale. */
function picture(): Uint8Array {
  const data = new Uint8Array(W * H * 4);
  let seed = 7;
  const noise = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24) / 16 - 8;
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 4;
      data[i] = Math.max(0, Math.min(255, (255 * x) / W + 30 * Math.sin(y / 3) + noise()));
      data[i + 1] = Math.max(0, Math.min(255, (255 * y) / H + (x % 16 < 8 ? 40 : -40) + noise()));
      data[i + 2] = Math.max(0, Math.min(255, 128 + 100 * Math.sin((x + y) / 9) + noise()));
      data[i + 3] = 255;
    }
  return data;
}

async function run(make: (sink: (row: Uint8Array) => void) => RowFilter, src: Uint8Array): Promise<Uint8Array> {
  const out = new Uint8Array(src.length);
  let y = 0;
  const filter = make((row) => {
    out.set(row, y++ * W * 4);
  });
  for (let r = 0; r < H; r++) await filter.push(src.subarray(r * W * 4, (r + 1) * W * 4));
  await filter.end();
  expect(y).toBe(H);
  return out;
}

const theirs = (src: Uint8Array, op: (s: Sharp) => Sharp) =>
  op(sharp(src, { raw: { width: W, height: H, channels: 4 } }))
    .raw()
    .toBuffer();

/** Mean absolute difference over R, G and B. */
function meanDiff(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) if (i % 4 !== 3) sum += Math.abs(a[i]! - b[i]!);
  return sum / ((a.length / 4) * 3);
}

describe('blur equals sharp blur(sigma) at sigma = blur × BLUR_SIGMA_PER_STEP', () => {
  for (const blur of [2, 20]) {
    it(`blur=${blur}`, async () => {
      const src = picture();
      const ours = await run((sink) => blurRows(W, H, blur, false, sink), src);
      const sharpBlur = await theirs(src, (s) =>
        s.blur({ sigma: blur * BLUR_SIGMA_PER_STEP, minAmplitude: 0.01, precision: 'float' }),
      );
      expect(meanDiff(ours, sharpBlur)).toBeLessThan(1.2);
      // And it did blur: far from the source.
      expect(meanDiff(ours, src)).toBeGreaterThan(4);
    });
  }
});

describe('sharpen adds the detail an unsharp mask of the same sigma and amount adds', () => {
  it('sharpen=3', async () => {
    const src = picture();
    const ours = await run((sink) => sharpenRows(W, H, 3, sink), src);
    const amount = 3 * SHARPEN_AMOUNT_PER_STEP;
    const sharpened = await theirs(src, (s) =>
      s.sharpen({ sigma: SHARPEN_SIGMA, m1: amount, m2: amount, x1: 0, y2: 10_000, y3: 10_000 }),
    );
    // The detail added, per pixel (the green channel, which the luma and L* weigh most): same places, same size.
    const added = (img: Uint8Array) => Array.from({ length: W * H }, (_, p) => img[p * 4 + 1]! - src[p * 4 + 1]!);
    const [a, b] = [added(ours), added(sharpened)];
    const dot = (u: number[], v: number[]) => u.reduce((s, x, i) => s + x * v[i]!, 0);
    const correlation = dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
    expect(correlation).toBeGreaterThan(0.8);
    const ratio = Math.sqrt(dot(a, a) / dot(b, b));
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });
});

describe('the filters at the smallest sizes', () => {
  it.each([
    [1, 1],
    [3, 2],
    [2, 40],
  ])('%i×%i: as many rows out as in, and a flat picture stays flat', async (w, h) => {
    const flat = new Uint8Array(w * h * 4).fill(77);
    for (const make of [
      (sink: (row: Uint8Array) => void) => blurRows(w, h, 250, true, sink),
      (sink: (row: Uint8Array) => void) => blurRows(w, h, 1, false, sink),
      (sink: (row: Uint8Array) => void) => sharpenRows(w, h, 10, sink),
    ]) {
      const rows: Uint8Array[] = [];
      const filter = make((row) => {
        rows.push(row.slice());
      });
      for (let y = 0; y < h; y++) await filter.push(flat.subarray(y * w * 4, (y + 1) * w * 4));
      await filter.end();
      expect(rows.length).toBe(h);
      for (const row of rows) {
        expect(row.length).toBe(w * 4);
        // R, G and B; alpha is the input's, or 255 where the rows are taken as opaque.
        expect([...row].filter((_, i) => i % 4 !== 3).every((v) => v === 77)).toBe(true);
      }
    }
  });
});
