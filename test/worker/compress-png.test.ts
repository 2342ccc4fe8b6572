// POST /api/v1/compress with PNG input, as a caller sees it: lossless PNG output equal to the input's
// pixels for every colour type (whole through oxipng, or in rows above its size), resizing, the eXIf
// orientation, which chunks come back (metadata=strip|keep, ICC), PNG to JPEG, X-Image-Width/Height
// against the output's own header, damaged files refused with 422, and admission by memory.
import { describe, expect, it } from 'vitest';
import { decodePng } from '../../wasm/png.ts';
import { makeKey } from './helpers.ts';
import { bodyBytes, compressCall, decodeAny, exifTiff, expectLargestWidthWorks, pngOf } from './image-fixtures.ts';
import { ascii, cat, chunk, chunksOf, expectedRgba, ihdrOf, makePng, zlib, type PngSpec } from './png-fixtures.ts';

/**
 * Byte-for-byte equality of two large pixel buffers, failing with the first difference: the matcher's
 * deep equality walks millions of elements one by one and took seconds per image.
 */
function expectSameBytes(actual: ArrayLike<number>, expected: ArrayLike<number>): void {
  expect(actual.length).toBe(expected.length);
  let at = -1;
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] !== expected[i]) {
      at = i;
      break;
    }
  }
  expect(at === -1 ? 'identical' : `first difference at byte ${at}: ${actual[at]} instead of ${expected[at]}`).toBe(
    'identical',
  );
}

const key = async () => (await makeKey({ scopes: ['image'], image: 'pro' })).key;

async function compressPng(parts: Record<string, string | Uint8Array>, budgetMb?: number) {
  const options = budgetMb === undefined ? undefined : { env: { MEMORY_BUDGET_MB: String(budgetMb) } };
  const res = await compressCall(await key(), { filename: 'in.png', format: 'png', ...parts }, options);
  const body = await bodyBytes(res);
  return { res, body };
}

/**
 * A reduced budget for the row tests: oxipng's half of it (5 MB at 24 bytes a pixel) holds no image of the
 * sizes below (0.4 MP and more; twice the budget for 0.7 MP at 16 bits), so they take the row paths at a
 * fifth of the pixels the default budget would need.
 */
const ROWS_BUDGET_MB = 10;

/** An ICC profile (uncompressed) whose header names `space`. */
function iccProfile(space: string): Uint8Array {
  const profile = new Uint8Array(200).map((_, i) => (i * 11) & 255);
  new DataView(profile.buffer).setUint32(0, 200);
  profile.set(ascii(`lcms\x04\x30\x00\x00mntr${space}XYZ `), 4);
  profile.set(ascii('acsp'), 36);
  return profile;
}

const iccp = async (space: string) => ({ type: 'iCCP', data: cat(ascii('test\0\0'), await zlib(iccProfile(space))) });
const xmpChunk = (orientation: number) => ({
  type: 'iTXt',
  data: cat(
    ascii('XML:com.adobe.xmp\0\0\0\0\0'),
    ascii(`<x:xmpmeta><rdf:Description tiff:Orientation="${orientation}"/></x:xmpmeta>`),
  ),
});

