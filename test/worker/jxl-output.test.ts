// format=jxl as a caller sees it: each input becomes a JPEG XL codestream of the right size, higher
// quality never gives fewer bytes, the free tier is refused as for AVIF; lossless=true on a JPEG keeps the
// JPEG's data (a container with its jbrd box), and is refused with 422 for anything it cannot keep. No
// JPEG XL decoder runs in the test runner: the codestream's size header is read here.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeKey, type TestKey } from './helpers.ts';
import { JXL_MAX_PIXELS } from '../../src/compress/jxl/settings.ts';
import { DISPLAY_P3_PROFILE } from '../../src/compress/avif-input/display-p3.ts';
import { findGainMap } from '../../src/compress/gain-map/detect.ts';
import { writeMpf } from '../../src/compress/gain-map/mpf.ts';
import arithmeticJpeg from '../fixtures/jpeg/arithmetic.jpg';
import { lastEngineJobStarted, setEngineSliceForTests } from '../../wasm/give-way.ts';
import { encodePixelsJpeg } from '../../wasm/jpeg-engine.ts';
import {
  bodyBytes,
  compressCall,
  concat,
  exifTiff,
  jpegOf,
  photo,
  pngOf,
  quadrants,
  type Parts,
  withJpegOrientation,
} from './image-fixtures.ts';
import { cat, chunk, zlib } from './png-fixtures.ts';
import { lossyWebp } from './webp-fixtures.ts';

let pro: TestKey;
let free: TestKey;

beforeAll(async () => {
  [pro, free] = await Promise.all([makeKey({ image: 'pro' }), makeKey({ image: 'free' })]);
  // The encoder's module takes seconds to load in the test runner: not inside the first test's time.
  await import('../../wasm/jxl-engine.ts');
}, 30_000);

/** The JPEG XL container's signature box (ISO/IEC 18181-2). */
const CONTAINER = [0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a];

/** A bare codestream's width and height, from its SizeHeader (ISO/IEC 18181-1 D.2), bits LSB first. */
function codestreamSize(bytes: Uint8Array): { width: number; height: number } {
  expect([bytes[0], bytes[1]], 'codestream signature').toEqual([0xff, 0x0a]);
  let at = 16;
  const bits = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++, at++) v |= ((bytes[at >> 3]! >> (at & 7)) & 1) << i;
    return v >>> 0;
  };
  const u32 = (): number => 1 + bits([9, 13, 18, 30][bits(2)]!);
  const small = bits(1) === 1;
  const height = small ? (1 + bits(5)) * 8 : u32();
  const ratio = bits(3);
  const RATIOS = [0, 1, 1.2, 4 / 3, 1.5, 16 / 9, 1.25, 2];
  const width = ratio !== 0 ? Math.floor(height * RATIOS[ratio]!) : small ? (1 + bits(5)) * 8 : u32();
  return { width, height };
}

