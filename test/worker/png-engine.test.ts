// The PNG row engine on its own: every colour type and bit depth, interlaced or not, palette and
// tRNS, odd sizes, odd cuts of the image data, and damaged files; the interlaced test files and the
// row encoder's output read back by another decoder (@jsquash/png); the row resampler's sizes and flat colours.
import { describe, expect, it } from 'vitest';
import { PngError } from '../../src/compress/png/chunks.ts';
import { decodeRows, readPngInfo } from '../../src/compress/png/decoder.ts';
import { PngRowEncoder, paletteDepth } from '../../src/compress/png/encoder.ts';
import { EngineRowResizer } from '../../wasm/row-resizer.ts';
import { decodePng } from '../../wasm/png.ts';
import { expectedRgba, ihdrOf, makePng, type PngSpec } from './png-fixtures.ts';

async function decodeAll(bytes: Uint8Array): Promise<{ width: number; height: number; data: Uint8Array }> {
  const info = readPngInfo(bytes);
  const data = new Uint8Array(info.width * info.height * 4);
  let rows = 0;
  await decodeRows(info, (row, y) => {
    expect(y).toBe(rows++);
    data.set(row, y * info.width * 4);
  });
  expect(rows).toBe(info.height);
  return { width: info.width, height: info.height, data };
}

const PALETTE: [number, number, number][] = Array.from({ length: 256 }, (_, i) => [i, (i * 7) & 255, 255 - i]);
const SIZES: [number, number][] = [
  [1, 1],
  [13, 7],
  [33, 9],
];

const specs: PngSpec[] = [];
for (const [colourType, depths] of [
  [0, [1, 2, 4, 8, 16]],
  [2, [8, 16]],
  [3, [1, 2, 4, 8]],
  [4, [8, 16]],
  [6, [8, 16]],
] as const) {
  for (const bitDepth of depths) {
    for (const interlaced of [false, true]) {
      for (const [width, height] of SIZES) {
        const palette = colourType === 3 ? PALETTE.slice(0, 1 << bitDepth) : undefined;
        specs.push({ width, height, colourType, bitDepth, interlaced, palette });
      }
    }
  }
}

