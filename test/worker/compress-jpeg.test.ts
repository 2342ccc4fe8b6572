// POST /api/v1/compress with JPEG input, as a caller sees it: which metadata segments come back
// (metadata=strip|keep, ICC), X-Image-Width/Height against the output's own frame header, the lossless
// rewrite, and damaged or oversized files refused with 422 without spending quota.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RgbaImage } from '../../wasm/image.ts';
import { wasmMemoryReport } from '../../wasm/instances.ts';
import { encodePixelsJpeg, type JpegMarker } from '../../wasm/jpeg-engine.ts';
import { makeKey, type TestKey } from './helpers.ts';
import {
  QUADRANT_COLOURS,
  bodyBytes,
  compressCall,
  decodeAny,
  declaringSize,
  near,
  photo,
  pixel,
  quadrants,
  quantTables,
  storeWithOrientation,
  type Parts,
} from './image-fixtures.ts';
import { encodeJpeg, jpegOptions } from './mozjpeg.ts';

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const cat = (...parts: (Uint8Array | number[])[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));
const latin1 = (bytes: Uint8Array): string => String.fromCharCode(...bytes);

const rgbOf = (image: RgbaImage): Uint8Array => image.data.filter((_, i) => i % 4 !== 3);
const jpegOf = (image: RgbaImage, quality: number, markers: JpegMarker[] = [], sampling: [number, number] = [2, 2]) =>
  encodePixelsJpeg(rgbOf(image), image.width, image.height, 3, { quality, markers, sampling });

/** The segments before the first scan (SOI excluded), with their payloads. */
function segments(bytes: Uint8Array): JpegMarker[] {
  expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8]);
  const out: JpegMarker[] = [];
  for (let at = 2; out.at(-1)?.code !== 0xda; ) {
    expect(bytes[at]).toBe(0xff);
    const end = at + 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!);
    out.push({ code: bytes[at + 1]!, data: bytes.slice(at + 4, end) });
    at = end;
  }
  return out;
}

/** Width, height and components from the frame header. */
function frame(bytes: Uint8Array): [number, number, number] {
  const sof = segments(bytes).find((s) => [0xc0, 0xc1, 0xc2].includes(s.code))!.data;
  return [(sof[3]! << 8) | sof[4]!, (sof[1]! << 8) | sof[2]!, sof[5]!];
}

// ---- Metadata fixtures

/** EXIF (little-endian TIFF): IFD0 with Make, Orientation and a GPS IFD holding a latitude. */
function exif(orientation: number): Uint8Array {
  const u16 = (v: number) => [v & 255, v >> 8];
  const u32 = (v: number) => [v & 255, (v >> 8) & 255, (v >> 16) & 255, v >>> 24];
  const entry = (tag: number, type: number, count: number, value: number[]) =>
    [...u16(tag), ...u16(type), ...u32(count), ...value, 0, 0, 0, 0].slice(0, 12);
  const ifd0 = [
    ...u16(3),
    ...entry(0x010f, 2, 6, u32(80)),
    ...entry(0x0112, 3, 1, u16(orientation)),
    ...entry(0x8825, 4, 1, u32(50)),
    ...u32(0),
  ];
  const gps = [...u16(2), ...entry(0x0001, 2, 2, [0x4e, 0]), ...entry(0x0002, 5, 3, u32(86)), ...u32(0)];
  const latitude = [52, 1, 31, 1, 4512, 100].flatMap(u32);
  return cat(ascii('Exif\0\0'), ascii('II'), u16(42), u32(8), ifd0, gps, ascii('Phone\0'), latitude);
}

/** IFD0's Orientation of an EXIF payload. */
function exifOrientation(payload: Uint8Array): number {
  const view = new DataView(payload.buffer, payload.byteOffset + 6);
  const little = view.getUint16(0) === 0x4949;
  const ifd = view.getUint32(4, little);
  for (let i = 0; i < view.getUint16(ifd, little); i++) {
    if (view.getUint16(ifd + 2 + i * 12, little) === 0x0112) return view.getUint16(ifd + 2 + i * 12 + 8, little);
  }
  return 0;
}