/** A flat grey 8-bit PNG (a few KB, however large). */
async function greyPng(width: number, height: number): Promise<Uint8Array> {
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([8, 0, 0, 0, 0], 8);
  const idat = await zlib(new Uint8Array((width + 1) * height).fill(0));
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return cat(signature, chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', new Uint8Array()));
}

/** The ISO boxes' types at the top level of a container. */
function boxTypes(bytes: Uint8Array): string[] {
  const types: string[] = [];
  for (let at = 0; at + 8 <= bytes.length; ) {
    const view = new DataView(bytes.buffer, bytes.byteOffset + at);
    let size = view.getUint32(0);
    if (size === 1) size = Number(view.getBigUint64(8));
    if (size === 0) size = bytes.length - at;
    types.push(String.fromCharCode(...bytes.subarray(at + 4, at + 8)));
    at += size;
  }
  return types;
}

async function jxlOf(parts: Parts): Promise<{ res: Response; bytes: Uint8Array }> {
  const res = await compressCall(pro.key, { format: 'jxl', ...parts });
  const bytes = await bodyBytes(res);
  expect(res.status, new TextDecoder().decode(bytes.subarray(0, 300))).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/jxl');
  return { res, bytes };
}

describe('format=jxl', () => {
  it.each([
    ['jpeg', 'in.jpg', jpegOf(quadrants(320, 240), 90)],
    ['png', 'in.png', pngOf(quadrants(320, 240))],
    ['webp', 'in.webp', lossyWebp(quadrants(320, 240))],
  ] as const)(
    'a %s becomes a JPEG XL codestream of the same size',
    async (_, filename, image) => {
      const { res, bytes } = await jxlOf({ image, filename });
      expect(res.headers.get('content-disposition')).toBe('inline; filename="in.jxl"');
      expect(codestreamSize(bytes)).toEqual({ width: 320, height: 240 });
      // The first case instantiates the encoder's module, which takes seconds on a busy machine.
    },
    20_000,
  );

  it('resizes as asked, and keeps a PNG with alpha', async () => {
    const { res, bytes } = await jxlOf({ image: pngOf(photo(300, 200, (x) => x % 256)), width: '150' });
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['150', '100']);
    expect(codestreamSize(bytes)).toEqual({ width: 150, height: 100 });
  });

  it("answers libjxl's distance as X-Encoder-Quality; a higher quality never gives fewer bytes", async () => {
    const image = jpegOf(photo(256, 192), 95);
    const sizes: number[] = [];
    const distances: number[] = [];
    for (const quality of ['40', '60', '80', '90']) {
      const { res, bytes } = await jxlOf({ image, quality });
      expect(res.headers.get('x-quality')).toBe(quality);
      distances.push(Number(res.headers.get('x-encoder-quality')));
      sizes.push(bytes.length);
    }
    // q60, q80 and q90's distances, as measured on the 31 camera photos at width 2048 (docs/experiments/jxl.md).
    expect(distances.slice(1)).toEqual([4.15, 2.53, 1.27]);
    for (let i = 1; i < sizes.length; i++) {
      expect(sizes[i]!, `q${[40, 60, 80, 90][i]}`).toBeGreaterThanOrEqual(sizes[i - 1]!);
      expect(distances[i]!).toBeLessThan(distances[i - 1]!);
    }
  });

  it('refuses with 422 before decoding an output past JXL_MAX_PIXELS, however roomy the budget, saying the width that fits', async () => {
    // Only the header is read before the refusal; the file is a flat grey PNG, a few KB.
    const image = await greyPng(3000, 2000);
    const res = await compressCall(pro.key, { format: 'jxl', image }, { env: { MEMORY_BUDGET_MB: '4000' } });
    expect(res.status).toBe(422);
    const { error } = (await res.json()) as { error: { code: string; message: string; details: object } };
    const maxWidth = Math.floor(Math.sqrt(JXL_MAX_PIXELS * 1.5));
    expect(error.code).toBe('image_too_large');
    expect(error.message).toMatch(new RegExp(`3000×2000 .*width=${maxWidth} or less`));
    expect(error.details).toMatchObject({ width: 3000, height: 2000, max_pixels: JXL_MAX_PIXELS, max_width: maxWidth });
  });

  it('free keys get the same 403 plan_upgrade_required as for AVIF', async () => {
    const res = await compressCall(free.key, { image: jpegOf(quadrants(32, 32), 90), format: 'jxl' });
    expect(res.status).toBe(403);
    const { error } = (await res.json()) as { error: { code: string; message: string; param: string } };
    expect(error).toMatchObject({
      code: 'plan_upgrade_required',
      param: 'format',
      message: 'JPEG XL output needs the pro tier; the free tier writes JPEG and PNG',
    });
  });
});

/** The top-level boxes of a container, with their contents. */
function boxes(bytes: Uint8Array): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (let at = 0; at + 8 <= bytes.length; ) {
    const size = new DataView(bytes.buffer, bytes.byteOffset + at).getUint32(0) || bytes.length - at;
    out.set(String.fromCharCode(...bytes.subarray(at + 4, at + 8)), bytes.subarray(at + 8, at + size));
    at += size;
  }
  return out;
}

/** The JPEG with an APP1 XMP segment holding `packet` inserted after SOI. */
function withXmp(jpeg: Uint8Array, packet: string): Uint8Array {
  const payload = new TextEncoder().encode(`http://ns.adobe.com/xap/1.0/\0${packet}`);
  const length = payload.length + 2;
  return cat(jpeg.subarray(0, 2), new Uint8Array([0xff, 0xe1, length >> 8, length & 0xff]), payload, jpeg.subarray(2));
}