describe('PNG decoder', () => {
  it.each(
    specs.map(
      (s) =>
        [
          `type ${s.colourType}, ${s.bitDepth} bits, ${s.width}×${s.height}${s.interlaced ? ', Adam7' : ''}`,
          s,
        ] as const,
    ),
  )('%s', async (_, spec) => {
    const decoded = await decodeAll(await makePng(spec));
    expect([decoded.width, decoded.height]).toEqual([spec.width, spec.height]);
    expect(decoded.data).toEqual(expectedRgba(spec));
  });

  // The files above are the tests' own; read by another decoder too, their Adam7 layout is not merely
  // this decoder's agreeing with itself.
  it.each([
    ['grey', { colourType: 0, bitDepth: 8 }],
    ['RGB', { colourType: 2, bitDepth: 8 }],
    ['palette', { colourType: 3, bitDepth: 8, palette: PALETTE }],
    ['RGBA', { colourType: 6, bitDepth: 8 }],
  ] as const)(
    'the interlaced %s test files read the same through another decoder (@jsquash/png)',
    async (_, partial) => {
      for (const [width, height] of SIZES) {
        const spec = { width, height, interlaced: true, ...partial } as PngSpec;
        expect(decodePng(await makePng(spec)).data).toEqual(expectedRgba(spec));
      }
    },
  );

  it.each([
    ['grey 8 bits', { colourType: 0, bitDepth: 8, trns: [0, 74] }],
    ['grey 16 bits', { colourType: 0, bitDepth: 16, trns: [0x12, 0x34] }],
    ['grey 2 bits', { colourType: 0, bitDepth: 2, trns: [0, 1] }],
    ['RGB 8 bits', { colourType: 2, bitDepth: 8, trns: [0, 74, 0, 127, 0, 180] }],
    ['RGB 16 bits', { colourType: 2, bitDepth: 16, trns: [0, 1, 0, 2, 0, 3] }],
    ['palette (short tRNS)', { colourType: 3, bitDepth: 4, palette: PALETTE.slice(0, 16), trns: [0, 64, 128] }],
  ] as const)('tRNS: %s', async (_, partial) => {
    const spec = { width: 29, height: 11, ...partial } as PngSpec;
    const decoded = await decodeAll(await makePng(spec));
    const expected = expectedRgba(spec);
    expect(decoded.data).toEqual(expected);
    if (spec.colourType === 3) expect(expected.some((v, i) => i % 4 === 3 && v < 255)).toBe(true);
  });

  it('reads image data cut into empty and one-byte IDAT chunks', async () => {
    const spec: PngSpec = { width: 40, height: 30, colourType: 6, bitDepth: 8, idatCuts: [0, 1, 1, 0, 7, 1, 0] };
    const bytes = await makePng(spec);
    expect(readPngInfo(bytes).idat.length).toBe(8);
    expect((await decodeAll(bytes)).data).toEqual(expectedRgba(spec));
  });

  it('refuses a damaged IDAT checksum, a truncated file, corrupt and short image data', async () => {
    const bytes = await makePng({ width: 20, height: 20, colourType: 2, bitDepth: 8 });
    const badCrc = bytes.slice();
    badCrc[bytes.length - 12 - 5]! ^= 0xff; // the last byte of the IDAT's CRC
    expect(() => readPngInfo(badCrc)).toThrow(PngError);
    expect(() => readPngInfo(bytes.subarray(0, bytes.length - 20))).toThrow(/truncated/);

    const { chunk, cat } = await import('./png-fixtures.ts');
    const ihdr = bytes.subarray(8, 33);
    const sig = bytes.subarray(0, 8);
    const end = chunk('IEND', new Uint8Array(0));
    const garbage = cat(sig, ihdr, chunk('IDAT', Uint8Array.of(0x78, 0x9c, 0xff, 0xff, 0xff, 0x00, 0x12)), end);
    await expect(decodeAll(garbage)).rejects.toThrow(PngError);
    const { zlib } = await import('./png-fixtures.ts');
    const short = cat(sig, ihdr, chunk('IDAT', await zlib(new Uint8Array(61 * 5))), end);
    await expect(decodeAll(short)).rejects.toThrow(/ends before the last row/);
    const badFilter = cat(sig, ihdr, chunk('IDAT', await zlib(new Uint8Array(61 * 20).fill(9))), end);
    await expect(decodeAll(badFilter)).rejects.toThrow(/filter type 9/);
  });

  it('image data longer than its rows (64 MB of extra zeros) decodes, and the extra is not inflated', async () => {
    const { chunk, cat, zlib } = await import('./png-fixtures.ts');
    const spec: PngSpec = { width: 20, height: 20, colourType: 0, bitDepth: 8 };
    const bytes = await makePng(spec);
    const rows = new Uint8Array(21 * 20 + 64 * 1024 * 1024);
    const bomb = cat(bytes.subarray(0, 33), chunk('IDAT', await zlib(rows)), chunk('IEND', new Uint8Array(0)));
    expect(bomb.length).toBeLessThan(200_000);
    const started = Date.now();
    const decoded = await decodeAll(bomb);
    expect(decoded.data.every((v, i) => (i % 4 === 3 ? v === 255 : v === 0))).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses impossible headers', async () => {
    const bytes = await makePng({ width: 4, height: 4, colourType: 2, bitDepth: 8 });
    const { chunk, cat } = await import('./png-fixtures.ts');
    const withIhdr = (depth: number, type: number) => {
      const ihdr = bytes.slice(16, 29);
      ihdr[8] = depth;
      ihdr[9] = type;
      return cat(bytes.subarray(0, 8), chunk('IHDR', ihdr), bytes.subarray(33));
    };
    expect(() => readPngInfo(withIhdr(4, 2))).toThrow(/bit depth 4 with colour type 2/);
    expect(() => readPngInfo(withIhdr(8, 3))).toThrow(/palette image without a palette/);
  });
});

