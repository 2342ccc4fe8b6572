// The streaming JPEG engine (wasm/src over libjpeg-turbo) called directly: every sampling decoded at
// odd sizes, grey and CMYK, the three encoder modes, DCT scaling with the ring resampler, the eight
// EXIF orientations, the lossless transcode and its edge trimming, and refusals of damaged files.
import { describe, expect, it } from 'vitest';
import type { RgbaImage } from '../../wasm/image.ts';
import { resetWasmInstances, wasmMemoryReport } from '../../wasm/instances.ts';
import {
  ENCODE_MODES,
  JpegEngineError,
  encodePixelsJpeg,
  withJpegJob,
  type EncodeMode,
  type JpegJob,
  type PixelEncoding,
} from '../../wasm/jpeg-engine.ts';
import { QUADRANT_COLOURS, decodeAny, photo, quadrants, quantTables, storeWithOrientation } from './image-fixtures.ts';
import { encodeJpeg, jpegOptions } from './mozjpeg.ts';

interface Pixels {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

const MODES = Object.keys(ENCODE_MODES) as EncodeMode[];
const SAMPLINGS: Record<string, [number, number]> = {
  '4:2:0': [2, 2],
  '4:2:2': [2, 1],
  '4:4:0': [1, 2],
  '4:1:1': [4, 1],
  '4:4:4': [1, 1],
};

const rgbOf = (image: RgbaImage): Pixels => ({
  data: image.data.filter((_, i) => i % 4 !== 3),
  width: image.width,
  height: image.height,
  channels: 3,
});

/** A smooth gradient (at most about 2 levels a pixel at any size): what a JPEG keeps well at any sampling. */
function gradient(width: number, height: number, channels: 1 | 3): Pixels {
  const data = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const u = x / Math.max(width - 1, 100);
      const v = y / Math.max(height - 1, 100);
      const values =
        channels === 1 ? [35 + 90 * (u + v)] : [40 + 180 * u, 30 + 190 * v, 128 + 80 * Math.sin(3 * (u + v))];
      data.set(values.map(Math.round), (y * width + x) * channels);
    }
  }
  return { data, width, height, channels };
}

const encode = (p: Pixels, options: PixelEncoding): Uint8Array =>
  encodePixelsJpeg(p.data, p.width, p.height, p.channels as 1 | 3, options);

/** The engine's full-size decode, as stored. */
const decode = (bytes: Uint8Array): Pixels =>
  withJpegJob(bytes, (job) => {
    const { width, height } = job.info;
    job.setPixels(8, width, height, 1);
    return { data: job.frame(), width, height, channels: job.channels };
  });

function diff(a: Uint8Array, b: Uint8Array): { mean: number; worst: number } {
  expect(a.length).toBe(b.length);
  let [sum, worst] = [0, 0];
  a.forEach((v, i) => {
    (sum += Math.abs(v - b[i]!)), (worst = Math.max(worst, Math.abs(v - b[i]!)));
  });
  return { mean: sum / a.length, worst };
}

/** Stored pixels turned upright for an EXIF orientation, optionally cropped to w × h at (x0, y0). */
function turned(p: Pixels, orientation: number, [x0, y0, w, h] = [0, 0, 0, 0]): Uint8Array {
  const [W, H] = orientation >= 5 ? [p.height, p.width] : [p.width, p.height];
  [w, h] = [w || W, h || H];
  const out = new Uint8Array(w * h * p.channels);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const [ux, uy, sw, sh] = [x + x0, y + y0, p.width - 1, p.height - 1];
      const [sx, sy] = (
        {
          1: [ux, uy],
          2: [sw - ux, uy],
          3: [sw - ux, sh - uy],
          4: [ux, sh - uy],
          5: [uy, ux],
          6: [uy, sh - ux],
          7: [sw - uy, sh - ux],
          8: [sw - uy, ux],
        } as Record<number, number[]>
      )[orientation]!;
      out.set(
        p.data.subarray((sy! * p.width + sx!) * p.channels, (sy! * p.width + sx! + 1) * p.channels),
        (y * w + x) * p.channels,
      );
    }
  }
  return out;
}

const near = (actual: ArrayLike<number>, expected: number[], tolerance: number): boolean =>
  expected.every((v, i) => Math.abs(actual[i]! - v) <= tolerance);

/** The marker codes of the file up to its first scan (SOI excluded). */
function segments(bytes: Uint8Array): number[] {
  const codes: number[] = [];
  for (
    let at = 2;
    at + 4 <= bytes.length && bytes[at] === 0xff && codes.at(-1) !== 0xda;
    at += 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!)
  )
    codes.push(bytes[at + 1]!);
  return codes;
}
const sof = (bytes: Uint8Array): number | undefined =>
  segments(bytes).find((c) => c >= 0xc0 && c <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(c));

