// The AVIF encoder module (wasm/codec/sr_avif.*) on its own, in Node, decoded by sharp (libheif, an
// independent decoder): the ICC profile it is given comes back, a grid decodes without seams, also at an
// odd width or height, and a grid libavif cannot write is refused with libavif's reason.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { AVIF_SEARCH_SPEED, AVIF_SPEED, avifSettings } from '../../wasm/avif-settings.ts';
import { encodeAvif, type Raw } from '../bench/lib/avif-node.ts';

/** Smooth photo-like content with some texture: what a seam between cells would show on. */
function picture(width: number, height: number, channels: 3 | 4): Raw {
  const data = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (let c = 0; c < channels; c++)
        data[(y * width + x) * channels + c] =
          c === 3
            ? 255
            : Math.round(128 + 90 * Math.sin((x * (c + 1)) / 37 + y / 29) + 20 * Math.sin((x + 2 * y) / 3.1));
  return { data, width, height, channels };
}

async function decode(avif: Uint8Array) {
  return sharp(avif).removeAlpha().raw().toBuffer({ resolveWithObject: true });
}

/** Mean absolute difference between the decoded picture and the original over columns (or rows) [from, to). */
function meanError(decoded: Uint8Array, raw: Raw, axis: 'x' | 'y', from: number, to: number): number {
  let sum = 0;
  let n = 0;
  for (let y = axis === 'y' ? from : 0; y < (axis === 'y' ? to : raw.height); y++)
    for (let x = axis === 'x' ? from : 0; x < (axis === 'x' ? to : raw.width); x++)
      for (let c = 0; c < 3; c++) {
        sum += Math.abs(decoded[(y * raw.width + x) * 3 + c]! - raw.data[(y * raw.width + x) * raw.channels + c]!);
        n++;
      }
  return sum / n;
}

const settings = { ...avifSettings(80, 1024, 1024), speed: 9 };

describe('AVIF encoder module', () => {
  it('writes the ICC profile it is given, as one image and as a grid', async () => {
    const p3 = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } })
      .withIccProfile('p3')
      .png()
      .toBuffer();
    const icc = (await sharp(p3).metadata()).icc!;
    for (const grid of [
      { cols: 1, rows: 1 },
      { cols: 2, rows: 2 },
    ]) {
      const { output } = await encodeAvif(picture(320, 240, 3), settings, grid, icc);
      const meta = await sharp(output).metadata();
      expect([meta.width, meta.height]).toEqual([320, 240]);
      expect(Buffer.from(meta.icc!).equals(Buffer.from(icc))).toBe(true);
    }
  });

  it('decodes a grid without seams: the error along the cells’ edges is that of the rest', async () => {
    for (const channels of [3, 4] as const) {
      const raw = picture(640, 480, channels);
      const { output } = await encodeAvif(raw, settings, { cols: 2, rows: 2 });
      const { data, info } = await decode(output);
      expect([info.width, info.height]).toEqual([640, 480]);
      const whole = meanError(data, raw, 'x', 0, raw.width);
      // The cells meet at column 320 and row 240 (even halves of an even picture).
      const seamX = meanError(data, raw, 'x', 318, 322);
      const seamY = meanError(data, raw, 'y', 238, 242);
      expect(whole).toBeLessThan(6);
      expect(seamX).toBeLessThan(whole * 1.5 + 1);
      expect(seamY).toBeLessThan(whole * 1.5 + 1);
    }
  });

  it('decodes a grid of an odd width or height at its size (coded one pixel larger, cropped back)', async () => {
    for (const [width, height, channels] of [
      [641, 481, 3],
      [640, 481, 4],
      [641, 480, 3],
    ] as const) {
      const raw = picture(width, height, channels);
      const { output } = await encodeAvif(raw, settings, { cols: 2, rows: 2 });
      const { data, info } = await decode(output);
      expect([info.width, info.height]).toEqual([width, height]);
      const whole = meanError(data, raw, 'x', 0, width);
      expect(whole).toBeLessThan(6);
      // The last column and row, next to the repeated ones.
      expect(meanError(data, raw, 'x', width - 2, width)).toBeLessThan(whole * 1.5 + 1);
      expect(meanError(data, raw, 'y', height - 2, height)).toBeLessThan(whole * 1.5 + 1);
    }
  });

  it('refuses a grid libavif cannot write with libavif’s reason', async () => {
    // Cells under 64 pixels a side are not allowed in a grid (MIAF).
    await expect(encodeAvif(picture(200, 100, 3), settings, { cols: 4, rows: 1 })).rejects.toThrow(
      /Invalid image grid.*smaller than 64/,
    );
  });

  it('a size target’s encodes run at the faster search speed; one encode at the default', () => {
    expect(AVIF_SEARCH_SPEED).toBeGreaterThan(AVIF_SPEED);
    expect(avifSettings(68, 6000, 4000, true).speed).toBe(AVIF_SEARCH_SPEED);
    expect(avifSettings(68, 6000, 4000).speed).toBe(AVIF_SPEED);
  });
});
