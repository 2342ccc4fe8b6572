// HDR gain maps: an Ultra HDR photo (MPF index, hdrgm XMP) or an ISO 21496-1 one keeps its map in JPEG
// output (with MPF offsets a viewer can follow) and in AVIF output (a tmap item), put through the
// picture's orientation, resize and transformation; PNG, WebP and JPEG XL output say the map was
// dropped, on POST /compress and on signed image URLs (f=auto too). The inputs are built here, byte by
// byte, with a little-endian MPF (the service writes big-endian), so the reader and the writer are not
// checked against each other.
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeAvif } from '../avif-decode.ts';
import { encodePixelsJpeg } from '../../../wasm/jpeg-engine.ts';
import { planGainMap } from '../../../src/compress/gain-map/plan.ts';
import { readHeader } from '../../../src/compress/header.ts';
import { plan } from '../../../src/compress/memory-plan.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { ORIGIN, getImage, signed, signingAccount } from '../img-helpers.ts';
import { bodyBytes, compressCall, concat, decodeAny, exifTiff, pixel } from '../image-fixtures.ts';
import { avifItems as readAvifItems } from '../../bench/lib/avif-gain-map.ts';

let key: TestKey;
beforeAll(async () => {
  key = await makeKey({ image: 'pro' });
});

const text = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const latin1 = (b: Uint8Array): string => String.fromCharCode(...b);
const segment = (code: number, payload: Uint8Array): Uint8Array =>
  concat(Uint8Array.of(0xff, code, (payload.length + 2) >> 8, (payload.length + 2) & 0xff), payload);

const XMP_NS = 'http://ns.adobe.com/xap/1.0/\0';
const ISO_URN = 'urn:iso:std:iso:ts:21496:-1\0';
const MAP_XMP =
  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
  '<rdf:Description xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" ' +
  'hdrgm:GainMapMin="-0.25" hdrgm:GainMapMax="2.5" hdrgm:Gamma="1" hdrgm:OffsetSDR="0.015625" ' +
  'hdrgm:OffsetHDR="0.015625" hdrgm:HDRCapacityMin="0" hdrgm:HDRCapacityMax="2.5" hdrgm:BaseRenditionIsHDR="False"/>' +
  '</rdf:RDF></x:xmpmeta>';
const primaryXmp = (mapLength: number): string =>
  '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
  '<rdf:Description xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:CreatorTool="Camera 1.0"/>' +
  '<rdf:Description xmlns:Container="http://ns.google.com/photos/1.0/container/" ' +
  'xmlns:Item="http://ns.google.com/photos/1.0/container/item/" xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" ' +
  'hdrgm:Version="1.0"><Container:Directory><rdf:Seq>' +
  '<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="Primary" Item:Mime="image/jpeg"/></rdf:li>' +
  `<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="GainMap" Item:Mime="image/jpeg" Item:Length="${mapLength}"/></rdf:li>` +
  '</rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>';
/**
 * An ISO 21496-1 primary block (versions only) and a map's block cut short (versions, flags, then 11 bytes
 * of the 56 one channel needs): JPEG output copies it as bytes, AVIF output cannot read it.
 */
const ISO_PRIMARY = concat(text(ISO_URN), Uint8Array.of(0, 0, 0, 0));
const ISO_MAP = concat(text(ISO_URN), Uint8Array.of(0, 0, 0, 0, 0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));

type Fraction = [number, number];
interface IsoChannel {
  min: Fraction;
  max: Fraction;
  gamma: Fraction;
  baseOffset: Fraction;
  alternateOffset: Fraction;
}
interface IsoMetadata {
  /** log2 headrooms of the base and the alternate rendition. */
  headrooms: [Fraction, Fraction];
  /** One set for all channels, or three (is_multichannel). */
  channels: IsoChannel[];
  useBaseColourSpace?: boolean;
  /** Written once, with numerators only (every fraction above must have it as its denominator). */
  commonDenominator?: number;
}
const ISO_CHANNEL_FIELDS = ['min', 'max', 'gamma', 'baseOffset', 'alternateOffset'] as const;

/** A map's ISO 21496-1 APP2 payload, laid out as libultrahdr writes one in a JPEG (big-endian). */
function isoMapBlock({ headrooms, channels, useBaseColourSpace = true, commonDenominator }: IsoMetadata): Uint8Array {
  const fractions = [...headrooms, ...channels.flatMap((c) => ISO_CHANNEL_FIELDS.map((f) => c[f]))];
  const common = commonDenominator !== undefined;
  const bytes = new Uint8Array(5 + (common ? 4 + fractions.length * 4 : fractions.length * 8));
  const v = new DataView(bytes.buffer);
  bytes[4] = (channels.length === 3 ? 0x80 : 0) | (useBaseColourSpace ? 0x40 : 0) | (common ? 0x08 : 0);
  let at = 5;
  const put = (n: number) => {
    if (n < 0) v.setInt32(at, n);
    else v.setUint32(at, n);
    at += 4;
  };
  if (common) put(commonDenominator);
  for (const [n, d] of fractions) {
    put(n);
    if (common) expect(d, 'a fraction over the common denominator').toBe(commonDenominator);
    else put(d);
  }
  return concat(text(ISO_URN), bytes);
}

/** The hdrgm XMP's numbers as an ISO 21496-1 block would have them: headrooms 0 → 2.5, gains −0.25 → 2.5. */
const ISO_LIKE_HDRGM: IsoMetadata = {
  headrooms: [
    [0, 1],
    [5, 2],
  ],
  channels: [{ min: [-1, 4], max: [5, 2], gamma: [1, 1], baseOffset: [1, 64], alternateOffset: [1, 64] }],
};