/** Quadrant colours at the centre of each quadrant. */
function expectQuadrants(p: Pixels | RgbaImage, tolerance = 24): void {
  const channels = 'channels' in p ? p.channels : 4;
  const at = (fx: number, fy: number) =>
    p.data.subarray((Math.floor(fy * p.height) * p.width + Math.floor(fx * p.width)) * channels);
  for (const [q, fx, fy] of [
    ['tl', 0.25, 0.25],
    ['tr', 0.75, 0.25],
    ['bl', 0.25, 0.75],
    ['br', 0.75, 0.75],
  ] as const) {
    expect(near(at(fx, fy), QUADRANT_COLOURS[q].slice(0, 3), tolerance), `${q}: ${at(fx, fy).subarray(0, 3)}`).toBe(
      true,
    );
  }
}

describe('decoding: every sampling at sizes that are not MCU multiples', () => {
  const sizes: [number, number][] = [
    [1, 1],
    [17, 9],
    [4095, 3],
    [33, 17],
  ];
  const cases = sizes.flatMap(([w, h]) =>
    Object.entries(SAMPLINGS).flatMap(([name, sampling]) =>
      [false, true].map((progressive) => ({ w, h, name, sampling, progressive })),
    ),
  );

  it.each(cases)('$w×$h $name progressive=$progressive', ({ w, h, sampling, progressive }) => {
    const source = gradient(w, h, 3);
    const jpeg = encode(source, { quality: 95, sampling, progressive });
    expect(sof(jpeg)).toBe(progressive ? 0xc2 : 0xc0);
    const decoded = withJpegJob(jpeg, (job) => {
      expect(job.info).toMatchObject({
        width: w,
        height: h,
        components: 3,
        colorSpace: 'ycbcr',
        progressive,
        sampling: [sampling, [1, 1], [1, 1]],
      });
      job.setPixels(8, w, h, 1);
      expect(job.channels).toBe(3);
      return job.frame();
    });
    expect(decoded.length).toBe(w * h * 3);
    expect(diff(decoded, source.data).mean).toBeLessThan(1.5);
    expect(diff(decoded, source.data).worst).toBeLessThanOrEqual(8);
    // MozJPEG's decoder agrees exactly, but for 4:4:0, whose chroma it upsamples with another filter.
    expect(diff(decoded, rgbOf(decodeAny(jpeg)).data).worst).toBeLessThanOrEqual(sampling.join() === '1,2' ? 2 : 0);
  });

  it.each(sizes)('grey %i×%i stays one channel', (w, h) => {
    const source = gradient(w, h, 1);
    for (const progressive of [false, true]) {
      const decoded = decode(encode(source, { quality: 95, progressive }));
      expect(decoded).toMatchObject({ width: w, height: h, channels: 1 });
      expect(diff(decoded.data, source.data).mean).toBeLessThan(1.5);
    }
  });

  it('CMYK (YCCK with Adobe inverted inks) decodes to the right RGB colours', () => {
    // Inks as Adobe stores them (255 no ink, 0 full ink), and the RGB they make.
    const patches: [number[], number[]][] = [
      [
        [0, 255, 255, 255],
        [0, 255, 255],
      ],
      [
        [255, 0, 255, 255],
        [255, 0, 255],
      ],
      [
        [255, 255, 0, 255],
        [255, 255, 0],
      ], // C, M, Y
      [
        [255, 255, 255, 0],
        [0, 0, 0],
      ],
      [
        [255, 255, 255, 255],
        [255, 255, 255],
      ], // K, no ink
      [
        [255, 0, 0, 255],
        [255, 0, 0],
      ],
      [
        [128, 255, 255, 255],
        [128, 255, 255],
      ], // M + Y, half C
    ];
    const width = 16 * patches.length;
    const cmyk = new Uint8Array(width * 16 * 4);
    for (let i = 0; i < width * 16; i++) cmyk.set(patches[Math.floor((i % width) / 16)]![0], i * 4);
    for (const sampling of [
      [1, 1],
      [2, 2],
    ] as [number, number][]) {
      const decoded = withJpegJob(encodePixelsJpeg(cmyk, width, 16, 4, { quality: 95, sampling }), (job) => {
        expect(job.info).toMatchObject({ components: 4, colorSpace: 'ycck', adobe: true });
        job.setPixels(8, width, 16, 1);
        expect(job.channels).toBe(3);
        return job.frame();
      });
      patches.forEach(([, rgb], i) => {
        expect(near(decoded.subarray((8 * width + i * 16 + 8) * 3), rgb, 8), `patch ${i}`).toBe(true);
      });
    }
  });
});