const xmp = (orientation: number) =>
  cat(
    ascii('http://ns.adobe.com/xap/1.0/\0'),
    ascii(
      `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:Orientation="${orientation}" tiff:Make="Phone"/></rdf:RDF></x:xmpmeta>`,
    ),
  );

/** An ICC profile of `size` bytes whose header names `space`, cut into `chunks` APP2 segments. */
function icc(space: 'RGB ' | 'CMYK' | 'GRAY', size: number, chunks: number): JpegMarker[] {
  const profile = new Uint8Array(size).map((_, i) => (i * 7 + 3) & 255);
  new DataView(profile.buffer).setUint32(0, size);
  profile.set(ascii(`lcms\x04\x30\x00\x00mntr${space}XYZ `), 4);
  profile.set(ascii('acsp'), 36);
  const step = Math.ceil(size / chunks);
  return Array.from({ length: chunks }, (_, i) => ({
    code: 0xe2,
    data: cat(ascii('ICC_PROFILE\0'), [i + 1, chunks], profile.subarray(i * step, (i + 1) * step)),
  }));
}

const MARKERS: JpegMarker[] = [
  { code: 0xe1, data: exif(6) },
  { code: 0xe1, data: xmp(6) },
  { code: 0xe2, data: cat(ascii('MPF\0'), ascii('II*\0'), [8, 0, 0, 0, 0, 0]) },
  { code: 0xed, data: cat(ascii('Photoshop 3.0\0'), ascii('8BIM'), [4, 4, 0, 0, 0, 0, 0, 0]) },
  { code: 0xfe, data: ascii('a comment from the camera') },
];
const isExif = (s: JpegMarker) => s.code === 0xe1 && latin1(s.data.subarray(0, 6)) === 'Exif\0\0';
const isXmp = (s: JpegMarker) => s.code === 0xe1 && latin1(s.data.subarray(0, 29)) === 'http://ns.adobe.com/xap/1.0/\0';
const isIcc = (s: JpegMarker) => s.code === 0xe2 && latin1(s.data.subarray(0, 12)) === 'ICC_PROFILE\0';

let pro: TestKey;
beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
});

async function compressed(parts: Parts): Promise<{ res: Response; body: Uint8Array }> {
  const res = await compressCall(pro.key, parts);
  const body = await bodyBytes(res);
  expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
  return { res, body };
}

/** X-Image-Width and X-Image-Height say what the body's frame header says (and a decoder sees). */
function expectSizeHeaders(res: Response, body: Uint8Array, size: [number, number]): void {
  if (body[0] === 0xff) expect(frame(body).slice(0, 2)).toEqual(size);
  expect([Number(res.headers.get('x-image-width')), Number(res.headers.get('x-image-height'))]).toEqual(size);
  const decoded = decodeAny(body);
  expect([decoded.width, decoded.height]).toEqual(size);
}

/** Quadrants with some grain, so that quality matters to the encoder; stored turned in most fixtures. */
function grainy(width: number, height: number): RgbaImage {
  const image = quadrants(width, height);
  image.data.forEach((v, i) => {
    image.data[i] = i % 4 === 3 ? v : Math.max(0, Math.min(255, v + (((i * 2654435761) >>> 28) - 8)));
  });
  return image;
}
const upright = grainy(96, 64);
const tagged = jpegOf(storeWithOrientation(upright, 6), 92, MARKERS);
const expectUpright = (image: RgbaImage) => {
  const [w, h] = [image.width, image.height];
  expect(
    near(pixel(image, w >> 2, h >> 2), QUADRANT_COLOURS.tl, 30) &&
      near(pixel(image, (3 * w) >> 2, h >> 2), QUADRANT_COLOURS.tr, 30),
  ).toBe(true);
  expect(
    near(pixel(image, w >> 2, (3 * h) >> 2), QUADRANT_COLOURS.bl, 30) &&
      near(pixel(image, (3 * w) >> 2, (3 * h) >> 2), QUADRANT_COLOURS.br, 30),
  ).toBe(true);
};