/** A little-endian MPF APP2 payload: two entries, the map's at `mapOffset` from the TIFF header. */
function mpfLittle(primarySize: number, mapSize: number, mapOffset: number): Uint8Array {
  const b = new Uint8Array(4 + 8 + 2 + 3 * 12 + 4 + 32);
  const v = new DataView(b.buffer);
  b.set(text('MPF\0'));
  b.set(text('II*\0'), 4);
  v.setUint32(8, 8, true);
  v.setUint16(12, 3, true);
  const entry = (i: number, tag: number, type: number, count: number, value: number) => {
    const at = 14 + i * 12;
    v.setUint16(at, tag, true);
    v.setUint16(at + 2, type, true);
    v.setUint32(at + 4, count, true);
    v.setUint32(at + 8, value, true);
  };
  entry(0, 0xb000, 7, 4, 0x30303130); // "0100"
  entry(1, 0xb001, 4, 1, 2);
  entry(2, 0xb002, 7, 32, 8 + 2 + 36 + 4);
  const e = 4 + 8 + 2 + 36 + 4;
  v.setUint32(e, 0x030000, true);
  v.setUint32(e + 4, primarySize, true);
  v.setUint32(e + 8, 0, true);
  v.setUint32(e + 16, 0, true);
  v.setUint32(e + 20, mapSize, true);
  v.setUint32(e + 24, mapOffset, true);
  return b;
}

/**
 * A map's value at (x, y) of a `w` × `h` map, rising 120 levels left to right and 80 top to bottom: linear,
 * so a resampled map's pixel is this at the point its centre comes from, whatever the filter's footprint.
 */
const GRADIENT = (x: number, y: number, w: number, h: number): number => 16 + (120 * x) / (w - 1) + (80 * y) / (h - 1);

interface Build {
  flavour?: 'ultrahdr' | 'iso';
  /** The map's ISO 21496-1 block (ISO_MAP, cut short, for the 'iso' flavour unless given; none for 'ultrahdr'). */
  mapIso?: Uint8Array;
  /** The map's XMP for the 'ultrahdr' flavour (MAP_XMP unless given). */
  mapXmp?: string;
  /** A map of noise (many bytes) instead of a textured one. */
  noisyMap?: boolean;
  /** The smooth map of `GRADIENT` instead of the bright and dark halves. */
  gradientMap?: boolean;
  /** A white frame this many pixels wide round the picture (what `trim=border` takes off). */
  border?: number;
  /** The map's size (64×48 unless said). */
  map?: { width: number; height: number };
  /** The grey map saved with three components (R = G = B), as some writers save greyscale. */
  rgbMap?: boolean;
  /** The picture's size (256×192 unless said). */
  picture?: { width: number; height: number };
  orientation?: number;
  /** Added to the map's MPF offset (a corrupt index). */
  offsetError?: number;
}

/**
 * A 256×192 picture and a 64×48 grey map whose stored top half is bright, joined as the camera does:
 * primary (EXIF, XMP or ISO block, MPF) then the map. Returns the file and the map's bytes.
 */
function gainMapJpeg({
  flavour = 'ultrahdr',
  orientation,
  offsetError = 0,
  map: size,
  noisyMap,
  gradientMap,
  border = 0,
  rgbMap,
  mapIso,
  mapXmp = MAP_XMP,
  picture: pictureSize = { width: 256, height: 192 },
}: Build = {}): Uint8Array {
  const { width: mw, height: mh } = size ?? { width: 64, height: 48 };
  const { width: pw, height: ph } = pictureSize;
  const rgb = new Uint8Array(pw * ph * 3).map((_, i) => {
    const [x, y] = [Math.floor(i / 3) % pw, Math.floor(i / (pw * 3))];
    const inside = x >= border && y >= border && x < pw - border && y < ph - border;
    return inside ? ((i % 3) * 60 + y) & 255 : 255;
  });
  // Textured like a real map: the engine refuses a flat grey JPEG this small ("image data ends before its
  // last row"), a fault of its own reported to the engine's owner; the map is then dropped, not failed.
  const grey = new Uint8Array(mw * mh).map((_, i) =>
    noisyMap
      ? (i * 7919 + ((i * i) >> 3)) & 255
      : gradientMap
        ? GRADIENT(i % mw, Math.floor(i / mw), mw, mh)
        : (i < (mw * mh) / 2 ? 200 : 30) + (i % mw) / 4 + ((i * 7919) % 13),
  );
  const iso = mapIso ?? (flavour === 'iso' ? ISO_MAP : undefined);
  const mapMarkers = [
    ...(flavour === 'ultrahdr' ? [{ code: 0xe1, data: concat(text(XMP_NS), text(mapXmp)) }] : []),
    ...(iso ? [{ code: 0xe2, data: iso }] : []),
  ];
  const map = rgbMap
    ? encodePixelsJpeg(
        Uint8Array.from({ length: mw * mh * 3 }, (_, i) => grey[Math.floor(i / 3)]!),
        mw,
        mh,
        3,
        { quality: 95, markers: mapMarkers },
      )
    : encodePixelsJpeg(grey, mw, mh, 1, { quality: 95, sampling: [1, 1], markers: mapMarkers });
  const picture = encodePixelsJpeg(rgb, pw, ph, 3, { quality: 90 });
  const head = [
    ...(orientation ? [segment(0xe1, concat(text('Exif\0\0'), exifTiff(orientation)))] : []),
    flavour === 'ultrahdr'
      ? segment(0xe1, concat(text(XMP_NS), text(primaryXmp(map.length))))
      : segment(0xe2, ISO_PRIMARY),
  ];
  const before = concat(picture.subarray(0, 2), ...head);
  const mpfLength = 4 + mpfLittle(0, 0, 0).length;
  const primarySize = before.length + mpfLength + picture.length - 2;
  const tiffStart = before.length + 4 + 4;
  const mpf = segment(0xe2, mpfLittle(primarySize, map.length, primarySize - tiffStart + offsetError));
  return concat(before, mpf, picture.subarray(2), map);
}