describe('encoding: three modes', () => {
  const source = rgbOf(photo(160, 120));
  const input = encode(source, { quality: 95, sampling: [1, 1] });
  const encodeAt = (quality: number, subsample: boolean, mode: EncodeMode) =>
    withJpegJob(input, (job) => (job.setPixels(8, 160, 120, 1), job.encode(quality, subsample, mode)));
  const outputs = Object.fromEntries(MODES.map((mode) => [mode, encodeAt(90, true, mode)]));

  it.each(MODES)('%s writes a JPEG of the same size, close to the source', (mode) => {
    const out = outputs[mode]!;
    expect([out.width, out.height]).toEqual([160, 120]);
    expect(sof(out.bytes)).toBe(mode === 'progressive' ? 0xc2 : 0xc0);
    const decoded = decodeAny(out.bytes); // MozJPEG, a decoder independent of the engine
    expect([decoded.width, decoded.height]).toEqual([160, 120]);
    expect(diff(rgbOf(decoded).data, source.data).mean).toBeLessThan(6);
    expect(diff(decode(out.bytes).data, source.data).mean).toBeLessThan(6);
  });

  it('two_pass only optimises the Huffman tables: smaller than stream, identical pixels', () => {
    expect(outputs.two_pass!.bytes.length).toBeLessThan(outputs.stream!.bytes.length);
    expect(decode(outputs.two_pass!.bytes).data).toEqual(decode(outputs.stream!.bytes).data);
    // Progressive scans code the same coefficients too.
    expect(decode(outputs.progressive!.bytes).data).toEqual(decode(outputs.stream!.bytes).data);
  });

  it("progressive colour is written in our scan script: DC, each component's two lowest AC, the rest, luma refined last", () => {
    const scans: string[] = [];
    const bytes = outputs.progressive!.bytes;
    for (let at = 2; at + 3 < bytes.length; ) {
      if (bytes[at] !== 0xff) {
        at++;
        continue;
      }
      const marker = bytes[at + 1]!;
      if (marker === 0x00 || (marker >= 0xd0 && marker <= 0xd8) || marker === 0xff) {
        at += marker === 0xff ? 1 : 2;
        continue;
      }
      const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
      if (marker === 0xda) {
        const n = bytes[at + 4]!;
        const components = Array.from({ length: n }, (_, i) => bytes[at + 5 + 2 * i]!).join('');
        const [ss, se, a] = [bytes[at + 5 + 2 * n]!, bytes[at + 6 + 2 * n]!, bytes[at + 7 + 2 * n]!];
        scans.push(`${components}:${ss}-${se}:${a >> 4}/${a & 15}`);
      }
      at += 2 + length;
    }
    expect(scans).toEqual([
      '123:0-0:0/0',
      '1:1-2:0/0',
      '1:3-63:0/1',
      '2:1-2:0/0',
      '2:3-63:0/0',
      '3:1-2:0/0',
      '3:3-63:0/0',
      '1:3-63:1/0',
    ]);
  });

  it('quality and subsampling are applied; grey stays grey', () => {
    const [low, sub, full] = [
      encodeAt(30, true, 'stream'),
      encodeAt(90, true, 'stream'),
      encodeAt(90, false, 'stream'),
    ];
    expect(low.bytes.length).toBeLessThan(sub.bytes.length);
    expect(withJpegJob(sub.bytes, (job) => job.info.sampling[0])).toEqual([2, 2]);
    expect(withJpegJob(full.bytes, (job) => job.info.sampling[0])).toEqual([1, 1]);
    const grey = withJpegJob(
      encode(gradient(50, 30, 1), { quality: 95 }),
      (job) => (job.setPixels(8, 50, 30, 1), job.encode(80, true, 'two_pass')),
    );
    expect(withJpegJob(grey.bytes, (job) => job.info)).toMatchObject({
      components: 1,
      colorSpace: 'gray',
      width: 50,
      height: 30,
    });
  });
});

describe('DCT scaling and resampling', () => {
  const input = encode(rgbOf(quadrants(400, 300)), { quality: 95 });
  const cases: [number, number, number][] = [
    [8, 400, 300],
    [8, 123, 77],
    [4, 200, 150],
    [4, 151, 101],
    [3, 149, 111],
    [2, 97, 73],
    [1, 50, 38],
    [1, 13, 9],
    [1, 80, 60],
  ];

  it.each(cases)('scale %i/8 to %i×%i: exactly that size, quadrants in place', (scale, w, h) => {
    const frame = withJpegJob(input, (job) => (job.setPixels(scale, w, h, 1), job.frame()));
    expect(frame.length).toBe(w * h * 3);
    expectQuadrants({ data: frame, width: w, height: h, channels: 3 }, 16);
  });
});