describe('format=jxl with metadata=keep', () => {
  it("writes the EXIF and XMP (their orientation reset: the pixels are upright) in a container's boxes", async () => {
    const xmp = (o: number) =>
      `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:Description tiff:Orientation="${o}"/></x:xmpmeta>`;
    const image = withXmp(withJpegOrientation(jpegOf(photo(64, 48), 90), 6), xmp(6));
    const { bytes } = await jxlOf({ image, metadata: 'keep' });
    expect([...bytes.subarray(0, CONTAINER.length)]).toEqual(CONTAINER);
    const found = boxes(bytes);
    // The Exif box starts with the TIFF header's offset (ISO/IEC 18181-2), 0 here.
    expect([...(found.get('Exif') ?? [])]).toEqual([0, 0, 0, 0, ...exifTiff(1)]);
    expect(new TextDecoder().decode(found.get('xml ') ?? new Uint8Array())).toBe(xmp(1));
  });

  it('writes no box without metadata=keep: a bare codestream', async () => {
    const image = withJpegOrientation(jpegOf(photo(64, 48), 90), 6);
    const { bytes } = await jxlOf({ image });
    expect(codestreamSize(bytes)).toEqual({ width: 48, height: 64 });
  });
});

describe('format=jxl&lossless=true', () => {
  it("keeps a JPEG's own data: a container with the jbrd box that rebuilds it, X-Quality lossless", async () => {
    const jpeg = jpegOf(photo(256, 192), 90);
    const { res, bytes } = await jxlOf({ image: jpeg, lossless: 'true' });
    expect([...bytes.subarray(0, 12)]).toEqual(CONTAINER);
    const types = boxTypes(bytes);
    expect(types).toContain('jbrd');
    expect(types.some((t) => t === 'jxlc' || t === 'jxlp')).toBe(true);
    expect(res.headers.get('x-quality')).toBe('lossless');
    expect(bytes.length).toBeLessThan(jpeg.length);
  });

  it("is refused with 422 and libjxl's reason for a JPEG libjxl cannot rebuild (CMYK)", async () => {
    const cmyk = new Uint8Array(64 * 32 * 4).map((_, i) => (i % 4 === 0 ? 0 : 255));
    const image = encodePixelsJpeg(cmyk, 64, 32, 4, { quality: 90 });
    const res = await compressCall(pro.key, { format: 'jxl', lossless: 'true', image });
    expect(res.status).toBe(422);
    const { error } = (await res.json()) as { error: { code: string; message: string; param: string } };
    expect(error).toMatchObject({ code: 'unprocessable_image', param: 'lossless' });
    expect(error.message).toMatch(/^this JPEG cannot be converted losslessly to JPEG XL: .+; leave out lossless=true/);
    expect(error.message).not.toMatch(/failed \(libjxl error/);
  });

  it('is refused with 422 naming the reason for an arithmetic-coded JPEG (libjxl transcodes Huffman-coded ones only)', async () => {
    // 48×32, made by Debian's `jpegtran -arithmetic` (test/fixtures/jpeg/README.md).
    const image = new Uint8Array(arithmeticJpeg);
    const res = await compressCall(pro.key, { format: 'jxl', lossless: 'true', image });
    expect(res.status).toBe(422);
    const { error } = (await res.json()) as { error: { code: string; message: string; param: string } };
    expect(error).toMatchObject({ code: 'unprocessable_image', param: 'lossless' });
    expect(error.message).toMatch(/^this JPEG cannot be converted losslessly to JPEG XL: .*arithmetic/);
    expect(error.message).toMatch(/leave out lossless=true for a lossy JPEG XL/);
  });

  it('past the memory budget, is refused with 422 saying the transcode holds the whole picture and what fits', async () => {
    // 320×240 needs about 21 MB as a lossless transcode: more than a 20 MB budget; a lossy JXL fits narrower.
    const env = { MEMORY_BUDGET_MB: '20' };
    const parts = { format: 'jxl', lossless: 'true', image: jpegOf(photo(320, 240), 90) };
    const res = await compressCall(pro.key, parts, { env });
    expect(res.status).toBe(422);
    const { error } = (await res.json()) as { error: { code: string; message: string; param: string; details: any } };
    expect(error).toMatchObject({ code: 'image_too_large', param: 'lossless' });
    expect(error.message).toMatch(/lossless=true .*whole picture/);
    expect(error.message).toMatch(/at most [\d.]+ megapixels/);
    const { max_width: maxWidth, max_pixels: maxPixels } = error.details;
    expect(error.details).toMatchObject({ width: 320, height: 240, budget_bytes: 20 * 1024 * 1024 });
    expect(maxPixels).toBeGreaterThan(0);
    expect(maxPixels).toBeLessThan(320 * 240);
    expect(error.message).toContain(`leave out lossless=true for a lossy JPEG XL with width=${maxWidth} or less`);
    const fits = await compressCall(pro.key, { ...parts, lossless: 'false', width: String(maxWidth) }, { env });
    expect(fits.status).toBe(200);
    expect(fits.headers.get('x-image-width')).toBe(String(maxWidth));
  });

  it('is refused with 422 past JXL_MAX_PIXELS, as lossy output is: the JPEG keeps its size', async () => {
    // Grey and flat: quick to make; a budget roomy enough that the memory plan does not refuse first.
    const image = encodePixelsJpeg(new Uint8Array(2100 * 2100), 2100, 2100, 1, { quality: 10 });
    const res = await compressCall(
      pro.key,
      { format: 'jxl', lossless: 'true', image },
      { env: { MEMORY_BUDGET_MB: '4000' } },
    );
    expect(res.status).toBe(422);
    const { error } = (await res.json()) as { error: { code: string; message: string; param: string } };
    expect(error).toMatchObject({ code: 'image_too_large', param: 'lossless' });
    expect(error.message).toMatch(/this JPEG is 2100×2100 .*leave out lossless=true/);
  }, 20_000);

  it.each([
    ['a PNG', { image: pngOf(quadrants(64, 48)) }, /re-codes a JPEG's own data; this is a PNG/],
    ['a resize', { image: jpegOf(quadrants(64, 48)), width: '32' }, /cannot be resized or transformed/],
    ['a rotation', { image: jpegOf(quadrants(64, 48)), rotate: '90' }, /cannot be resized or transformed/],
  ] as const)('is refused with 422 for %s', async (_, parts, message) => {
    const res = await compressCall(pro.key, { format: 'jxl', lossless: 'true', ...parts });
    expect(res.status).toBe(422);
    const { error } = (await res.json()) as { error: { code: string; message: string; param: string } };
    expect(error).toMatchObject({ code: 'unprocessable_image', param: 'lossless' });
    expect(error.message).toMatch(message);
  });
});

const text = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const segment = (code: number, payload: Uint8Array): Uint8Array =>
  concat(Uint8Array.of(0xff, code, (payload.length + 2) >> 8, (payload.length + 2) & 0xff), payload);
const includes = (bytes: Uint8Array, needle: string): boolean =>
  Array.from(bytes, (b) => String.fromCharCode(b))
    .join('')
    .includes(needle);

/** A camera's EXIF (little-endian TIFF): Make, Orientation and a GPS IFD with a latitude reference. */
function cameraExif(orientation: number): Uint8Array {
  const make = 'Shrinkray Cam\0';
  const tiff = new Uint8Array(8 + 42 + make.length + 18);
  const v = new DataView(tiff.buffer);
  tiff.set(text('II*\0'));
  v.setUint32(4, 8, true);
  v.setUint16(8, 3, true);
  const entry = (i: number, tag: number, type: number, count: number, value: number) => {
    v.setUint16(10 + i * 12, tag, true);
    v.setUint16(12 + i * 12, type, true);
    v.setUint32(14 + i * 12, count, true);
    v.setUint32(18 + i * 12, value, true);
  };
  entry(0, 0x010f, 2, make.length, 50);
  entry(1, 0x0112, 3, 1, orientation);
  entry(2, 0x8825, 4, 1, 50 + make.length);
  tiff.set(text(make), 50);
  const gps = 50 + make.length;
  v.setUint16(gps, 1, true);
  v.setUint16(gps + 2, 0x0001, true);
  v.setUint16(gps + 4, 2, true);
  v.setUint32(gps + 6, 2, true);
  tiff.set(text('N\0'), gps + 10);
  return concat(text('Exif\0\0'), tiff);
}

const CAMERA_XMP =
  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:Description xmp:CreatorTool="Shrinkray Editor"/></x:xmpmeta>';

/** `jpeg` with a camera's EXIF, an XMP packet and a comment after its SOI, as a phone or an editor writes them. */
const withCameraMetadata = (jpeg: Uint8Array, orientation = 1): Uint8Array =>
  concat(
    jpeg.subarray(0, 2),
    segment(0xe1, cameraExif(orientation)),
    segment(0xe1, text(`http://ns.adobe.com/xap/1.0/\0${CAMERA_XMP}`)),
    segment(0xfe, text('Shot at 12 Secret Street')),
    jpeg.subarray(2),
  );

/** The container's box types, a Brotli-compressed box ('brob') by the type it holds. */
function boxKinds(bytes: Uint8Array): string[] {
  return [...boxes(bytes)].map(([type, data]) =>
    type === 'brob' ? String.fromCharCode(...data.subarray(0, 4)) : type,
  );
}

/** The JPEG djxl (Debian's libjxl-tools) rebuilds from a lossless JPEG XL (test/fixtures/djxl.ts). */
async function djxl(jxl: Uint8Array): Promise<Uint8Array> {
  const res = await fetch(inject('djxl'), { method: 'POST', body: jxl });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(new TextDecoder().decode(bytes));
  return bytes;
}

/** A 128×96 picture with an Ultra HDR gain map (a 32×24 grey JPEG with its hdrgm XMP) and a camera's metadata. */
function gainMapJpeg(): { file: Uint8Array; map: Uint8Array } {
  const mapXmp =
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
    '<rdf:Description xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" hdrgm:GainMapMax="2.5" ' +
    'hdrgm:HDRCapacityMax="2.5"/></rdf:RDF></x:xmpmeta>';
  const grey = new Uint8Array(32 * 24).map((_, i) => (i < 384 ? 200 : 30) + (i % 32) + ((i * 7919) % 13));
  const map = encodePixelsJpeg(grey, 32, 24, 1, {
    quality: 95,
    sampling: [1, 1],
    markers: [{ code: 0xe1, data: text(`http://ns.adobe.com/xap/1.0/\0${mapXmp}`) }],
  });
  const primaryXmp =
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
    '<rdf:Description xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:CreatorTool="Shrinkray Editor"/>' +
    '<rdf:Description xmlns:Container="http://ns.google.com/photos/1.0/container/" ' +
    'xmlns:Item="http://ns.google.com/photos/1.0/container/item/" xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" ' +
    'hdrgm:Version="1.0"><Container:Directory><rdf:Seq>' +
    '<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="Primary" Item:Mime="image/jpeg"/></rdf:li>' +
    `<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="GainMap" Item:Mime="image/jpeg" Item:Length="${map.length}"/></rdf:li>` +
    '</rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>';
  const picture = jpegOf(photo(128, 96), 90);
  const before = concat(
    picture.subarray(0, 2),
    segment(0xe1, cameraExif(1)),
    segment(0xe1, text(`http://ns.adobe.com/xap/1.0/\0${primaryXmp}`)),
  );
  const mpfSegment = (primarySize: number, tiffStart: number) =>
    segment(0xe2, writeMpf(primarySize, map.length, primarySize - tiffStart));
  const primarySize = before.length + mpfSegment(0, 0).length + picture.length - 2;
  const file = concat(before, mpfSegment(primarySize, before.length + 8), picture.subarray(2), map);
  return { file, map };
}

// Skipped where Debian's djxl is missing (test/fixtures/djxl.ts; never in CI).
describe.skipIf(!inject('djxl'))('format=jxl&lossless=true, the JPEG djxl rebuilds', () => {
  it('with metadata=keep is the upload, byte for byte (EXIF, XMP and comment)', async () => {
    const image = withCameraMetadata(jpegOf(photo(96, 64), 90), 6);
    const { bytes } = await jxlOf({ image, lossless: 'true', metadata: 'keep' });
    expect(await djxl(bytes)).toEqual(image);
  });

  it('with metadata=strip (the default) is the JPEG without its EXIF, XMP and comment: nothing else differs (its ICC profile stays)', async () => {
    const plain = jpegOf(photo(96, 64), 90);
    const icc = segment(0xe2, concat(text('ICC_PROFILE\0'), Uint8Array.of(1, 1), DISPLAY_P3_PROFILE));
    const jpeg = concat(plain.subarray(0, 2), icc, plain.subarray(2));
    const { bytes } = await jxlOf({ image: withCameraMetadata(jpeg), lossless: 'true' });
    // Neither the JXL's boxes (which a JXL viewer reads) nor the rebuilt JPEG hold the camera, place or comment.
    expect(boxKinds(bytes)).not.toContain('Exif');
    expect(boxKinds(bytes)).not.toContain('xml ');
    const rebuilt = await djxl(bytes);
    expect(includes(rebuilt, 'Shrinkray')).toBe(false);
    expect(includes(rebuilt, 'Secret Street')).toBe(false);
    expect(rebuilt).toEqual(jpeg);
  });

  it('with metadata=strip keeps the orientation: an EXIF with the Orientation tag alone', async () => {
    const jpeg = jpegOf(photo(96, 64), 90);
    const { bytes } = await jxlOf({ image: withCameraMetadata(jpeg, 6), lossless: 'true' });
    const rebuilt = await djxl(bytes);
    expect(rebuilt).toEqual(
      concat(jpeg.subarray(0, 2), segment(0xe1, concat(text('Exif\0\0'), exifTiff(6))), jpeg.subarray(2)),
    );
  });

  it('with metadata=strip keeps one orientation EXIF from a JPEG with two EXIF segments (an editor copied it)', async () => {
    const jpeg = jpegOf(photo(96, 64), 90);
    const twice = withCameraMetadata(concat(jpeg.subarray(0, 2), segment(0xe1, cameraExif(6)), jpeg.subarray(2)), 6);
    const { bytes } = await jxlOf({ image: twice, lossless: 'true' });
    expect(await djxl(bytes)).toEqual(
      concat(jpeg.subarray(0, 2), segment(0xe1, concat(text('Exif\0\0'), exifTiff(6))), jpeg.subarray(2)),
    );
  });

  it('with metadata=strip keeps a gain map (image data) with its MPF index and directory, the metadata stripped', async () => {
    const { file, map } = gainMapJpeg();
    const { bytes } = await jxlOf({ image: file, lossless: 'true' });
    const rebuilt = await djxl(bytes);
    expect(includes(rebuilt, 'Shrinkray')).toBe(false);
    const found = findGainMap(rebuilt, { width: 128, height: 96 });
    expect(found?.problem).toBeUndefined();
    expect(found?.flavours).toEqual(['ultrahdr']);
    expect(found?.map?.bytes).toEqual(map);
    expect(rebuilt.subarray(rebuilt.length - map.length)).toEqual(map);
  });
});

// libjxl's encode was one call: a timer set while it ran waited for all of it (issue 51). It now gives way
// inside libjxl's per-tile and per-group loops (wasm/patches/jxl/). The slice is made small, so that a
// small picture's encode (a few hundred milliseconds) yields many times, as isolate-stall.test.ts does.
describe('format=jxl gives way to other requests of its isolate', () => {
  let previous: { ms: number; pixels: number };
  beforeAll(async () => {
    previous = setEngineSliceForTests({ ms: 5, pixels: 50_000 });
    // The module's functions compiled (lazily, on first call): not what the test measures.
    const warm = await compressCall(pro.key, { image: jpegOf(photo(64, 64), 90), format: 'jxl' });
    expect(warm.status).toBe(200);
    await warm.arrayBuffer();
  }, 30_000);
  afterAll(() => {
    setEngineSliceForTests(previous);
  });

  it('a 0.4 MP photo → JPEG XL: a timer set meanwhile waits a small part of the compression', async () => {
    let done = false;
    let longestWait = 0;
    let fired = 0;
    const ticking = (async () => {
      while (!done) {
        const set = performance.now();
        await new Promise((resolve) => setTimeout(resolve, 0));
        longestWait = Math.max(longestWait, performance.now() - Math.max(set, lastEngineJobStarted()));
        fired++;
      }
    })();
    const t0 = performance.now();
    const { res } = await jxlOf({ image: jpegOf(photo(768, 512), 90), quality: '80' });
    const compressMs = performance.now() - t0;
    done = true;
    await ticking;
    expect(res.headers.get('x-quality')).toBe('80');
    // Held for the whole encode (one call), the longest wait is most of the compression's time.
    expect(longestWait, JSON.stringify({ compressMs, fired, longestWait })).toBeLessThan(compressMs / 4);
  }, 30_000);
});