/** The head segments of a JPEG (up to its first scan), with where each payload starts. */
function segments(bytes: Uint8Array): { code: number; at: number; data: Uint8Array }[] {
  const out = [];
  for (let at = 2; at + 4 <= bytes.length && bytes[at] === 0xff && bytes[at + 1] !== 0xda; ) {
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
    out.push({ code: bytes[at + 1]!, at: at + 4, data: bytes.subarray(at + 4, at + 2 + length) });
    at += 2 + length;
  }
  return out;
}

/** The images an output's MPF index names, read as a viewer would: offsets from the MPF TIFF header. */
function mpfImages(bytes: Uint8Array): { offset: number; size: number }[] {
  const mpf = segments(bytes).find((s) => s.code === 0xe2 && latin1(s.data.subarray(0, 4)) === 'MPF\0');
  expect(mpf, 'an MPF APP2 segment').toBeDefined();
  const tiff = mpf!.data.subarray(4);
  const v = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const little = latin1(tiff.subarray(0, 2)) === 'II';
  const ifd = v.getUint32(4, little);
  const count = v.getUint16(ifd, little);
  let entries = -1;
  let images = 0;
  for (let i = 0; i < count; i++) {
    const at = ifd + 2 + i * 12;
    if (v.getUint16(at, little) === 0xb001) images = v.getUint32(at + 8, little);
    if (v.getUint16(at, little) === 0xb002) entries = v.getUint32(at + 8, little);
  }
  expect(images).toBe(2);
  const base = mpf!.at + 4;
  return [0, 1].map((i) => {
    const size = v.getUint32(entries + i * 16 + 4, little);
    const offset = v.getUint32(entries + i * 16 + 8, little);
    return { size, offset: i === 0 ? 0 : base + offset };
  });
}

/** The output's gain map, found through its MPF index, checked to be a whole JPEG. */
function outputMap(bytes: Uint8Array): Uint8Array {
  const [primary, map] = mpfImages(bytes);
  expect(primary!.size, 'primary size').toBe(map!.offset);
  expect(map!.offset + map!.size).toBe(bytes.length);
  expect([bytes[map!.offset], bytes[map!.offset + 1]]).toEqual([0xff, 0xd8]);
  expect([bytes[primary!.size - 2], bytes[primary!.size - 1]], 'primary ends with EOI').toEqual([0xff, 0xd9]);
  return bytes.subarray(map!.offset, map!.offset + map!.size);
}

const xmpOf = (jpeg: Uint8Array): string =>
  segments(jpeg)
    .filter((s) => s.code === 0xe1 && latin1(s.data.subarray(0, XMP_NS.length)) === XMP_NS)
    .map((s) => latin1(s.data))
    .join('');

/**
 * Expects the output's map to be the input's `GRADIENT` map (64 × 48 beside the 256 × 192 picture) over
 * the part of the picture that was kept (X-Crop-Box, or all of it), stretched to `size` as the picture is
 * to its output size: each of its pixels is the gradient at the point of the input map its centre comes
 * from, within what the map's JPEG loses.
 */
function expectGradientMapThrough(res: Response, bytes: Uint8Array, size: [number, number], what: string) {
  expect(res.headers.get('x-gain-map'), what).toBe('kept');
  const [x, y, w, h] = (res.headers.get('x-crop-box') ?? '0,0,256,192').split(',').map(Number) as [
    number,
    number,
    number,
    number,
  ];
  const map = decodeAny(outputMap(bytes));
  expect([map.width, map.height], what).toEqual(size);
  // A point of the picture (in source pixels, from its top-left corner) is a quarter of it in the map.
  const inMap = (p: number, last: number) => Math.min(last, Math.max(0, p / 4 - 0.5));
  let worst = { difference: 0, at: '' };
  for (let oy = 0; oy < map.height; oy++) {
    for (let ox = 0; ox < map.width; ox++) {
      const expected = GRADIENT(
        inMap(x + ((ox + 0.5) * w) / map.width, 63),
        inMap(y + ((oy + 0.5) * h) / map.height, 47),
        64,
        48,
      );
      const difference = Math.abs(pixel(map, ox, oy)[0]! - expected);
      if (difference > worst.difference)
        worst = { difference, at: `${ox},${oy}: ${pixel(map, ox, oy)[0]} for ${expected.toFixed(1)}` };
    }
  }
  expect(worst.difference, `${what}, worst at ${worst.at}`).toBeLessThan(4);
}

async function compressed(parts: Record<string, string | number | Uint8Array>) {
  const res = await compressCall(key.key, { filename: 'hdr.jpg', ...parts });
  const bytes = await bodyBytes(res);
  expect(res.status, latin1(bytes.subarray(0, 200))).toBe(200);
  return { res, bytes };
}