describe('EXIF orientations: encoded upright', () => {
  const upright = photo(64, 40);
  const cases = [1, 2, 3, 4, 5, 6, 7, 8].flatMap((orientation) => MODES.map((mode) => ({ orientation, mode })));

  it.each(cases)('orientation $orientation, $mode', ({ orientation, mode }) => {
    const stored = storeWithOrientation(upright, orientation);
    const out = withJpegJob(encode(rgbOf(stored), { quality: 95, sampling: [1, 1] }), (job) => {
      job.setPixels(8, stored.width, stored.height, orientation);
      return job.encode(95, false, mode);
    });
    expect([out.width, out.height]).toEqual([64, 40]);
    const decoded = decodeAny(out.bytes);
    expect([decoded.width, decoded.height]).toEqual([64, 40]);
    // Every pixel where it belongs: a picture turned or shifted by one pixel is far off.
    expect(diff(rgbOf(decoded).data, rgbOf(upright).data).mean).toBeLessThan(3);
  });

  it.each([5, 6, 7, 8])(
    '1600×1200 with orientation %i, full size and halved',
    (orientation) => {
      const stored = storeWithOrientation(quadrants(1600, 1200), orientation);
      const [full, half] = withJpegJob(encode(rgbOf(stored), { quality: 90 }), (job) => {
        job.setPixels(8, stored.width, stored.height, orientation);
        const a = job.encode(85, true, 'two_pass');
        job.setPixels(4, stored.width / 2, stored.height / 2, orientation);
        return [a, job.encode(85, true, 'progressive')];
      });
      expect([full!.width, full!.height, half!.width, half!.height]).toEqual([1600, 1200, 800, 600]);
      for (const out of [full!, half!]) {
        const decoded = decodeAny(out.bytes);
        expect([decoded.width, decoded.height]).toEqual([out.width, out.height]);
        expectQuadrants(decoded);
      }
      // Four encodes and decodes of up to 1.9 MP: about 3 s each on an idle 2-core machine, past 5 s loaded.
    },
    20_000,
  );
});

const transpose = (t: number[]): number[] => t.map((_, i) => t[(i % 8) * 8 + Math.floor(i / 8)]!);

/** The re-encode rule: a step of ours finer than the input's but at least half of it is raised to the input's. */
const onInputGrid = (own: number[], input: number[]) =>
  own.map((q, i) => (q < input[i]! && 2 * q >= input[i]! ? input[i]! : q));