describe('metadata', () => {
  const requests: [string, Parts][] = [
    ['plain', {}],
    ['resized', { width: 40 }],
    ['target_kb', { target_kb: 2 }],
    ['quality 100', { quality: 100 }],
    ['explicit strip', { metadata: 'strip' }],
  ];

  it.each(requests)('%s: no EXIF, XMP, MPF, Photoshop or comment segment comes back', async (_, parts) => {
    const { res, body } = await compressed({ image: tagged, ...parts });
    const codes = segments(body).map((s) => s.code);
    expect(codes.filter((c) => (c >= 0xe1 && c <= 0xef) || c === 0xfe)).toEqual([]);
    for (const secret of ['Exif', 'Phone', 'xap/1.0', 'MPF', 'Photoshop', 'comment'])
      expect(latin1(body).includes(secret), secret).toBe(false);
    expectSizeHeaders(res, body, parts.width ? [40, 27] : [96, 64]);
    expectUpright(decodeAny(body));
  });

  it.each(['png', 'webp'])('%s output carries none of it either', async (format) => {
    const { body } = await compressed({ image: tagged, format });
    for (const secret of ['Exif', 'Phone', 'xap/1.0', 'comment'])
      expect(latin1(body).includes(secret), secret).toBe(false);
    expectUpright(decodeAny(body));
  });

  it.each([
    ['re-encoded', jpegOf(storeWithOrientation(upright, 6), 98, MARKERS), {}],
    ['resized', tagged, { width: 48 }],
    ['rewritten losslessly', tagged, { quality: 100 }],
  ] as [string, Uint8Array, Parts][])(
    'metadata=keep, %s: EXIF and XMP kept with orientation 1, pixels upright',
    async (_, image, parts) => {
      const { res, body } = await compressed({ image, metadata: 'keep', ...parts });
      const kept = segments(body);
      expect(
        kept
          .filter((s) => (s.code >= 0xe1 && s.code <= 0xef) || s.code === 0xfe)
          .map((s) => (isExif(s) ? 'exif' : isXmp(s) ? 'xmp' : s.code)),
      ).toEqual(['exif', 'xmp']);
      const exifOut = kept.find(isExif)!.data;
      expect(exifOrientation(exifOut)).toBe(1);
      expect(exifOut).toEqual(exif(1)); // everything else as it was, GPS included: the caller asked to keep it
      expect(latin1(kept.find(isXmp)!.data)).toBe(latin1(xmp(1)));
      const decoded = decodeAny(body);
      expectSizeHeaders(res, body, [decoded.width, decoded.height]);
      expect(decoded.width / decoded.height).toBeCloseTo(1.5, 1);
      expectUpright(decoded);
    },
  );
});