describe('Ultra HDR gain maps, JPEG → JPEG', () => {
  it('keeps the map resized with the picture, its hdrgm XMP, and the directory length right', async () => {
    const { res, bytes } = await compressed({ image: gainMapJpeg(), format: 'jpeg', width: 128 });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    expect(decodeAny(bytes.subarray(0, mpfImages(bytes)[0]!.size)).width).toBe(128);
    const map = outputMap(bytes);
    const decoded = decodeAny(map);
    expect([decoded.width, decoded.height]).toEqual([32, 24]);
    for (const field of [
      'GainMapMin="-0.25"',
      'GainMapMax="2.5"',
      'Gamma="1"',
      'OffsetSDR="0.015625"',
      'HDRCapacityMax="2.5"',
    ])
      expect(xmpOf(map)).toContain(`hdrgm:${field}`);
    const primaryXmp = xmpOf(bytes.subarray(0, mpfImages(bytes)[0]!.size));
    expect(primaryXmp).toContain('hdrgm:Version="1.0"');
    expect(primaryXmp).toMatch(new RegExp(`Item:Semantic="GainMap"[^>]*Item:Length="${map.length}"`));
  });

  it('turns the map with the EXIF orientation (6: stored top half bright → upright right half)', async () => {
    const { res, bytes } = await compressed({ image: gainMapJpeg({ orientation: 6 }), format: 'jpeg', width: 128 });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    expect(res.headers.get('x-image-width')).toBe('128');
    const map = decodeAny(outputMap(bytes));
    // Upright picture 192×256 → 128×171; the 48×64 upright map scales by the same 171/256 and 128/192.
    expect([map.width, map.height]).toEqual([32, 43]);
    expect(pixel(map, 28, 20)[0], 'right: the stored top').toBeGreaterThan(180);
    expect(pixel(map, 3, 20)[0], 'left: the stored bottom').toBeLessThan(70);
  });

  it('keeps the map with metadata=strip and at full size', async () => {
    const { res, bytes } = await compressed({ image: gainMapJpeg(), format: 'jpeg', metadata: 'strip' });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    const map = decodeAny(outputMap(bytes));
    expect([map.width, map.height]).toEqual([64, 48]);
    const primaryXmp = xmpOf(bytes.subarray(0, mpfImages(bytes)[0]!.size));
    expect(primaryXmp).toContain('Item:Semantic="GainMap"');
    expect(primaryXmp, 'the rest of the XMP is stripped').not.toContain('CreatorTool');
  });

  it('with metadata=keep, updates the map length in the XMP it keeps', async () => {
    const { res, bytes } = await compressed({ image: gainMapJpeg(), format: 'jpeg', width: 128, metadata: 'keep' });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    const map = outputMap(bytes);
    const primaryXmp = xmpOf(bytes.subarray(0, mpfImages(bytes)[0]!.size));
    expect(primaryXmp).toContain('xmp:CreatorTool="Camera 1.0"');
    expect(primaryXmp).toMatch(new RegExp(`Item:Semantic="GainMap"[^>]*Item:Length="${map.length}"`));
    expect(primaryXmp.match(/Container:Directory>/g)).toHaveLength(2);
  });

  it('the never-bigger rewrite of an upright picture keeps the input map byte for byte', async () => {
    const input = gainMapJpeg();
    const { res, bytes } = await compressed({ image: input, format: 'jpeg', quality: 100 });
    expect(res.headers.get('x-quality')).toBe('lossless');
    expect(res.headers.get('x-gain-map')).toBe('kept');
    const inputMap = input.subarray(input.length - outputMap(bytes).length);
    expect(outputMap(bytes)).toEqual(inputMap);
  });

  it('says dropped for PNG and WebP output', async () => {
    for (const format of ['png', 'webp']) {
      const { res } = await compressed({ image: gainMapJpeg(), format, width: 64 });
      expect(res.headers.get('x-gain-map'), format).toBe('dropped');
    }
  });

  it('says dropped for JPEG XL output, lossy and the lossless transcode alike', async () => {
    for (const parts of [{ width: '64' }, { lossless: 'true' }] as Record<string, string>[]) {
      const { res } = await compressed({ image: gainMapJpeg(), format: 'jxl', ...parts });
      expect(res.headers.get('content-type')).toBe('image/jxl');
      expect(res.headers.get('x-gain-map'), JSON.stringify(parts)).toBe('dropped');
    }
  }, 20_000);

  it('puts the map through a transformation: the turn, the mirror, the crop and the padding', async () => {
    // The stored map's top half is bright, its bottom half dark; its hdrgm no-boost value is
    // (0 − (−0.25)) ÷ (2.5 − (−0.25)) of 255 = 23.
    const cases: [Record<string, string | number>, [number, number], [number, number, string][]][] = [
      // Turned clockwise: the top goes right. 192×256 out, the map a quarter of it.
      [
        { rotate: 90 },
        [48, 64],
        [
          [40, 32, 'bright'],
          [7, 32, 'dark'],
        ],
      ],
      // Mirrored top to bottom.
      [
        { flip: 'v' },
        [64, 48],
        [
          [32, 40, 'bright'],
          [32, 7, 'dark'],
        ],
      ],
      // 256×192 covers 128×48 at 128×96: gravity picks the top or the bottom half, all of it one side.
      [
        { fit: 'cover', width: 128, height: 48, gravity: 'top' },
        [32, 12],
        [
          [4, 6, 'bright'],
          [28, 6, 'bright'],
        ],
      ],
      [
        { fit: 'cover', width: 128, height: 48, gravity: 'bottom' },
        [32, 12],
        [
          [4, 6, 'dark'],
          [28, 6, 'dark'],
        ],
      ],
      // Padded to 256×256: 32 rows above and below, 8 in the map, at the no-boost value.
      [
        { fit: 'pad', width: 256, height: 256 },
        [64, 64],
        [
          [32, 3, 'neutral'],
          [32, 12, 'bright'],
          [32, 50, 'dark'],
          [32, 61, 'neutral'],
        ],
      ],
    ];
    // EXIF orientation 6 first (the stored top is upright right), then the turn: the right goes to the bottom.
    cases.push([
      { rotate: 90, orientation: 6 },
      [64, 48],
      [
        [32, 40, 'bright'],
        [32, 7, 'dark'],
      ],
    ]);
    for (const [{ orientation, ...parts }, size, probes] of cases) {
      const what = JSON.stringify({ orientation, ...parts });
      const image = gainMapJpeg({ orientation: orientation as number | undefined });
      const { res, bytes } = await compressed({ image, format: 'jpeg', ...parts });
      expect(res.headers.get('x-gain-map'), what).toBe('kept');
      const map = decodeAny(outputMap(bytes));
      expect([map.width, map.height], what).toEqual(size);
      for (const [x, y, expected] of probes) {
        const v = pixel(map, x, y)[0]!;
        const seen = `${what} at ${x},${y}: ${v}`;
        if (expected === 'bright') expect(v, seen).toBeGreaterThan(170);
        else if (expected === 'dark') expect(v, seen).toBeLessThan(80);
        else expect(Math.abs(v - 23), seen).toBeLessThan(6);
      }
    }
  });

  it('puts the map through a trim, a crop at an edge, a focal point or the saliency, and a squeeze', async () => {
    // [parts, the picture's border, the map's size out (null: a quarter of what the trim keeps), the
    // X-Crop-Box expected (the saliency's and a found border's are the service's to say)]
    const cases: [Record<string, string | number>, number, [number, number] | null, string?][] = [
      // 16 rows off the top, 32 columns off the right, 48 rows off the bottom, 64 columns off the left.
      [{ trim: '16;32;48;64' }, 0, [40, 32], '64,16,160,128'],
      // A 32 px white frame: about 192 × 128 is left (the JPEG's ringing beside the frame is not border).
      [{ trim: 'border' }, 32, null],
      // crop never enlarges: 256 × 192 → 128 × 96, of which 48 × 96 is kept: 96 × 192 source pixels.
      [{ fit: 'crop', width: 48, height: 96, gravity: 'left' }, 0, [12, 24], '0,0,96,192'],
      [{ fit: 'crop', width: 48, height: 96, gravity: 'right' }, 0, [12, 24], '160,0,96,192'],
      // Centred on three quarters of the width: 0.75 × 128 − 24 = 72 of the 128, 144 source pixels.
      [{ fit: 'crop', width: 48, height: 96, gravity: '0.75x0.5' }, 0, [12, 24], '144,0,96,192'],
      [{ fit: 'crop', width: 48, height: 96, gravity: 'auto' }, 0, [12, 24]],
      // Stretched to 128 × 192: half the width, the whole height; nothing cropped.
      [{ fit: 'squeeze', width: 128, height: 192 }, 0, [32, 48]],
    ];
    for (const [parts, border, size, box] of cases) {
      const what = JSON.stringify(parts);
      const image = gainMapJpeg({ gradientMap: true, border });
      const { res, bytes } = await compressed({ image, format: 'jpeg', ...parts });
      if (box) expect(res.headers.get('x-crop-box'), what).toBe(box);
      const kept = (res.headers.get('x-crop-box') ?? '').split(',').map(Number);
      const trimmed: [number, number] = [Math.round(kept[2]! / 4), Math.round(kept[3]! / 4)];
      expectGradientMapThrough(res, bytes, size ?? trimmed, what);
    }
  });

  it('drops the map beside a transformed picture in another format', async () => {
    const { res, bytes } = await compressed({ image: gainMapJpeg(), format: 'png', rotate: 90 });
    expect(res.headers.get('x-gain-map')).toBe('dropped');
    expect(decodeAny(bytes).width).toBe(192);
  });

  it('a corrupt MPF offset: the picture compresses, the map is dropped and the header says so', async () => {
    for (const offsetError of [5, 1 << 30]) {
      const { res, bytes } = await compressed({ image: gainMapJpeg({ offsetError }), format: 'jpeg', width: 128 });
      expect(res.headers.get('x-gain-map')).toBe('dropped');
      expect(decodeAny(bytes).width).toBe(128);
    }
  });

  it('a JPEG without a gain map has no X-Gain-Map header', async () => {
    const plain = encodePixelsJpeg(new Uint8Array(64 * 48 * 3).fill(128), 64, 48, 3, { quality: 90 });
    const { res } = await compressed({ image: plain, format: 'jpeg' });
    expect(res.headers.has('x-gain-map')).toBe(false);
  });
});