describe("re-encoding a JPEG at full size: a step a little finer than the input's is raised to it", () => {
  // Annex K's tables at quality 50 (MozJPEG's table 0): not symmetric, so a transposed table shows. At
  // quality 60 the engine's steps are finer than some of its entries by less than half (raised), finer
  // by more at others (kept) and coarser at the rest. 160 × 128 is whole 16 × 16 MCUs.
  const annexK = (width: number, height: number) =>
    encodeJpeg(photo(width, height), { ...jpegOptions(50), quant_table: 0 });
  const input = annexK(160, 128);
  const inTables = quantTables(input);
  const reencode = (
    bytes: Uint8Array,
    [w, h]: [number, number],
    orientation = 1,
    subsample = true,
    mode: EncodeMode = 'progressive',
    quality = 60,
  ) => withJpegJob(bytes, (job) => (job.setPixels(8, w, h, orientation), job.encode(quality, subsample, mode)));
  // Resized, the blocks do not line up: the engine's own tables.
  const own = [0, 1].map((t) => quantTables(reencode(input, [80, 64]).bytes).get(t)!);

  it.each(MODES)(
    "%s: within half of the input's steps, the input's own tables, the same picture, about its size",
    (mode) => {
      // The engine's own quality 88 is within half of its quality 90 at every step (85 no longer is: its
      // chroma is near quality 80's, which rises far more steeply than 90's).
      const ours88 = encode(rgbOf(photo(160, 128)), { quality: 88 });
      const out = reencode(ours88, [160, 128], 1, true, mode, 90);
      expect(quantTables(out.bytes)).toEqual(quantTables(ours88));
      // The coefficients come back as they were: quality 90 with the engine's own, finer steps would
      // re-quantise them and spend bytes on the difference.
      expect(diff(decode(out.bytes).data, decode(ours88).data).mean).toBeLessThan(0.6);
      // Stream mode writes the standard Huffman tables, a large part of a file this small.
      if (mode !== 'stream') expect(out.bytes.length).toBeLessThan(ours88.length * 1.1);
    },
  );

  it('4:2:0 chroma that lines up comes back as the input had it, not blurred by a second downsampling', () => {
    // Colour detail a few pixels wide: the decoder's smooth upsampling of the input's half-resolution
    // chroma, averaged 2 × 2 again, is the input's chroma blurred; the engine's downsampling undoes the upsampling.
    const stripes = photo(160, 128);
    for (let i = 0; i < stripes.data.length; i += 4) {
      const x = (i / 4) % 160;
      const red = Math.floor(x / 3) % 2 === 0;
      stripes.data[i] = red ? 200 : 60;
      stripes.data[i + 2] = red ? 60 : 200;
    }
    const ours88 = encode(rgbOf(stripes), { quality: 88 });
    const out = reencode(ours88, [160, 128], 1, true, 'progressive', 90);
    expect(quantTables(out.bytes)).toEqual(quantTables(ours88));
    // Box-averaged as before: a mean difference of 9.3 from the input, worst 27; now 2.4, worst 9 (from quality 85).
    expect(diff(decode(out.bytes).data, decode(ours88).data).mean).toBeLessThan(4);
  });

  it("raised where within half of the input's step, the engine's own step where finer than that or coarser", () => {
    const tables = quantTables(reencode(input, [160, 128]).bytes);
    expect(tables.get(0)).toEqual(onInputGrid(own[0]!, inTables.get(0)!));
    expect(tables.get(1)).toEqual(onInputGrid(own[1]!, inTables.get(1)!));
    // All three kinds of step occur in luma's table.
    const [luma, inLuma] = [tables.get(0)!, inTables.get(0)!];
    expect(luma.some((q, i) => q === inLuma[i] && own[0]![i]! < q)).toBe(true);
    expect(luma.some((q, i) => q === own[0]![i] && 2 * q < inLuma[i]!)).toBe(true);
    expect(luma.some((q, i) => q === own[0]![i] && q > inLuma[i]!)).toBe(true);
  });

  it("far finer than the input (a quality above the input's), the engine's own tables", () => {
    const tables = quantTables(reencode(input, [160, 128], 1, true, 'progressive', 90).bytes);
    const own90 = quantTables(reencode(input, [80, 64], 1, true, 'progressive', 90).bytes);
    expect(tables).toEqual(own90);
    expect(tables.get(0)![0]).toBeLessThan(inTables.get(0)![0]! / 2);
  });

  it('turned upright by EXIF a quarter turn: the tables are transposed with the blocks', () => {
    const out = reencode(input, [160, 128], 6);
    expect([out.width, out.height]).toEqual([128, 160]);
    expect(quantTables(out.bytes).get(0)).toEqual(onInputGrid(own[0]!, transpose(inTables.get(0)!)));
    expect(quantTables(out.bytes).get(1)).toEqual(onInputGrid(own[1]!, inTables.get(1)!)); // Annex K's chroma table is symmetric
  });

  it("where the blocks do not line up, the engine's own tables: resized, or other sampling", () => {
    expect(onInputGrid(own[0]!, inTables.get(0)!)).not.toEqual(own[0]);
    expect(quantTables(reencode(input, [160, 128], 1, false).bytes).get(0)).toEqual(own[0]);
  });

  it("a file that defines a table after its first scan keeps the engine's own tables; one with a JPEG appended does not", () => {
    // The header's DQT segment again, just before the second scan: the same table, so the same picture,
    // but libjpeg would take a table from there for a component whose first scan comes later.
    const dqt = input.indexOf(0xdb, 2) - 1;
    expect(input[dqt]).toBe(0xff);
    const segment = input.subarray(dqt, dqt + 2 + ((input[dqt + 2]! << 8) | input[dqt + 3]!));
    const scans = [...input.keys()].filter((i) => input[i] === 0xff && input[i + 1] === 0xda);
    expect(scans.length).toBeGreaterThan(1); // progressive: a marker pair no entropy-coded data can hold
    const late = new Uint8Array([...input.subarray(0, scans[1]!), ...segment, ...input.subarray(scans[1]!)]);
    expect(decode(late).data).toEqual(decode(input).data);
    expect(quantTables(reencode(late, [160, 128]).bytes).get(0)).toEqual(own[0]);
    // After the image's end, another JPEG's tables (a phone's appended preview) are not this image's.
    const appended = new Uint8Array([...input, ...annexK(32, 32)]);
    expect(quantTables(reencode(appended, [160, 128]).bytes).get(0)).toEqual(onInputGrid(own[0]!, inTables.get(0)!));
  });

  // A turn that mirrors a stored axis moves that axis's partial edge MCU to the other side: the blocks
  // then line up only if that axis is whole 16-pixel MCUs. 160 is, 100 and 150 are not.
  const lumaTable = (bytes: Uint8Array, size: [number, number], orientation: number) =>
    quantTables(
      withJpegJob(bytes, (job) => (job.setPixels(8, ...size, orientation), job.encode(60, true, 'progressive'))).bytes,
    ).get(0)!;
  const luma = inTables.get(0)!;
  // By stored size, the table each orientation gets: the input's, the input's transposed, or our own.
  const EXPECTED: Record<string, Record<number, 'input' | 'transposed' | 'own'>> = {
    '160×100': { 1: 'input', 2: 'input', 4: 'own', 5: 'transposed', 6: 'own', 7: 'own', 8: 'transposed' },
    '150×128': { 2: 'own', 3: 'own', 4: 'input', 6: 'transposed', 8: 'own' },
  };
  const cases = Object.entries(EXPECTED).flatMap(([size, tables]) =>
    Object.entries(tables).map(([orientation, expected]) => [size, Number(orientation), expected] as const),
  );
  it.each(cases)('stored %s, orientation %i: %s table', (size, orientation, expected) => {
    const dims = size.split('×').map(Number) as [number, number];
    const table = lumaTable(annexK(...dims), dims, orientation);
    const ownLuma = own[0]!;
    if (expected === 'input') expect(table).toEqual(onInputGrid(ownLuma, luma));
    else if (expected === 'transposed') expect(table).toEqual(onInputGrid(ownLuma, transpose(luma)));
    else expect(table).toEqual(ownLuma);
  });
});