describe('ICC profiles', () => {
  const cases: [string, JpegMarker[]][] = [
    ['one chunk', icc('RGB ', 132, 1)],
    ['three chunks', icc('RGB ', 3000, 3)],
  ];

  it.each(cases)('an RGB profile in %s is kept byte for byte, whatever the path', async (_, profile) => {
    const image = jpegOf(photo(80, 48), 90, [{ code: 0xe1, data: exif(1) }, ...profile]);
    for (const parts of [{}, { width: 40 }, { quality: 100 }, { target_kb: 1 }] as Parts[]) {
      const { body } = await compressed({ image, ...parts });
      const out = segments(body).filter(isIcc);
      expect(out.map((s) => latin1(s.data))).toEqual(profile.map((s) => latin1(s.data)));
      expect(segments(body).some(isExif)).toBe(false);
    }
  });

  it('a CMYK profile on a CMYK file is dropped: the output is RGB', async () => {
    const cmyk = new Uint8Array(64 * 32 * 4).map((_, i) => (i % 4 === 0 && (i >> 2) % 64 < 32 ? 0 : 255)); // left half cyan ink
    const image = encodePixelsJpeg(cmyk, 64, 32, 4, { quality: 90, markers: icc('CMYK', 500, 1) });
    const { body } = await compressed({ image, quality: 80 });
    expect(frame(body)).toEqual([64, 32, 3]);
    expect(segments(body).filter(isIcc)).toEqual([]);
    const decoded = decodeAny(body);
    expect(
      near(pixel(decoded, 8, 16), [0, 255, 255, 255], 12) && near(pixel(decoded, 56, 16), [255, 255, 255, 255], 12),
    ).toBe(true);
  });

  it('a grey file keeps a GRAY profile and drops an RGB one', async () => {
    const grey = new Uint8Array(48 * 32).map((_, i) => (i % 48) * 5);
    for (const [space, kept] of [
      ['GRAY', 1],
      ['RGB ', 0],
    ] as const) {
      const image = encodePixelsJpeg(grey, 48, 32, 1, { quality: 95, markers: icc(space, 200, 1) });
      const { res, body } = await compressed({ image, width: 24 });
      expect(frame(body)).toEqual([24, 16, 1]);
      expect(segments(body).filter(isIcc).length).toBe(kept);
      expectSizeHeaders(res, body, [24, 16]);
    }
  });
});

describe('X-Image-Width and X-Image-Height are the real output size', () => {
  const source = photo(300, 200);
  const input = jpegOf(source, 90);

  it.each([
    ['plain', {}, [300, 200]],
    ['width', { width: 150 }, [150, 100]],
    ['height', { height: 51 }, [77, 51]],
    ['both', { width: 100, height: 100 }, [100, 67]],
    ['larger box', { width: 1000 }, [300, 200]],
    ['png', { format: 'png', width: 99 }, [99, 66]],
  ] as [string, Parts, [number, number]][])('%s', async (_, parts, size) => {
    const { res, body } = await compressed({ image: input, ...parts });
    expectSizeHeaders(res, body, size);
  });

  it.each([5, 6, 7, 8])('orientation %i: full size (lossy and lossless) and resized', async (orientation) => {
    const image = jpegOf(storeWithOrientation(upright, orientation), 98, [{ code: 0xe1, data: exif(orientation) }]);
    const cases: [Parts, [number, number]][] = [
      [{}, [96, 64]],
      [{ quality: 100 }, [96, 64]],
      [{ width: 50 }, [50, 33]],
      [{ height: 20 }, [30, 20]],
    ];
    for (const [parts, size] of cases) {
      const { res, body } = await compressed({ image, ...parts });
      expectSizeHeaders(res, body, size);
      expectUpright(decodeAny(body));
    }
  });

  it('grey', async () => {
    const image = encodePixelsJpeg(
      new Uint8Array(90 * 60).map((_, i) => i % 251),
      90,
      60,
      1,
      { quality: 90 },
    );
    for (const [parts, size] of [
      [{}, [90, 60]],
      [{ width: 45 }, [45, 30]],
    ] as [Parts, [number, number]][]) {
      const { res, body } = await compressed({ image, ...parts });
      expectSizeHeaders(res, body, size);
      expect(frame(body)[2]).toBe(1);
    }
  });
});