describe('signed image URLs', () => {
  it('answer X-Gain-Map on the miss and on every hit, kept for JPEG and dropped for WebP', async () => {
    const name = crypto.randomUUID();
    const put = await fetch(`${ORIGIN}/img/kept?name=${name}`, { method: 'PUT', body: gainMapJpeg() });
    expect(put.status).toBe(204);
    const source = `${ORIGIN}/img/kept?name=${name}`;
    const a = await signingAccount();
    for (const [options, expected] of [
      ['w=128,f=jpeg', 'kept'],
      ['w=128,f=webp', 'dropped'],
    ] as const) {
      const path = await signed(a, options, source);
      for (const cache of ['MISS', 'HIT']) {
        const res = await getImage(path);
        const bytes = await bodyBytes(res);
        expect([res.status, res.headers.get('x-cache')], options).toEqual([200, cache]);
        expect(res.headers.get('x-gain-map'), `${options} ${cache}`).toBe(expected);
        if (expected === 'kept') expect(mpfImages(bytes)).toHaveLength(2);
      }
    }
  });

  it('with f=auto, say what the format Accept chose does with the map: JXL and WebP drop it, AVIF and JPEG keep it', async () => {
    // The encoders' modules take seconds to load in the test runner: not between two fetches of the origin.
    await Promise.all([import('../../../wasm/avif-engine.ts'), import('../../../wasm/jxl-engine.ts')]);
    const name = crypto.randomUUID();
    const put = await fetch(`${ORIGIN}/img/kept?name=${name}`, { method: 'PUT', body: gainMapJpeg() });
    expect(put.status).toBe(204);
    const path = await signed(await signingAccount(), 'w=128,f=auto', `${ORIGIN}/img/kept?name=${name}`);
    for (const [accept, type, expected] of [
      ['image/jxl,image/avif,image/webp,*/*', 'image/jxl', 'dropped'],
      ['image/avif,image/webp,*/*', 'image/avif', 'kept'],
      ['image/webp,*/*', 'image/webp', 'dropped'],
      // Neither: the source's format.
      ['*/*', 'image/jpeg', 'kept'],
    ] as const) {
      const res = await getImage(path, { Accept: accept });
      const bytes = await bodyBytes(res);
      expect([res.status, res.headers.get('content-type')], accept).toEqual([200, type]);
      expect(res.headers.get('x-gain-map'), accept).toBe(expected);
      if (type === 'image/jpeg') expect(mpfImages(bytes)).toHaveLength(2);
      if (type === 'image/avif') expect(avifItems(bytes).map((i) => i.type)).toContain('tmap');
    }
  }, 30_000);
});