describe("the engine's tables per quality", () => {
  const tablesAt = (quality: number) => quantTables(encode(rgbOf(photo(64, 48)), { quality }));
  /** A table's mean step on each diagonal d = u + v (0 to 14). */
  const byDiagonal = (table: number[]) =>
    Array.from({ length: 15 }, (_, d) => {
      const steps = table.filter((_, i) => (i >> 3) + (i & 7) === d);
      return steps.reduce((a, b) => a + b, 0) / steps.length;
    });

  // A camera photo's sensor noise sits in the middle and high frequencies, which SSIMULACRA2 barely
  // rewards; its lowest frequencies it rewards most. A straight table rises as much over the last three
  // diagonals as over the first three.
  it.each([60, 80])(
    'quality %i: luma rises steeply over the lowest frequencies and levels off over the highest',
    (quality) => {
      const luma = byDiagonal(tablesAt(quality).get(0)!);
      expect(luma[4]! - luma[1]!).toBeGreaterThan(1.2 * (luma[14]! - luma[11]!));
    },
  );

  // SSIMULACRA2 pays for the first horizontal and vertical AC steps far more than a table smooth in
  // u + v grants them, and for (0, 2) and (2, 0) less: at quality 60 and 80 luma's (0, 1) and (1, 0)
  // are nearer the DC's step than (1, 1)'s, and (0, 2) and (2, 0) coarser than (1, 1) by two or more
  // (at 80 in chroma too).
  it.each([60, 80])(
    'quality %i: luma fine at (0, 1) and (1, 0), coarser at (0, 2) and (2, 0) than at (1, 1)',
    (quality) => {
      const luma = tablesAt(quality).get(0)!;
      const at = (u: number, v: number) => luma[v * 8 + u]!;
      for (const first of [at(1, 0), at(0, 1)]) expect(first - at(0, 0)).toBeLessThan(at(1, 1) - first);
      expect(Math.min(at(2, 0), at(0, 2))).toBeGreaterThan(at(1, 1) + 1);
    },
  );
  // Chroma's first ring is 0.8 of the smooth table's: with 80's bases × 1.07 (5 and 6 over a DC of 3,
  // where they were 5 and 5) it stays well under (1, 1)'s step.
  it("quality 80: luma's (0, 1) and (1, 0) one step above the DC's, chroma's at most three above its DC", () => {
    const [luma, chroma] = [tablesAt(80).get(0)!, tablesAt(80).get(1)!];
    expect([luma[1], luma[8]]).toEqual([luma[0]! + 1, luma[0]! + 1]);
    expect(Math.max(chroma[1]!, chroma[8]!)).toBeLessThanOrEqual(chroma[0]! + 3);
    expect(Math.max(chroma[1]!, chroma[8]!)).toBeLessThan(chroma[9]!);
  });
  // At 90 chroma's first ring is 0.8 of the smooth table's, as at 80: with the staggered rounding, one
  // of (0, 1) and (1, 0) lands on the DC's step (2), where both were a step above it.
  it("quality 90: chroma's first ring reaches down to its DC's step", () => {
    const chroma = tablesAt(90).get(1)!;
    expect(Math.min(chroma[1]!, chroma[8]!)).toBe(chroma[0]);
  });
  it.each([60, 80])('quality %i: chroma coarser at (0, 2) and (2, 0) than at (1, 1)', (quality) => {
    const chroma = tablesAt(quality).get(1)!;
    expect(Math.min(chroma[2]!, chroma[16]!)).toBeGreaterThan(chroma[9]! + 1);
  });

  // At 4:2:0 one chroma DC covers 16 × 16 pixels: its error is a flat colour cast over them, which
  // SSIMULACRA2 and butteraugli both see in smooth areas. At 80 its step is ¾ of what the smooth table
  // gives (4 → 3), while luma's DC keeps the table's; at 60 both keep it (luma's base there is 12).
  it.each([
    [60, 10, 9],
    [80, 5, 3],
  ])("quality %i: luma's DC step %i, chroma's %i", (quality, luma, chroma) => {
    const tables = tablesAt(quality);
    expect([tables.get(0)![0], tables.get(1)![0]]).toEqual([luma, chroma]);
  });
});