describe('PNG row encoder', () => {
  const image = (w: number, h: number, alpha: boolean) =>
    Uint8Array.from({ length: w * h * 4 }, (_, i) =>
      i % 4 === 3 ? (alpha ? (i * 13) & 255 : 255) : (i * 7 + (i >> 6)) & 255,
    );

  it.each([
    [6, true],
    [2, false],
    [0, false],
    [4, true],
  ] as const)('colour type %i round-trips exactly', async (colourType, alpha) => {
    const [w, h] = [37, 23];
    let rgba = image(w, h, alpha);
    if (colourType === 0 || colourType === 4) rgba = rgba.map((v, i) => (i % 4 === 3 ? v : rgba[i - (i % 4)]!));
    const encoder = new PngRowEncoder({ width: w, height: h, colourType }, []);
    for (let y = 0; y < h; y++) await encoder.writeRow(rgba.subarray(y * w * 4, (y + 1) * w * 4));
    const png = await encoder.finish();
    expect(ihdrOf(png)).toEqual({ width: w, height: h, bitDepth: 8, colourType });
    expect(decodePng(png).data).toEqual(rgba);
  });

  it.each([2, 4, 16, 256])('palette of %i entries packs indices at the smallest depth', async (entries) => {
    const [w, h] = [19, 5];
    const palette = Uint8Array.from({ length: entries * 4 }, (_, i) =>
      i % 4 === 3 ? (i < 8 ? 100 : 255) : (i * 29) & 255,
    );
    const encoder = new PngRowEncoder({ width: w, height: h, colourType: 3, palette }, []);
    const indices = Uint8Array.from({ length: w * h }, (_, i) => (i * 5) % entries);
    for (let y = 0; y < h; y++) await encoder.writeRow(indices.subarray(y * w, (y + 1) * w));
    const png = await encoder.finish();
    expect(ihdrOf(png).bitDepth).toBe(paletteDepth(entries));
    const decoded = decodePng(png).data;
    for (let i = 0; i < w * h; i++)
      expect([...decoded.subarray(i * 4, i * 4 + 4)]).toEqual([
        ...palette.subarray(indices[i]! * 4, indices[i]! * 4 + 4),
      ]);
  });
});

/**
 * Every output row (copies) of the engine's resampler fed `inH` copies of one RGBA row, whose pixel x
 * is `pixel(x)`; rows are pulled after each push, as the PNG path does.
 */
function resized(
  inW: number,
  inH: number,
  outW: number,
  outH: number,
  premultiply: boolean,
  pixel: (x: number) => number[],
): Uint8Array[] {
  const resizer = new EngineRowResizer(inW, inH, outW, outH, premultiply);
  const row = new Uint8Array(inW * 4);
  for (let x = 0; x < inW; x++) row.set(pixel(x), x * 4);
  const out = new Uint8Array(outW * 4);
  const rows: Uint8Array[] = [];
  for (let y = 0; y < inH; y++) {
    resizer.push(row);
    while (resizer.pull(out)) rows.push(out.slice());
  }
  resizer.close();
  return rows;
}