describe('ISO 21496-1 gain maps', () => {
  it('are detected and kept, with their APP2 blocks in the primary and the map', async () => {
    const { res, bytes } = await compressed({ image: gainMapJpeg({ flavour: 'iso' }), format: 'jpeg', width: 128 });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    const map = outputMap(bytes);
    expect([decodeAny(map).width, decodeAny(map).height]).toEqual([32, 24]);
    const iso = (jpeg: Uint8Array) =>
      segments(jpeg).find((s) => s.code === 0xe2 && latin1(s.data.subarray(0, ISO_URN.length)) === ISO_URN)?.data;
    expect(iso(map)).toEqual(ISO_MAP);
    expect(iso(bytes.subarray(0, mpfImages(bytes)[0]!.size))).toEqual(ISO_PRIMARY);
  });

  it("pad the map with its no-boost value, read from the ISO block or the hdrgm XMP, through the map's gamma", async () => {
    // Gains −0.25 → 2.5 (log2): no boost is 0.25 ÷ 2.75 of the way, stored as that to the power gamma
    // (ISO 21496-1 and Ultra HDR decode value^(1/gamma)): 23 of 255 at gamma 1, 2 at gamma 2.
    const gamma2: IsoMetadata = { ...ISO_LIKE_HDRGM, channels: [{ ...ISO_LIKE_HDRGM.channels[0]!, gamma: [2, 1] }] };
    for (const [what, build, neutral] of [
      ['ISO block', { flavour: 'iso', mapIso: isoMapBlock(ISO_LIKE_HDRGM) }, 23],
      ['ISO block, gamma 2', { flavour: 'iso', mapIso: isoMapBlock(gamma2) }, 2],
      ['hdrgm, gamma 2', { mapXmp: MAP_XMP.replace('hdrgm:Gamma="1"', 'hdrgm:Gamma="2"') }, 2],
    ] as const) {
      const image = gainMapJpeg(build);
      const { res, bytes } = await compressed({ image, format: 'jpeg', fit: 'pad', width: 256, height: 256 });
      expect(res.headers.get('x-gain-map'), what).toBe('kept');
      const map = decodeAny(outputMap(bytes));
      for (const y of [3, 61]) expect(Math.abs(pixel(map, 32, y)[0]! - neutral), `${what} at y ${y}`).toBeLessThan(4);
    }
  });
});

/** An AVIF's items in the meta box's order: type, and the bytes iloc points to (the gain-map bench's reader). */
const avifItems = (file: Uint8Array) =>
  [...readAvifItems(file).items.values()].map((item) => ({ id: item.id, type: item.type, bytes: item.payload }));

/** The image sizes ('ispe') an AVIF's properties hold. */
const ispeSizes = (file: Uint8Array): [number, number][] => {
  const out: [number, number][] = [];
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  for (let at = 4; at + 16 <= file.length; at++)
    if (latin1(file.subarray(at, at + 4)) === 'ispe') out.push([view.getUint32(at + 8), view.getUint32(at + 12)]);
  return out;
};