describe('lossless transcode', () => {
  const aligned = encode(rgbOf(photo(64, 48)), { quality: 90 }); // 4:2:0: 16×16 MCUs, 4 × 3 of them
  const transcode = (bytes: Uint8Array, orientation: number, progressive = false) =>
    withJpegJob(bytes, (job) => job.transcode(orientation, progressive));

  it('orientation 1: the same pixels, baseline or progressive, only the queued markers', () => {
    const withExif = encode(rgbOf(photo(70, 45)), {
      quality: 90,
      markers: [{ code: 0xe1, data: new TextEncoder().encode('Exif\0\0II*\0') }],
    });
    for (const input of [aligned, withExif]) {
      for (const progressive of [false, true]) {
        const out = transcode(input, 1, progressive);
        expect(sof(out.bytes)).toBe(progressive ? 0xc2 : 0xc0);
        expect(segments(out.bytes)).not.toContain(0xe1);
        expect(decode(out.bytes)).toEqual(decode(input));
      }
    }
    const marked = withJpegJob(
      withExif,
      (job) => (job.addMarker(0xfe, new TextEncoder().encode('kept')), job.transcode(1, true)),
    );
    expect(segments(marked.bytes).filter((c) => c >= 0xe0)).toEqual([0xe0, 0xfe]);
  });

  it('orientation 6: dimensions swapped, the picture turned; turning back restores every pixel', () => {
    const input = decode(aligned);
    const out = transcode(aligned, 6, true);
    expect([out.width, out.height]).toEqual([48, 64]);
    const rotated = decode(out.bytes);
    expect([rotated.width, rotated.height]).toEqual([48, 64]);
    // The coefficients move exactly, but libjpeg's integer IDCT (columns, then rows) does not round a
    // transposed block as it rounds the block: the turned pixels differ by a few levels.
    const { mean, worst } = diff(rotated.data, turned(input, 6));
    expect([mean < 0.5, worst <= 3], `mean ${mean}, worst ${worst}`).toEqual([true, true]);
    // Orientation 8 turns the other way: the original coefficients, so exactly the original pixels.
    expect(decode(transcode(out.bytes, 8).bytes)).toEqual(input);
  });

  it('edges that are not whole MCUs and would have to move are trimmed, at the upright left and top', () => {
    // 70×45: 4:4:4 and grey have 8×8 MCUs (64 + 6 columns, 40 + 5 rows); 4:2:0 has 16×16 ones (64 + 6, 32 + 13).
    // Per orientation: the output's upright width and height, and where it sits in the turned input.
    const expected: Record<number, number[]> = {
      1: [70, 45, 0, 0],
      2: [64, 45, 6, 0],
      3: [64, 40, 6, 5],
      4: [70, 40, 0, 5],
      5: [45, 70, 0, 0],
      6: [40, 70, 5, 0],
      7: [40, 64, 5, 6],
      8: [45, 64, 0, 6],
    };
    for (const source of [rgbOf(photo(70, 45)), gradient(70, 45, 1)]) {
      const jpeg = encode(source, { quality: 90, sampling: [1, 1] });
      const input = decode(jpeg);
      for (let o = 1; o <= 8; o++) {
        const [w, h, x0, y0] = expected[o]!;
        const out = transcode(jpeg, o);
        expect([out.width, out.height], `orientation ${o}`).toEqual([w, h]);
        expect(
          diff(decode(out.bytes).data, turned(input, o, [x0!, y0!, w!, h!])).worst,
          `orientation ${o}`,
        ).toBeLessThanOrEqual(o <= 4 ? 0 : 3);
      }
    }
    const sub = encode(rgbOf(photo(70, 45)), { quality: 90, sampling: [2, 2] });
    const sizes = [1, 2, 3, 4, 5, 6, 7, 8].map((o) => transcode(sub, o)).map((out) => [out.width, out.height]);
    expect(sizes).toEqual([
      [70, 45],
      [64, 45],
      [64, 32],
      [70, 32],
      [45, 70],
      [32, 70],
      [32, 64],
      [45, 64],
    ]);
  });
});