describe('PNG to PNG, lossless', () => {
  it.each([
    ['grey 8', { colourType: 0, bitDepth: 8 }, 0],
    ['grey 1 with tRNS', { colourType: 0, bitDepth: 1, trns: [0, 1] }, null],
    ['grey + alpha 16', { colourType: 4, bitDepth: 16 }, null],
    ['RGB 16', { colourType: 2, bitDepth: 16 }, null],
    ['RGBA 8, interlaced', { colourType: 6, bitDepth: 8, interlaced: true }, null],
    [
      'palette 4 with tRNS',
      {
        colourType: 3,
        bitDepth: 4,
        palette: Array.from({ length: 16 }, (_, i) => [i * 16, 255 - i * 16, i * 5]),
        trns: [0, 90],
      },
      null,
    ],
  ] as const)('%s: the pixels come back exactly, with the size in the headers', async (_, partial, _ct) => {
    const spec = { width: 61, height: 37, ...partial } as PngSpec;
    const { res, body } = await compressPng({ image: await makePng(spec) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const ihdr = ihdrOf(body);
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual([
      String(ihdr.width),
      String(ihdr.height),
    ]);
    expect([ihdr.width, ihdr.height]).toEqual([61, 37]);
    expectSameBytes(decodePng(body).data, expectedRgba(spec));
  });

  it('where oxipng’s whole-image memory is over its share of the budget, the row encoder writes it, exactly, in the smallest exact colour type', async () => {
    const cases = [
      [{ colourType: 6, bitDepth: 16 }, 6],
      [{ colourType: 0, bitDepth: 8 }, 0],
      [{ colourType: 2, bitDepth: 16 }, 2],
      [
        {
          colourType: 3,
          bitDepth: 2,
          palette: [
            [0, 0, 0],
            [255, 0, 0],
            [0, 255, 0],
            [0, 0, 255],
          ],
        },
        3,
      ],
    ] as const;
    for (const [partial, colourType] of cases) {
      // 0.31 MP under 12 MB: oxipng's half (6 MB) holds 0.26 MP, and the 16-bit rows fit beside it (at 10 MB
      // they do not); 1000×700 under 20 MB proved the same with twice the pixels.
      const spec = { width: 640, height: 480, ...partial } as PngSpec;
      const { res, body } = await compressPng({ image: await makePng(spec) }, 12);
      expect(res.status).toBe(200);
      expect(ihdrOf(body).colourType).toBe(colourType);
      expect(res.headers.get('x-image-width')).toBe('640');
      expectSameBytes(decodePng(body).data, expectedRgba(spec));
    }
  }, 60_000);

  it('an RGBA image of few colours, opaque throughout, is written in rows as a palette; one of grey pixels as grey', async () => {
    const [w, h] = [840, 600];
    const colours = [
      [250, 250, 252, 255],
      [38, 50, 72, 255],
      [9, 105, 218, 255],
    ];
    const rgba = new Uint8Array(w * h * 4).map((_, i) => colours[Math.floor(i / 4 / w / 40) % 3]![i % 4]!);
    const { body } = await compressPng({ image: pngOf({ data: rgba, width: w, height: h }) }, ROWS_BUDGET_MB);
    expect(ihdrOf(body)).toMatchObject({ colourType: 3, bitDepth: 2 });
    expectSameBytes(decodePng(body).data, rgba);
    const grey = rgba.map((_v, i) => (i % 4 === 3 ? 255 : (rgba[i - (i % 4)]! + (i >> 12)) & 255));
    const greyOut = await compressPng({ image: pngOf({ data: grey, width: w, height: h }) }, ROWS_BUDGET_MB);
    expect(ihdrOf(greyOut.body).colourType).toBe(0);
    expectSameBytes(decodePng(greyOut.body).data, grey);
  }, 60_000);

  it('width resizes in rows, both sides in proportion, with the headers matching the file', async () => {
    const spec: PngSpec = { width: 800, height: 480, colourType: 2, bitDepth: 8 };
    const { res, body } = await compressPng({ image: await makePng(spec), width: '200' }, ROWS_BUDGET_MB);
    expect(res.status).toBe(200);
    expect(ihdrOf(body)).toMatchObject({ width: 200, height: 120, colourType: 2 });
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['200', '120']);
    const large = await makePng({ ...spec, width: 960, height: 720 });
    const big = await compressPng({ image: large, width: '800' }, ROWS_BUDGET_MB);
    expect(ihdrOf(big.body)).toMatchObject({ width: 800, height: 600 });
  }, 60_000);

  it('an eXIf orientation is applied, and kept (reset to 1) only with metadata=keep', async () => {
    const spec: PngSpec = {
      width: 30,
      height: 20,
      colourType: 2,
      bitDepth: 8,
      before: [{ type: 'eXIf', data: exifTiff(6) }],
    };
    const input = await makePng(spec);
    const { body } = await compressPng({ image: input });
    expect(ihdrOf(body)).toMatchObject({ width: 20, height: 30 });
    expect(chunksOf(body).map((c) => c.type)).not.toContain('eXIf');
    // Orientation 6: the stored top-left pixel is shown at the top right.
    const source = expectedRgba(spec);
    expect([...decodePng(body).data.subarray(19 * 4, 20 * 4)]).toEqual([...source.subarray(0, 4)]);
    const kept = await compressPng({ image: input, metadata: 'keep' });
    const exif = chunksOf(kept.body).find((c) => c.type === 'eXIf')!;
    expect(exif.data[8 + 2 + 8]).toBe(1);
  });

  it('keeps an RGB ICC profile and the colour chunks; drops text, time and, unless kept, XMP', async () => {
    const before = [
      await iccp('RGB '),
      { type: 'gAMA', data: Uint8Array.of(0, 0, 0xb1, 0x8f) },
      { type: 'tEXt', data: ascii('Author\0me') },
      { type: 'tIME', data: new Uint8Array(7) },
      xmpChunk(1),
    ];
    const image = await makePng({ width: 40, height: 40, colourType: 2, bitDepth: 8, before });
    const stripped = chunksOf((await compressPng({ image })).body).map((c) => c.type);
    expect(stripped).toEqual(expect.arrayContaining(['iCCP', 'gAMA']));
    expect(stripped).not.toEqual(expect.arrayContaining(['tEXt']));
    expect(stripped.filter((t) => ['tEXt', 'tIME', 'iTXt'].includes(t))).toEqual([]);
    const kept = chunksOf((await compressPng({ image, metadata: 'keep' })).body).map((c) => c.type);
    expect(kept).toContain('iTXt');
    expect(kept).not.toContain('tEXt');
  });

  it('drops a grey ICC profile from colour output, and the input bytes never come back as they are', async () => {
    const image = await makePng({ width: 40, height: 40, colourType: 2, bitDepth: 8, before: [await iccp('GRAY')] });
    const { body } = await compressPng({ image });
    expect(chunksOf(body).map((c) => c.type)).not.toContain('iCCP');
    expect(body).not.toEqual(image);
  });
});

describe('PNG to other formats and refusals', () => {
  it('PNG with alpha to JPEG: flattened on white, the right size', async () => {
    const spec: PngSpec = { width: 300, height: 200, colourType: 6, bitDepth: 8 };
    const res = await compressCall(await key(), {
      filename: 'in.png',
      image: await makePng(spec),
      format: 'jpeg',
      width: '150',
    });
    expect(res.status).toBe(200);
    const out = decodeAny(await bodyBytes(res));
    expect([out.width, out.height]).toEqual([150, 100]);
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['150', '100']);
  });

  it('a 1.1 MP PNG becomes a JPEG in rows: within a budget its frame would not fit, alpha on white', async () => {
    // 1,200 × 900 (1.1 MP): the left half transparent, the right half opaque colour.
    const [w, h] = [1200, 900];
    const rgba = new Uint8Array(w * h * 4);
    for (let i = 0; i < w * h; i++) {
      const right = i % w >= w / 2;
      rgba.set(right ? [200, 40, 60, 255] : [0, 0, 0, 0], i * 4);
    }
    // 10 MB: the whole-frame path needed about 24 bytes per pixel (26 MB); rows need the coefficients.
    const res = await compressCall(
      await key(),
      { filename: 'in.png', image: pngOf({ data: rgba, width: w, height: h }), format: 'jpeg' },
      { env: { MEMORY_BUDGET_MB: '10' } },
    );
    expect(res.status).toBe(200);
    const out = decodeAny(await bodyBytes(res));
    expect([out.width, out.height]).toEqual([w, h]);
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual([String(w), String(h)]);
    const at = (x: number, y: number) => Array.from(out.data.subarray((y * w + x) * 4, (y * w + x) * 4 + 3));
    expect(at(150, 450).every((v) => v >= 250)).toBe(true); // transparent → white
    const [r, g, b] = at(1000, 450);
    expect(Math.abs(r! - 200) + Math.abs(g! - 40) + Math.abs(b! - 60)).toBeLessThan(15);
  }, 30_000);

  it('a PNG whose progressive JPEG would not fit the budget is streamed as a baseline JPEG, not refused', async () => {
    // 1,600 × 1,200 under 10 MB: with the progressive encoder's coefficients the plan is about 14 MB (it
    // was refused for it); streamed rows with the standard tables need about 5 MB less.
    const [w, h] = [1600, 1200];
    const image = await makePng({ width: w, height: h, colourType: 2, bitDepth: 8 });
    const res = await compressCall(
      await key(),
      { filename: 'in.png', image, format: 'jpeg' },
      { env: { MEMORY_BUDGET_MB: '10' } },
    );
    expect(res.status, await res.clone().text()).toBe(200);
    const bytes = await bodyBytes(res);
    const out = decodeAny(bytes);
    expect([out.width, out.height]).toEqual([w, h]);
    // A baseline frame (SOF0), where the default budget writes a progressive one (SOF2).
    const frames = [0xc0, 0xc2].filter((m) => bytes.some((b, i) => b === 0xff && bytes[i + 1] === m));
    expect(frames).toEqual([0xc0]);
  }, 30_000);

  it.each([
    [
      'a damaged IDAT checksum',
      async (png: Uint8Array) => {
        const b = png.slice();
        b[b.length - 13]! ^= 1;
        return b;
      },
    ],
    ['a file cut short', async (png: Uint8Array) => png.subarray(0, png.length - 40)],
    [
      'image data that is not zlib',
      async (png: Uint8Array) =>
        cat(png.subarray(0, 33), chunk('IDAT', Uint8Array.of(1, 2, 3, 4, 5, 6)), chunk('IEND', new Uint8Array(0))),
    ],
    [
      'image data ending early',
      async (png: Uint8Array) =>
        cat(png.subarray(0, 33), chunk('IDAT', await zlib(new Uint8Array(100))), chunk('IEND', new Uint8Array(0))),
    ],
  ])('%s is 422 unprocessable_image', async (_, damage) => {
    const png = await makePng({ width: 50, height: 50, colourType: 2, bitDepth: 8 });
    for (const format of ['png', 'jpeg']) {
      const res = await compressCall(await key(), { filename: 'in.png', image: await damage(png), format });
      expect(res.status).toBe(422);
      expect((await res.json<any>()).error.code).toBe('unprocessable_image');
    }
  });

  it('a PNG too large for the memory budget is 422 naming the largest width that fits, and that width works', async () => {
    // 1.8 MP under 10 MB fits 846 px wide (3000×2000 under 12 MB: 1311 px, three times the pixels to make and read).
    const image = await makePng({ width: 1600, height: 1100, colourType: 2, bitDepth: 8 });
    const env = { env: { MEMORY_BUDGET_MB: '10' } };
    await expectLargestWidthWorks(await key(), { filename: 'in.png', image, format: 'png' }, 1600, env);
  }, 30_000);
});
