// palette=true as a caller sees it: a palette PNG (colour type 3) of the right size whose transparent
// pixels stay transparent, smaller than the lossless PNG, with no more than `colors` entries, fewer for
// a lower quality, the measured quality in X-Quality; lossless when a palette would not be smaller;
// the parameters' refusals.
import { describe, expect, it } from 'vitest';
import type { RgbaImage } from '../../../wasm/image.ts';
import { decodePng } from '../../../wasm/png.ts';
import { makeKey } from '../helpers.ts';
import { bodyBytes, compressCall, jpegOf, photo, pngOf } from '../image-fixtures.ts';
import { chunksOf, ihdrOf } from '../png-fixtures.ts';

/** A screenshot-like image: flat panels, anti-aliased strokes, a gradient bar, a transparent margin. */
function screenshot(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      let c = x < width / 4 ? [38, 50, 72] : y < 40 ? [250, 250, 252] : [255, 255, 255];
      if (y > 60 && y < 90) c = [Math.round((x / width) * 255), 120, 200];
      // Text-like strokes with soft edges.
      const stroke = Math.abs(Math.sin(x / 3) * Math.cos(y / 5));
      if (x > width / 3 && y > 100 && y % 24 < 12 && stroke > 0.6)
        c = c.map((v) => Math.round(v * (1 - stroke) + 30 * stroke));
      const alpha = x < 8 || y < 8 ? 0 : x < 12 ? 128 : 255;
      data.set([...c, alpha], i);
    }
  }
  return { data, width, height };
}

const key = async () => (await makeKey({ scopes: ['image'], image: 'free' })).key;
const call = async (k: string, image: Uint8Array, parts: Record<string, string>) => {
  const res = await compressCall(k, { filename: 'in.png', image, format: 'png', ...parts });
  return { res, body: await bodyBytes(res) };
};

describe('palette=true', () => {
  it('writes a smaller palette PNG of the right size, transparent pixels kept, on the free tier', async () => {
    const k = await key();
    const source = screenshot(320, 240);
    const input = pngOf(source);
    const lossless = await call(k, input, {});
    const { res, body } = await call(k, input, { palette: 'true' });
    expect(res.status).toBe(200);
    expect(ihdrOf(body)).toMatchObject({ width: 320, height: 240, colourType: 3 });
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['320', '240']);
    expect(body.length).toBeLessThan(lossless.body.length);
    const out = decodePng(body);
    expect([out.width, out.height]).toEqual([320, 240]);
    expect(out.data[3]).toBe(0); // the transparent margin
    expect(out.data[(100 * 320 + 10) * 4 + 3]).toBeGreaterThan(64);
    expect(out.data[(100 * 320 + 10) * 4 + 3]).toBeLessThan(192);
    expect(out.data[(100 * 320 + 200) * 4 + 3]).toBe(255);
    expect(Number(res.headers.get('x-quality'))).toBeGreaterThanOrEqual(80);
  });

  it('at most `colors` entries, fewer for a lower quality', async () => {
    const k = await key();
    const input = pngOf(screenshot(256, 200));
    const entries = (png: Uint8Array) => chunksOf(png).find((c) => c.type === 'PLTE')!.data.length / 3;
    const sixteen = await call(k, input, { palette: 'true', colors: '16' });
    expect(ihdrOf(sixteen.body).colourType).toBe(3);
    expect(entries(sixteen.body)).toBeLessThanOrEqual(16);
    const low = await call(k, input, { palette: 'true', quality: '30' });
    const high = await call(k, input, { palette: 'true', quality: '95' });
    expect(entries(low.body)).toBeLessThan(entries(high.body));
    expect(Number(low.res.headers.get('x-quality'))).toBeGreaterThanOrEqual(30);
  });

  // The JPEG engine's WebAssembly is compiled on its first use in the isolate: seconds on a loaded machine.
  it('works from JPEG input, resized, and falls back to lossless when a palette is not smaller', async () => {
    const k = await key();
    const res = await compressCall(k, { image: jpegOf(photo(400, 300)), format: 'png', palette: 'true', width: '200' });
    expect(res.status).toBe(200);
    const body = await bodyBytes(res);
    expect(ihdrOf(body)).toMatchObject({ width: 200, height: 150 });
    // Two colours in flat halves: the lossless PNG is already a two-entry palette.
    const halves = new Uint8Array(64 * 64 * 4).map((_, i) => (i % 4 === 3 ? 255 : (i >> 2) % 64 < 32 ? 0 : 255));
    const flat = await call(k, pngOf({ data: halves, width: 64, height: 64 }), { palette: 'true' });
    expect(flat.res.status).toBe(200);
    expect(decodePng(flat.body).data).toEqual(halves);
  }, 15_000);

  it('a translucent image looks right on white as on black: alpha errors count where they show', async () => {
    // Dark stripes whose alpha sweeps 40–220 with a little grain (a wallpaper meant for any background):
    // a palette that weighs an alpha error as one channel of four rounds alpha, which black hides and
    // white shows (the error on white was 1.84 levels against 0.75 on black).
    const [w, h] = [256, 64];
    const data = new Uint8Array(w * h * 4);
    let seed = 7;
    const grain = () => (((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) % 9) - 4;
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++)
        data.set(
          [24, 28 + (y >> 3), 44, 40 + Math.round((x * 170) / 255) + ((x >> 3) % 2) * 12 + grain()],
          (y * w + x) * 4,
        );
    const k = await key();
    const { res, body } = await call(k, pngOf({ data, width: w, height: h }), { palette: 'true' });
    expect(res.status).toBe(200);
    expect(ihdrOf(body).colourType).toBe(3);
    const out = decodePng(body).data;
    // Root-mean-square error, in levels, of the picture composited on a background (0 black, 255 white).
    const rms = (background: number) => {
      let sum = 0;
      for (let i = 0; i < data.length; i += 4)
        for (let c = 0; c < 3; c++) {
          const shown = (v: Uint8Array) => (v[i + c]! * v[i + 3]! + background * (255 - v[i + 3]!)) / 255;
          sum += (shown(out) - shown(data)) ** 2;
        }
      return Math.sqrt(sum / ((data.length / 4) * 3));
    };
    expect(rms(255)).toBeLessThan(1.5);
    expect(rms(0)).toBeLessThan(1.5);
  });

  it.each([
    [{ palette: 'true', format: 'jpeg' }, 'palette'],
    [{ palette: 'true', format: 'webp' }, 'palette'],
    [{ colors: '16', format: 'png' }, 'colors'],
    [{ palette: 'true', format: 'png', colors: '1' }, 'colors'],
    [{ palette: 'true', format: 'png', colors: '257' }, 'colors'],
    [{ palette: 'yes', format: 'png' }, 'palette'],
  ])('%o is 400 naming %s', async (parts, param) => {
    const k = (await makeKey({ scopes: ['image'], image: 'pro' })).key;
    const res = await compressCall(k, { filename: 'in.png', image: pngOf(photo(16, 16)), ...parts });
    expect(res.status).toBe(400);
    expect((await res.json<any>()).error.param).toBe(param);
  });
});