/** The channel counts ('pixi') an AVIF's properties hold: 3 for a colour item, 1 for a grey (4:0:0) one. */
const pixiChannels = (file: Uint8Array): number[] => {
  const out: number[] = [];
  for (let at = 4; at + 9 <= file.length; at++)
    if (latin1(file.subarray(at, at + 4)) === 'pixi') out.push(file[at + 8]!);
  return out;
};

/**
 * ISO 21496-1 metadata as libavif writes it in a 'tmap' item: the numbers of the fractions, the first
 * channel's at the top and every channel's (one, or three with is_multichannel) in `channels`.
 */
function tmapNumbers(payload: Uint8Array) {
  const v = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  expect(payload[0], 'tmap version').toBe(0);
  const flags = payload[5]!;
  let at = 6;
  const u = () => {
    const n = v.getUint32(at);
    const d = v.getUint32(at + 4);
    at += 8;
    return n / d;
  };
  const s = () => {
    const n = v.getInt32(at);
    const d = v.getUint32(at + 4);
    at += 8;
    return n / d;
  };
  const baseHeadroom = u();
  const alternateHeadroom = u();
  const channels = Array.from({ length: flags & 0x80 ? 3 : 1 }, () => ({
    min: s(),
    max: s(),
    gamma: u(),
    baseOffset: s(),
    alternateOffset: s(),
  }));
  expect(at, 'the tmap payload read to its end').toBe(payload.length);
  return { baseHeadroom, alternateHeadroom, useBaseColourSpace: (flags & 0x40) !== 0, channels, ...channels[0]! };
}

/** Expects a 'tmap' payload to hold an ISO 21496-1 block's numbers (as values: libavif reduces fractions). */
function expectTmapOf(payload: Uint8Array, iso: IsoMetadata) {
  const numbers = tmapNumbers(payload);
  const value = ([n, d]: Fraction) => n / d;
  expect(numbers.baseHeadroom).toBeCloseTo(value(iso.headrooms[0]), 6);
  expect(numbers.alternateHeadroom).toBeCloseTo(value(iso.headrooms[1]), 6);
  expect(numbers.channels).toHaveLength(iso.channels.length);
  iso.channels.forEach((channel, c) => {
    for (const field of ISO_CHANNEL_FIELDS)
      expect(numbers.channels[c]![field], `channel ${c} ${field}`).toBeCloseTo(value(channel[field]), 6);
  });
}

describe('Ultra HDR gain maps, JPEG → AVIF', () => {
  it('keeps the map as an ISO 21496-1 tone-mapped item, resized with the picture, its numbers from the hdrgm XMP', async () => {
    const { res, bytes } = await compressed({ image: gainMapJpeg(), format: 'avif', width: 128 });
    expect(res.headers.get('content-type')).toBe('image/avif');
    expect(res.headers.get('x-gain-map')).toBe('kept');
    const items = avifItems(bytes);
    expect(items.map((i) => i.type).sort()).toEqual(['av01', 'av01', 'tmap']);
    // The picture at 128 × 96 (its item and the tone-mapped one share the property), the map at a quarter
    // per side as it came.
    expect(ispeSizes(bytes)).toEqual([
      [128, 96],
      [32, 24],
    ]);
    const numbers = tmapNumbers(items.find((i) => i.type === 'tmap')!.bytes);
    expect(numbers.channels, 'one channel (the map is grey)').toHaveLength(1);
    expect(numbers.min).toBeCloseTo(-0.25, 6);
    expect(numbers.max).toBeCloseTo(2.5, 6);
    expect(numbers.gamma).toBeCloseTo(1, 6);
    expect(numbers.baseOffset).toBeCloseTo(1 / 64, 6);
    expect(numbers.alternateOffset).toBeCloseTo(1 / 64, 6);
    expect(numbers.baseHeadroom).toBeCloseTo(0, 6);
    expect(numbers.alternateHeadroom).toBeCloseTo(2.5, 6);
    // A decoder that knows nothing of gain maps (sharp's libheif) shows the SDR picture.
    const shown = await decodeAvif(bytes);
    expect([shown.width, shown.height]).toEqual([128, 96]);
  }, 20_000);

  it('stores a grey map saved with three components as one grey channel (4:0:0), as a one-component map', async () => {
    const { res, bytes } = await compressed({ image: gainMapJpeg({ rgbMap: true }), format: 'avif', width: 128 });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    // The picture's item (its tone-mapped item shares it), then the map's.
    expect(pixiChannels(bytes)).toEqual([3, 1]);
    const { bytes: oneComponent } = await compressed({ image: gainMapJpeg(), format: 'avif', width: 128 });
    expect(pixiChannels(oneComponent)).toEqual([3, 1]);
  }, 20_000);

  it('drops, with a 200, a map whose hdrgm GainMapMax is below its GainMapMin', async () => {
    const mapXmp = MAP_XMP.replace('hdrgm:GainMapMax="2.5"', 'hdrgm:GainMapMax="-1"');
    const { res, bytes } = await compressed({ image: gainMapJpeg({ mapXmp }), format: 'avif', width: 64 });
    expect(res.headers.get('x-gain-map')).toBe('dropped');
    expect(avifItems(bytes).map((i) => i.type)).toEqual(['av01']);
  }, 20_000);

  it('drops, with a 200, a map too narrow to split into the grid of cells of a wide picture', async () => {
    // 1,040 px wide is coded as two cells; a map of one column cannot be two (libavif needs as many).
    const image = gainMapJpeg({ picture: { width: 1040, height: 64 }, map: { width: 1, height: 16 } });
    const { res, bytes } = await compressed({ image, format: 'avif' });
    expect(res.headers.get('x-gain-map')).toBe('dropped');
    expect(avifItems(bytes).map((i) => i.type)).toEqual(['grid', 'av01', 'av01']);
  }, 20_000);

  it('turns the map with a transformation (rotate=90: the map 24 × 32 beside a 96 × 128 picture)', async () => {
    const { res, bytes } = await compressed({ image: gainMapJpeg(), format: 'avif', width: 96, rotate: 90 });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    expect(ispeSizes(bytes)).toEqual([
      [96, 128],
      [24, 32],
    ]);
  }, 20_000);
});