describe('damaged files are refused, never decoded to grey', () => {
  const good = encode(rgbOf(photo(96, 64)), { quality: 90 });
  const progressive = encode(rgbOf(photo(96, 64)), { quality: 90, progressive: true });
  /** Where the first scan's entropy-coded data starts. */
  const scanOf = (bytes: Uint8Array): number => {
    let at = 2;
    for (let sos = false; !sos; at += 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!)) sos = bytes[at + 1] === 0xda;
    return at;
  };
  /** Where the last scan's header (SOS) starts: a file cut there ends cleanly between two scans. */
  const lastScanOf = (bytes: Uint8Array): number => {
    let last = -1;
    for (let i = 0; i + 1 < bytes.length; i++) if (bytes[i] === 0xff && bytes[i + 1] === 0xda) last = i;
    return last;
  };
  const scan = scanOf(good);
  const middle = (scan + good.length) >> 1;
  const overwritten = (bytes: Uint8Array, at: number, pattern: number[]): Uint8Array =>
    bytes.map((v, i) => (i >= at && i < at + pattern.length ? pattern[i - at]! : v));
  const ones = Array(16).fill([0xff, 0x00]).flat(); // 128 one bits: no Huffman code is all ones
  // A larger file, damaged near the start of its scan: libjpeg-turbo's fast Huffman path, taken while 512
  // bytes a block are buffered, turns a bad code into a zero without a warning; the engine's source never
  // buffers that much (sr_job.c), so the slow path sees every code.
  const large = encode(rgbOf(photo(400, 300)), { quality: 90 });
  const engineSlot = () => wasmMemoryReport().codecs.find((c) => c.name === 'sr_jpeg')!;
  const attempts: [string, (job: JpegJob) => unknown][] = [
    ['frame', (job) => (job.setPixels(8, 96, 64, 1), job.frame())],
    ['stream encode', (job) => (job.setPixels(8, 96, 64, 1), job.encode(80, true, 'stream'))],
    ['two-pass encode, resized', (job) => (job.setPixels(4, 40, 30, 1), job.encode(80, true, 'two_pass'))],
    ['progressive encode, turned', (job) => (job.setPixels(8, 96, 64, 6), job.encode(80, true, 'progressive'))],
    ['transcode', (job) => job.transcode(6, true)],
  ];
  const damaged: [string, Uint8Array, RegExp][] = [
    ['cut in the middle of the scan', good.subarray(0, middle), /premature end/i],
    ['progressive, cut after its first scans', progressive.subarray(0, lastScanOf(progressive)), /premature end/i],
    ['a restart marker written over the scan', overwritten(good, middle, [0xff, 0xd3]), /corrupt jpeg data/i],
    ['ones written over the scan', overwritten(good, middle, ones), /corrupt jpeg data/i],
    [
      'ones written over the scan of a larger file, far from its end',
      overwritten(large, scanOf(large) + 1000, ones),
      /bad huffman code/i,
    ],
  ];

  it.each(damaged)('%s', (_, bytes, message) => {
    expect(large.length - scanOf(large)).toBeGreaterThan(20_000);
    for (const [what, attempt] of attempts) {
      expect(() => withJpegJob(bytes, attempt), what).toThrow(JpegEngineError);
      expect(() => withJpegJob(bytes, attempt), what).toThrow(message);
    }
  });

  it('a header that is not a JPEG throws; the next file gets a fresh instance and decodes', () => {
    // One instance to start from: the pool may keep more than one from earlier tests, and a second idle
    // one would stay live beside the one dropped for its failure.
    resetWasmInstances();
    expect(decode(good).data.length).toBe(96 * 64 * 3);
    expect(engineSlot().live).toBe(true);
    const garbage = [
      new Uint8Array([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x03, 0x08]), // a frame header cut short
      new Uint8Array([0xff, 0xd8, 0x12, 0x34, 0x56, 0x78, 0x9a]), // SOI, then no marker
      new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), // a PNG signature
      good.subarray(0, scan - 40), // ends inside the Huffman tables
    ];
    for (const bytes of garbage) {
      expect(() => withJpegJob(bytes, (job) => job.info)).toThrow(JpegEngineError);
      expect(() => withJpegJob(bytes, (job) => job.setPixels(8, 8, 8, 1))).toThrow(JpegEngineError);
      expect(engineSlot().live).toBe(false); // dropped after the failure
    }
    const failed = engineSlot().instantiations;
    const again = decode(good);
    expect(engineSlot()).toMatchObject({ live: true, instantiations: failed + 1 });
    expect(diff(again.data, rgbOf(photo(96, 64)).data).mean).toBeLessThan(6);
    expect(again).toEqual(decode(good));
    expect(engineSlot()).toMatchObject({ live: true, instantiations: failed + 1 }); // a success keeps its instance
  });
});
