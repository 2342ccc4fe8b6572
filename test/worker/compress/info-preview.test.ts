// The preview (src/compress/preview/preview.ts): a small upright RGBA picture of any input, at most
// PREVIEW_MAX_SIDE on its long side and never enlarged, whose colours are where the full picture has them,
// EXIF orientation applied.
import { describe, expect, it } from 'vitest';
import { readHeader } from '../../../src/compress/header.ts';
import type { InputFormat } from '../../../src/compress/formats.ts';
import { makePreview, PREVIEW_MAX_SIDE } from '../../../src/compress/preview/preview.ts';
import {
  jpegOf,
  near,
  pixel,
  pngOf,
  QUADRANT_COLOURS,
  quadrants,
  storeWithOrientation,
  webpOf,
  withJpegOrientation,
} from '../image-fixtures.ts';
import type { RgbaImage } from '../../../wasm/image.ts';

const preview = (bytes: Uint8Array, format: InputFormat) => makePreview(bytes, format, readHeader(format, bytes));

/** Each quadrant's colour sampled at its centre. */
function expectQuadrants(image: RgbaImage, tolerance = 24): void {
  const { width: w, height: h } = image;
  const at = (fx: number, fy: number) => pixel(image, Math.floor(w * fx), Math.floor(h * fy));
  expect(near(at(0.25, 0.25), QUADRANT_COLOURS.tl, tolerance), `tl ${at(0.25, 0.25)}`).toBe(true);
  expect(near(at(0.75, 0.25), QUADRANT_COLOURS.tr, tolerance), `tr ${at(0.75, 0.25)}`).toBe(true);
  expect(near(at(0.25, 0.75), QUADRANT_COLOURS.bl, tolerance), `bl ${at(0.25, 0.75)}`).toBe(true);
  expect(near(at(0.75, 0.75), QUADRANT_COLOURS.br, tolerance), `br ${at(0.75, 0.75)}`).toBe(true);
}

describe('preview', () => {
  it('a JPEG: at most 256 px on its long side, through DCT scaling, proportions kept', async () => {
    const p = await preview(jpegOf(quadrants(600, 400)), 'jpeg');
    expect([p.width, p.height]).toEqual([PREVIEW_MAX_SIDE, 171]);
    expect(p.data.length).toBe(p.width * p.height * 4);
    expectQuadrants(p);
  });

  it('a JPEG with EXIF orientation 6 comes out upright', async () => {
    const stored = jpegOf(storeWithOrientation(quadrants(300, 400), 6));
    const p = await preview(withJpegOrientation(stored, 6), 'jpeg');
    expect([p.width, p.height]).toEqual([192, 256]);
    expectQuadrants(p);
  });

  it('a PNG with alpha, averaged down in rows; its transparency kept', async () => {
    const image = quadrants(520, 260);
    for (let i = 3; i < image.data.length; i += 4) image.data[i] = 128;
    const p = await preview(pngOf(image), 'png');
    expect(Math.max(p.width, p.height)).toBeLessThanOrEqual(PREVIEW_MAX_SIDE);
    expect(p.width / p.height).toBeCloseTo(2, 1);
    const alpha = pixel(p, 10, 10)[3];
    expect(Math.abs(alpha - 128)).toBeLessThan(3);
    const opaque = { ...p, data: p.data.map((v, i) => (i % 4 === 3 ? 255 : v)) };
    expectQuadrants(opaque);
  });

  it('a PNG, a GIF and an AVIF come out at the preview size a JPEG does, not a whole-block fraction of it', async () => {
    // 640 wide asks blocks of 2.5 pixels: whole blocks of 3 gave 214×160, a sixth fewer pixels each way,
    // which is what made a 15 px face 13 px and lost it to the face detector (docs/experiments/faces.md).
    const p = await preview(pngOf(quadrants(640, 480)), 'png');
    expect([p.width, p.height]).toEqual([256, 192]);
    expectQuadrants(p);
  });

  it('a WebP', async () => {
    const p = await preview(webpOf(quadrants(400, 300)), 'webp');
    expect([p.width, p.height]).toEqual([256, 192]);
    expectQuadrants(p);
  });

  it('a small image is not enlarged', async () => {
    for (const [bytes, format] of [
      [jpegOf(quadrants(40, 30)), 'jpeg'],
      [pngOf(quadrants(40, 30)), 'png'],
      [webpOf(quadrants(40, 30)), 'webp'],
    ] as const) {
      const p = await preview(bytes, format);
      expect([p.width, p.height], format).toEqual([40, 30]);
      expectQuadrants(p);
    }
  });
});