describe("row resampler (the engine's, fed RGBA rows)", () => {
  it('gives every output row once, flat colours flat, transparent pixels without bleeding', () => {
    const [outW, outH] = [64, 21];
    const rows = resized(301, 97, outW, outH, true, (x) => (x % 2 ? [200, 100, 50, 255] : [0, 255, 0, 0]));
    expect(rows.length).toBe(outH);
    for (const out of rows) {
      for (let x = 2; x < outW - 2; x++) {
        const [r, g, b, a] = out.subarray(x * 4, x * 4 + 4);
        expect(Math.abs(a! - 128)).toBeLessThanOrEqual(2);
        expect([r, g, b].every((v, i) => Math.abs(v! - [200, 100, 50][i]!) <= 2)).toBe(true);
      }
    }
  });

  it('without premultiplying (its fixed-point pass), ramps stay straight per channel and flat colours exact', () => {
    // Each channel a different straight ramp: a tap or lane out of place bends or swaps them.
    const [outW, outH] = [64, 2];
    const ramps = resized(256, 8, outW, outH, false, (x) => [x, 255 - x, 64 + (x >> 1), 255]);
    expect(ramps.length).toBe(outH);
    for (const out of ramps) {
      for (let x = 3; x < outW - 3; x++) {
        const centre = 4 * x + 1.5; // output x covers input columns 4x … 4x + 3
        const [red, green, blue, alpha] = out.subarray(x * 4, x * 4 + 4);
        expect(Math.abs(red! - centre)).toBeLessThanOrEqual(1);
        expect(Math.abs(green! - (255 - centre))).toBeLessThanOrEqual(1);
        expect(Math.abs(blue! - (64 + (centre - 0.5) / 2))).toBeLessThanOrEqual(1);
        expect(alpha).toBe(255);
      }
    }
    // A shrink at the fixed-point pass's most taps (62 a pixel) and an enlargement leave a flat colour exactly as it was.
    for (const [w, h, ow, oh] of [
      [640, 3, 64, 1],
      [5, 4, 23, 9],
    ] as const) {
      const expected = new Uint8Array(ow * 4);
      for (let x = 0; x < ow; x++) expected.set([200, 100, 50, 255], x * 4);
      const rows = resized(w, h, ow, oh, false, () => [200, 100, 50, 255]);
      expect(rows.length).toBe(oh);
      for (const out of rows) expect(out).toEqual(expected);
    }
  });

  it('at a ratio that is not a whole number (odd and even tap counts), ramps stay straight', () => {
    const [inW, outW] = [256, 83];
    const rows = resized(inW, 2, outW, 1, false, (x) => [x, 255 - x, x >> 1, 255]);
    expect(rows.length).toBe(1);
    for (let x = 4; x < outW - 4; x++) {
      const centre = ((x + 0.5) * inW) / outW - 0.5;
      const [red, green, blue] = rows[0]!.subarray(x * 4, x * 4 + 3);
      expect(Math.abs(red! - centre)).toBeLessThanOrEqual(1);
      expect(Math.abs(green! - (255 - centre))).toBeLessThanOrEqual(1);
      expect(Math.abs(blue! - (centre - 0.5) / 2)).toBeLessThanOrEqual(1);
    }
  });

  it('a shrink of thousands of taps a pixel each way averages alternating columns to mid-grey', () => {
    // Weights of about 1/40000 each: rounded one by one to 1/16384 steps they once gave 141 and 122 here.
    // Thousands of vertical taps also exercise the vertical pass's tap table (on the heap, not the stack).
    const outW = 3;
    const rows = resized(20000, 3000, outW, 1, false, (x) => (x % 2 ? [255, 255, 255, 255] : [0, 0, 0, 255]));
    expect(rows.length).toBe(1);
    for (let x = 0; x < outW; x++) {
      for (let c = 0; c < 3; c++) expect(Math.abs(rows[0]![x * 4 + c]! - 127.5)).toBeLessThanOrEqual(1);
      expect(rows[0]![x * 4 + 3]).toBe(255);
    }
  });

  it('premultiplied (its fixed-point pass): an alpha ramp stays straight and keeps its colour exact where it shows', () => {
    const [outW, outH] = [64, 3];
    const rows = resized(256, 6, outW, outH, true, (x) => [200, 100, 50, x]);
    expect(rows.length).toBe(outH);
    for (const out of rows) {
      for (let x = 3; x < outW - 3; x++) {
        const [red, green, blue, alpha] = out.subarray(x * 4, x * 4 + 4);
        expect(Math.abs(alpha! - (4 * x + 1.5))).toBeLessThanOrEqual(1);
        // One colour under every alpha: weighting by alpha and dividing again gives it back.
        expect([red, green, blue].map((v, i) => Math.abs(v! - [200, 100, 50][i]!))).toEqual([0, 0, 0]);
      }
    }
  });

  it('without premultiplying, transparent pixels count with their colour', () => {
    const rows = resized(4, 4, 2, 2, false, (x) => (x % 2 ? [255, 255, 255, 255] : [0, 0, 0, 0]));
    expect(rows.length).toBe(2);
    // Half the taps are black and transparent: colour and alpha both come out near the middle.
    for (const v of rows[0]!) expect(Math.abs(v - 128)).toBeLessThanOrEqual(40);
  });
});