describe('the lossless rewrite', () => {
  // The fixtures are 4:2:0 and quality 100 encodes 4:4:4, so the lossy encoder cannot reuse the input's
  // steps (see "re-encoding at full size" below) and really is larger.
  it('a file the lossy encoder cannot shrink comes back smaller, not as the input, with the same pixels', async () => {
    const input = jpegOf(photo(160, 96), 30, [{ code: 0xe1, data: exif(1) }]);
    const { res, body } = await compressed({ image: input, quality: 100 });
    expect(body).not.toEqual(input);
    expect(body.length).toBeLessThan(input.length);
    expect(res.headers.get('x-savings-percent')).not.toBe('0.0');
    expect(segments(body).some((s) => s.code === 0xe1)).toBe(false);
    expect(decodeAny(body).data).toEqual(decodeAny(input).data);
    expectSizeHeaders(res, body, [160, 96]);
    // The lossy encode at quality 100 really was larger: that is why the rewrite was chosen.
    const lossy = await compressed({ image: input, quality: 100, width: 159 });
    expect(lossy.body.length).toBeGreaterThan(input.length);
  });

  it('turned by its orientation on the DCT blocks: upright, with the size it says', async () => {
    // 96×64 stored as 64×96, a whole number of 16×16 MCUs: nothing to trim.
    const input = jpegOf(storeWithOrientation(upright, 6), 30, [{ code: 0xe1, data: exif(6) }]);
    const { res, body } = await compressed({ image: input, quality: 100 });
    expect(body.length).toBeLessThan(input.length);
    expectSizeHeaders(res, body, [96, 64]);
    expectUpright(decodeAny(body));
  });

  it('turned where the edges are not whole MCUs: the headers give the size actually written', async () => {
    // 70×45 stored as 45×70 at 4:2:0 (16×16 MCUs). Turning 70 rows into columns leaves the 6 that are
    // not a whole MCU behind (jpegtran -trim): the output is 64×45 today, its left edge cut.
    const input = jpegOf(storeWithOrientation(quadrants(70, 45), 6), 30, [{ code: 0xe1, data: exif(6) }]);
    const { res, body } = await compressed({ image: input, quality: 100 });
    const [width, height] = frame(body);
    expectSizeHeaders(res, body, [width, height]);
    expect(height).toBe(45);
    expect(width).toBeGreaterThan(45);
    expect(width).toBeLessThanOrEqual(70);
    expect(near(pixel(decodeAny(body), width - 10, 10), QUADRANT_COLOURS.tr, 30)).toBe(true);
  });
});

describe('re-encoding at full size', () => {
  // A camera-style file: Annex K's tables at quality 85 (MozJPEG's table 0), coarse at high frequencies.
  const input = encodeJpeg(photo(160, 128), { ...jpegOptions(85), quant_table: 0 });

  it("a step a little finer than the upload's is raised to it: the engine's own table where it is coarser, the upload's elsewhere", async () => {
    const inLuma = quantTables(input).get(0)!;
    const { body } = await compressed({ image: input, quality: 80 });
    expect(body.length).toBeLessThan(input.length);
    const full = quantTables(body).get(0)!;
    // One pixel narrower, the blocks no longer line up: the engine's own table at quality 80.
    const own = quantTables((await compressed({ image: input, quality: 80, width: 159 })).body).get(0)!;
    // Within half of the upload's step here wherever finer (a step under half of it would be kept).
    expect(own.every((step, i) => 2 * step >= inLuma[i]!)).toBe(true);
    expect(full).toEqual(own.map((step, i) => Math.max(step, inLuma[i]!)));
    // Both kinds of entry occur: the upload is finer at low frequencies and coarser at high ones.
    expect(full.some((step, i) => step === own[i] && step > inLuma[i]!)).toBe(true);
    expect(full.some((step, i) => step === inLuma[i] && step > own[i]!)).toBe(true);
  });
});

describe('a 4.2 MP output turned from orientation 6: the engine writes the segments', () => {
  const big = grainy(2100, 2000);
  const profile = icc('RGB ', 3000, 3);
  const image = jpegOf(storeWithOrientation(big, 6), 85, [...MARKERS, ...profile]);

  it.each(['strip', 'keep'])('metadata=%s', async (metadata) => {
    const { res, body } = await compressed({ image, metadata });
    expectSizeHeaders(res, body, [2100, 2000]);
    expectUpright(decodeAny(body));
    const out = segments(body);
    expect(out.filter(isIcc).map((s) => latin1(s.data))).toEqual(profile.map((s) => latin1(s.data)));
    const rest = out.filter((s) => (s.code >= 0xe1 && s.code <= 0xef) || s.code === 0xfe).filter((s) => !isIcc(s));
    if (metadata === 'strip') expect(rest).toEqual([]);
    else expect(rest.map((s) => latin1(s.data))).toEqual([latin1(exif(1)), latin1(xmp(1))]);
  });
});

