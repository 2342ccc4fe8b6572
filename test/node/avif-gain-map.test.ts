// The gain-map bench's AVIF reader (test/bench/lib/avif-gain-map.ts) on AVIFs the engine's encoder module
// writes with a map (ISO 21496-1's hidden 'tmap' item): the map comes back as a still AVIF that sharp
// (libheif) decodes, at the map's size and with its pixels, for one cell, a grid of cells and an RGB map.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { avifSettings } from '../../wasm/avif-settings.ts';
import { avifGainMap } from '../bench/lib/avif-gain-map.ts';
import { encodeAvif, type Raw } from '../bench/lib/avif-node.ts';

/** Ultra HDR's usual numbers as ISO 21496-1's 17 (min, max, gamma, offsets per channel; headrooms). */
const METADATA = [0, 0, 0, 2, 2, 2, 1, 1, 1, 1 / 64, 1 / 64, 1 / 64, 1 / 64, 1 / 64, 1 / 64, 0, 2];
const settings = { ...avifSettings(80, 320, 256), speed: 9 };

/** A textured picture, so the picture and the map cannot be mistaken for each other. */
function picture(width: number, height: number): Raw {
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) & 255;
  return { data, width, height, channels: 3 };
}

/** A grey map of four flat quadrants split at (`splitX`, `splitY`): 30, 90 / 150, 220. */
function quadrantMap(width: number, height: number, splitX: number, splitY: number) {
  const data = new Uint8Array(width * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      data[y * width + x] = [30, 90, 150, 220][(y < splitY ? 0 : 2) + (x < splitX ? 0 : 1)]!;
  return { data, width, height, channels: 1 as const, metadata: METADATA, quality: 90 };
}

async function greyAt(avif: Uint8Array, points: [number, number][]) {
  const { data, info } = await sharp(avif).greyscale().raw().toBuffer({ resolveWithObject: true });
  return {
    size: [info.width, info.height],
    values: points.map(([x, y]) => data[(y * info.width + x) * info.channels]),
  };
}

describe('the AVIF gain map reader', () => {
  it('writes a one-cell map (an av01 item) as a still AVIF of the map', async () => {
    const map = quadrantMap(80, 64, 40, 32);
    const { output } = await encodeAvif(picture(320, 256), settings, { cols: 1, rows: 1 }, undefined, map);
    const found = avifGainMap(output);
    expect(found?.width).toBe(80);
    expect(found?.height).toBe(64);
    expect(found!.bytes).toBeGreaterThan(0);
    const { size, values } = await greyAt(found!.avif, [
      [10, 10],
      [70, 10],
      [10, 54],
      [70, 54],
    ]);
    expect(size).toEqual([80, 64]);
    for (const [i, value] of values.entries()) expect(Math.abs(value! - [30, 90, 150, 220][i]!)).toBeLessThanOrEqual(3);
  });

  it('writes a grid map (a grid of av01 cells, one per picture cell, odd-sized) as a still grid AVIF', async () => {
    // 161 × 129 in 2 × 2 cells: 81 and 80 columns, 65 and 64 rows; one flat value per cell, so the cells'
    // order shows.
    const map = quadrantMap(161, 129, 81, 65);
    const { output } = await encodeAvif(picture(320, 256), settings, { cols: 2, rows: 2 }, undefined, map);
    const found = avifGainMap(output);
    expect([found?.width, found?.height]).toEqual([161, 129]);
    const { size, values } = await greyAt(found!.avif, [
      [40, 32],
      [120, 32],
      [40, 96],
      [120, 96],
    ]);
    expect(size).toEqual([161, 129]);
    for (const [i, value] of values.entries()) expect(Math.abs(value! - [30, 90, 150, 220][i]!)).toBeLessThanOrEqual(3);
  });

  it('writes an RGB map (4:4:4, the identity matrix) whose channels come back in their order', async () => {
    const data = new Uint8Array(80 * 64 * 3);
    for (let i = 0; i < data.length; i += 3) data.set([200, 100, 40], i);
    const map = { data, width: 80, height: 64, channels: 3 as const, metadata: METADATA, quality: 90 };
    const { output } = await encodeAvif(picture(320, 256), settings, { cols: 1, rows: 1 }, undefined, map);
    const found = avifGainMap(output);
    const { data: rgb, info } = await sharp(found!.avif).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.channels]).toEqual([80, 64, 3]);
    const centre = (32 * 80 + 40) * 3;
    for (const [c, value] of [200, 100, 40].entries())
      expect(Math.abs(rgb[centre + c]! - value)).toBeLessThanOrEqual(3);
  });

  it('finds no map in an AVIF without one', async () => {
    const { output } = await encodeAvif(picture(320, 256), settings, { cols: 1, rows: 1 });
    expect(avifGainMap(output)).toBeNull();
  });
});