describe('ISO 21496-1 gain maps, JPEG → AVIF', () => {
  const tmapOf = (bytes: Uint8Array) => avifItems(bytes).find((i) => i.type === 'tmap')?.bytes;

  it('keeps a map described only by its ISO 21496-1 block, its numbers in the tmap item', async () => {
    const image = gainMapJpeg({ flavour: 'iso', mapIso: isoMapBlock(ISO_LIKE_HDRGM) });
    const { res, bytes } = await compressed({ image, format: 'avif', width: 128 });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    expect(ispeSizes(bytes)).toEqual([
      [128, 96],
      [32, 24],
    ]);
    expectTmapOf(tmapOf(bytes)!, ISO_LIKE_HDRGM);
  }, 20_000);

  it("keeps a grey map of one set of values whose block names the alternate rendition's colour space", async () => {
    // One gain on every channel gives the same HDR picture in either colour space: the tmap says the base's.
    const iso = { ...ISO_LIKE_HDRGM, useBaseColourSpace: false };
    const { res, bytes } = await compressed({
      image: gainMapJpeg({ flavour: 'iso', mapIso: isoMapBlock(iso) }),
      format: 'avif',
      width: 64,
    });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    expect(tmapNumbers(tmapOf(bytes)!).useBaseColourSpace).toBe(true);
    expectTmapOf(tmapOf(bytes)!, iso);
  }, 20_000);

  it('keeps three channels and numerators over a common denominator', async () => {
    const channel = (max: number): IsoChannel => ({
      min: [-125, 1000],
      max: [max, 1000],
      gamma: [800, 1000],
      baseOffset: [10, 1000],
      alternateOffset: [20, 1000],
    });
    const iso: IsoMetadata = {
      headrooms: [
        [0, 1000],
        [3000, 1000],
      ],
      channels: [channel(2000), channel(2500), channel(3000)],
      commonDenominator: 1000,
    };
    const { res, bytes } = await compressed({
      image: gainMapJpeg({ flavour: 'iso', mapIso: isoMapBlock(iso) }),
      format: 'avif',
      width: 128,
    });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    expectTmapOf(tmapOf(bytes)!, iso);
  }, 20_000);

  it('takes the ISO 21496-1 numbers over the hdrgm XMP when a map has both', async () => {
    // libultrahdr's reader does the same; the two agree in what Ultra HDR 1.1 writers write.
    const iso: IsoMetadata = {
      ...ISO_LIKE_HDRGM,
      headrooms: [
        [0, 1],
        [3, 1],
      ],
    };
    const { res, bytes } = await compressed({ image: gainMapJpeg({ mapIso: isoMapBlock(iso) }), format: 'avif' });
    expect(res.headers.get('x-gain-map')).toBe('kept');
    expectTmapOf(tmapOf(bytes)!, iso);
  }, 20_000);

  it('drops, with a 200, a cut-short block, an HDR base and three channels in another colour space', async () => {
    const channels = [2, 3, 4].map((max) => ({ ...ISO_LIKE_HDRGM.channels[0]!, max: [max, 1] as Fraction }));
    for (const [what, mapIso] of [
      ['cut short', ISO_MAP],
      [
        'HDR base',
        isoMapBlock({
          ...ISO_LIKE_HDRGM,
          headrooms: [
            [5, 2],
            [0, 1],
          ],
        }),
      ],
      ['alternate colour space', isoMapBlock({ ...ISO_LIKE_HDRGM, channels, useBaseColourSpace: false })],
    ] as const) {
      const { res, bytes } = await compressed({
        image: gainMapJpeg({ flavour: 'iso', mapIso }),
        format: 'avif',
        width: 64,
      });
      expect(res.headers.get('x-gain-map'), what).toBe('dropped');
      expect(
        avifItems(bytes).map((i) => i.type),
        what,
      ).toEqual(['av01']);
    }
  }, 30_000);
});

describe('the memory plan', () => {
  it('counts the map, and drops it rather than refuse a picture that fits alone', () => {
    // A noisy map as large as its picture, so its phase outweighs the picture's.
    const bytes = gainMapJpeg({ map: { width: 256, height: 192 }, noisyMap: true });
    const request = { bytes, format: 'jpeg' as const, quality: 80 };
    const header = readHeader('jpeg', bytes);
    const picture = plan('jpeg', header, bytes.length, { ...request, width: 128 });
    const roomy = planGainMap(request, header, picture, 1e9);
    expect(roomy?.gainMap.keep).toBe(true);
    expect(roomy!.estimate).toBeGreaterThan(picture.estimate);
    const tight = planGainMap(request, header, picture, picture.estimate);
    expect(tight?.gainMap.keep).toBe(false);
    expect(tight?.gainMap.reason).toMatch(/memory/);
    expect(tight!.estimate).toBe(picture.estimate);
  });
});