describe('refusals', () => {
  const good = jpegOf(photo(200, 120), 85);
  let scan = 2;
  for (let sos = false; !sos; scan += 2 + ((good[scan + 2]! << 8) | good[scan + 3]!)) sos = good[scan + 1] === 0xda;
  const middle = (scan + good.length) >> 1;
  const overwritten = (pattern: number[]) =>
    cat(good.subarray(0, middle), pattern, good.subarray(middle + pattern.length));
  const remaining = (res: Response) => Number(res.headers.get('x-ratelimit-remaining'));

  it.each([
    ['truncated in the scan', good.subarray(0, middle)],
    ['truncated in the scan, then an end-of-image marker', cat(good.subarray(0, middle), [0xff, 0xd9])],
    ['ones written over the scan', overwritten(Array(16).fill([0xff, 0x00]).flat())],
    ['a restart marker written over the scan', overwritten([0xff, 0xd3])],
  ])('%s: 422 unprocessable_image, no quota spent', async (_, image) => {
    const before = remaining((await compressed({ image: good })).res);
    const res = await compressCall(pro.key, { image });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await res.text();
    const body = JSON.parse(text);
    expect(Object.keys(body).sort()).toEqual(['error', 'meta']);
    expect(body.error).toEqual({ code: 'unprocessable_image', message: expect.stringMatching(/JPEG/), param: 'image' });
    expect(body.meta).toEqual({ request_id: res.headers.get('x-request-id') });
    expect(text).not.toMatch(/stack|\.(c|ts|js|wasm)\b|\/(work|src|wasm)\/|\bat \w+ \(/i);
    expect(remaining(res)).toBe(before);
    const after = await compressed({ image: good });
    expect(remaining(after.res)).toBe(before - 1);
  });

  it('more than 100 scans (a CPU bomb in a small file) is refused from the header, the engine untouched', async () => {
    const sos = good.findIndex((b, i) => b === 0xff && good[i + 1] === 0xda);
    const scanBytes = good.subarray(sos, good.length - 2); // the SOS segment and its entropy-coded data
    const withScans = (n: number) => cat(good.subarray(0, sos), ...Array(n).fill(scanBytes), [0xff, 0xd9]);
    const engine = () => wasmMemoryReport().codecs.find((c) => c.name === 'sr_jpeg')!;
    const { instantiations } = engine();
    const res = await compressCall(pro.key, { image: withScans(101) });
    expect(res.status).toBe(422);
    const { error } = await res.json<any>();
    expect(error).toMatchObject({ code: 'unprocessable_image', param: 'image' });
    expect(error.message).toContain('more than 100 scans');
    expect(engine().instantiations).toBe(instantiations);
    // 100 scans pass the header (the decoder then judges the file).
    const hundred = await compressCall(pro.key, { image: withScans(100) });
    expect((await hundred.json<any>()).error?.message ?? '').not.toContain('scans');
  });

  it('a header declaring 30000×30000 is refused at once as image_too_large, the engine untouched', async () => {
    const before = remaining((await compressed({ image: good })).res);
    const engine = () => wasmMemoryReport().codecs.find((c) => c.name === 'sr_jpeg')!;
    const { instantiations, memory_bytes } = engine();
    const started = Date.now();
    const res = await compressCall(pro.key, { image: declaringSize(good, 30000, 30000) });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(res.status).toBe(422);
    const { error } = await res.json<any>();
    expect(error).toMatchObject({ code: 'image_too_large', param: 'image', details: { width: 30000, height: 30000 } });
    expect(engine()).toMatchObject({ instantiations, memory_bytes });
    expect(remaining(res)).toBe(before);
  });
});
