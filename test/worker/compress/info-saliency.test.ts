// Saliency (src/compress/preview/saliency.ts), on synthetic previews: the crop of a given aspect ratio that
// keeps a detailed object off-centre on a flat background contains it, with confidence; a flat picture
// gives low confidence and the centred box.
import { describe, expect, it } from 'vitest';
import { boxInSource, salientCrop } from '../../../src/compress/preview/saliency.ts';
import type { RgbaImage } from '../../../wasm/image.ts';

function flat(width: number, height: number, rgb: [number, number, number] = [120, 130, 140]): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set([...rgb, 255], i);
  return { data, width, height };
}

/** A saturated, high-contrast checkered object of `size` centred at (cx, cy). */
function withObject(image: RgbaImage, cx: number, cy: number, size: number): RgbaImage {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24) / 255;
  for (let y = cy - size / 2; y < cy + size / 2; y++) {
    for (let x = cx - size / 2; x < cx + size / 2; x++) {
      const i = (y * image.width + x) * 4;
      const on = ((x >> 2) + (y >> 2)) % 2 === 0;
      image.data.set(on ? [230, 40 + 60 * rand(), 30, 255] : [20, 30, 200 * rand(), 255], i);
    }
  }
  return image;
}

describe('salientCrop', () => {
  it('keeps a detailed object right of centre (a centre crop would cut it off)', () => {
    const image = withObject(flat(256, 128), 200, 64, 32);
    const { box, confidence } = salientCrop(image, 1);
    expect(box.width).toBe(128);
    expect(box.height).toBe(128);
    expect(box.x).toBeLessThanOrEqual(200 - 16);
    expect(box.x + box.width).toBeGreaterThanOrEqual(200 + 16);
    expect(confidence).toBeGreaterThan(0.5);
  });

  it('keeps an object near the top in a wide crop of a tall picture', () => {
    const image = withObject(flat(100, 240), 40, 30, 24);
    const { box, confidence } = salientCrop(image, 2);
    expect([box.width, box.height]).toEqual([100, 50]);
    expect(box.y).toBeLessThanOrEqual(30 - 12);
    expect(box.y + box.height).toBeGreaterThanOrEqual(30 + 12);
    expect(confidence).toBeGreaterThan(0.5);
  });

  it('a flat picture: low confidence and the centred box', () => {
    const { box, confidence } = salientCrop(flat(200, 100), 1);
    expect(box).toEqual({ x: 50, y: 0, width: 100, height: 100 });
    expect(confidence).toBeLessThan(0.1);
  });

  it('an aspect ratio the picture already has: the whole picture', () => {
    const { box } = salientCrop(withObject(flat(120, 60), 30, 30, 16), 2);
    expect(box).toEqual({ x: 0, y: 0, width: 120, height: 60 });
  });

  it('a box on the preview scales to the source, inside it', () => {
    const preview = { width: 256, height: 171 };
    const source = { width: 6000, height: 4000 };
    expect(boxInSource({ x: 85, y: 0, width: 171, height: 171 }, preview, source)).toEqual({
      x: 1992,
      y: 0,
      width: 4008,
      height: 4000,
    });
    // Rounding never pushes it past the source's edge.
    expect(boxInSource({ x: 85, y: 0, width: 171, height: 171 }, preview, { width: 257, height: 171 })).toEqual({
      x: 85,
      y: 0,
      width: 172,
      height: 171,
    });
  });
});
