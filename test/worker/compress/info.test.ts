// format=json on POST /compress (and f=json on a signed image URL): the image described without encoding
// it. Each field for JPEG (EXIF orientation 6: upright width and height swapped; make, model, date), PNG with
// alpha and an ICC profile, lossy WebP; GPS only with metadata=keep; one unit of the month; the thumbhash's
// average colour; parameters that shape an output refused with 400.
import { beforeAll, describe, expect, it } from 'vitest';
import { insertAfterIhdr } from '../../../src/compress/png/chunks.ts';
import { encodePixelsJpeg } from '../../../wasm/jpeg-engine.ts';
import { makeGif } from '../gif-fixtures.ts';
import { makeKey, type TestKey } from '../helpers.ts';
import { compressCall, jpegOf, photo, pngOf, storeWithOrientation, webpOf } from '../image-fixtures.ts';
import { expectError, getImage, gradient, monthUsed, signed, signingAccount } from '../img-helpers.ts';
import { ascii, cat, chunk, chunksOf, zlib } from '../png-fixtures.ts';
import { withMetadata } from '../webp-fixtures.ts';
import { base64Bytes, exifBlock, iccWithDescription, thumbHashAverage, withJpegExif } from './info-fixtures.ts';

interface Info {
  width: number;
  height: number;
  format: string;
  bytes: number;
  orientation: number;
  has_alpha: boolean;
  bit_depth: number;
  icc: { description: string | null; color_space: string | null; bytes: number } | null;
  hdr: boolean;
  gain_map: boolean;
  frames: number;
  duration_ms: number | null;
  loop: number | null;
  exif: {
    make: string | null;
    model: string | null;
    taken_at: string | null;
    gps?: { latitude: number; longitude: number } | null;
  } | null;
  dominant_color: string | null;
  thumbhash: string | null;
}

let key: TestKey;
beforeAll(async () => {
  key = await makeKey({ image: 'free' });
  // The first call instantiates the engine and the fixtures' encoders: seconds on a busy machine.
  await compressCall(key.key, { image: jpegOf(photo(16, 16)), format: 'json' });
}, 30_000);

const flat = (w: number, h: number, rgb: [number, number, number]) => {
  const image = photo(w, h);
  for (let i = 0; i < image.data.length; i += 4) image.data.set([...rgb, 255], i);
  return image;
};

/** A camera JPEG: stored 48×64 with orientation 6 (upright 64×48), Make, Model, the time taken and GPS. */
const cameraJpeg = () =>
  withJpegExif(
    jpegOf(storeWithOrientation(photo(64, 48), 6), 85),
    exifBlock({
      orientation: 6,
      make: 'Canon',
      model: 'Canon EOS R5',
      taken: '2024:05:01 12:34:56',
      offset: '+02:00',
      gps: { latitude: 48.8584, longitude: -2.2945 },
    }),
  );

async function info(parts: Record<string, string | Uint8Array>): Promise<{ res: Response; body: Info }> {
  const res = await compressCall(key.key, { format: 'json', ...parts });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { res, body: JSON.parse(text) as Info };
}

describe('format=json', () => {
  it('describes a camera JPEG: upright size, orientation, EXIF summary without GPS, no encoding', async () => {
    const image = cameraJpeg();
    const { res, body } = await info({ image, filename: 'camera.jpg' });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    expect(body).toMatchObject({
      width: 64,
      height: 48,
      format: 'jpeg',
      bytes: image.length,
      orientation: 6,
      has_alpha: false,
      bit_depth: 8,
      icc: null,
      hdr: false,
      gain_map: false,
      frames: 1,
      duration_ms: null,
      loop: null,
      exif: { make: 'Canon', model: 'Canon EOS R5', taken_at: '2024-05-01T12:34:56+02:00' },
    });
    expect(body.exif).not.toHaveProperty('gps');
    expect(body.dominant_color).toMatch(/^#[0-9a-f]{6}$/);
    const hash = base64Bytes(body.thumbhash!);
    expect(hash.length).toBeGreaterThan(4);
    expect(hash.length).toBeLessThanOrEqual(40);
  });

  it('answers GPS only with metadata=keep', async () => {
    const { body } = await info({ image: cameraJpeg(), metadata: 'keep' });
    expect(body.exif?.gps?.latitude).toBeCloseTo(48.8584, 3);
    expect(body.exif?.gps?.longitude).toBeCloseTo(-2.2945, 3);
    const plain = await info({
      image: withJpegExif(jpegOf(photo(32, 24)), exifBlock({ make: 'X' })),
      metadata: 'keep',
    });
    expect(plain.body.exif).toEqual({ make: 'X', model: null, taken_at: null, gps: null });
  });

  it('describes a PNG with alpha and an ICC profile', async () => {
    const rgba = pngOf(photo(40, 30, (x) => (x < 20 ? 255 : 64)));
    const profile = iccWithDescription('Display P3');
    const image = insertAfterIhdr(rgba, [{ type: 'iCCP', data: cat(ascii('P3\0\0'), await zlib(profile)) }]);
    const { body } = await info({ image, filename: 'a.png' });
    expect(body).toMatchObject({
      width: 40,
      height: 30,
      format: 'png',
      bytes: image.length,
      orientation: 1,
      has_alpha: true,
      bit_depth: 8,
      icc: { description: 'Display P3', color_space: 'RGB', bytes: profile.length },
      frames: 1,
      exif: null,
    });
    expect(base64Bytes(body.thumbhash!).length).toBeLessThanOrEqual(40);
  });

  it('a GIF: its first frame described, frames, total duration and plays (NETSCAPE repeats + 1)', async () => {
    const red: [number, number, number] = [220, 20, 20];
    const frame = (index: number, delayCs: number) => ({
      width: 20,
      height: 10,
      indices: new Uint8Array(200).fill(index),
      delayCs,
      transparentIndex: 2,
    });
    const palette: [number, number, number][] = [red, [20, 20, 220], [0, 0, 0], [0, 0, 0]];
    const animated = await info({
      image: makeGif({ width: 20, height: 10, palette, frames: [frame(0, 10), frame(1, 15), frame(2, 25)], loop: 2 }),
      filename: 'a.gif',
    });
    expect(animated.res.status).toBe(200);
    expect(animated.body).toMatchObject({
      width: 20,
      height: 10,
      format: 'gif',
      bit_depth: 8,
      frames: 3,
      duration_ms: 500,
      loop: 3,
      dominant_color: '#dc1414',
    });
    const still = await info({
      image: makeGif({ width: 20, height: 10, palette, frames: [frame(2, 0)] }),
      filename: 's.gif',
    });
    expect(still.body).toMatchObject({ frames: 1, duration_ms: null, loop: null, has_alpha: true });
  });

  it('an animated PNG: frames, total duration and loop count; a gain-map JPEG: gain_map and hdr', async () => {
    const still = pngOf(photo(16, 12));
    const frameControl = (seq: number, delayNum: number, delayDen: number) => {
      const d = new Uint8Array(26);
      const v = new DataView(d.buffer);
      v.setUint32(0, seq);
      v.setUint32(4, 16);
      v.setUint32(8, 12);
      v.setUint16(20, delayNum);
      v.setUint16(22, delayDen);
      return d;
    };
    const actl = new Uint8Array(8);
    new DataView(actl.buffer).setUint32(0, 2);
    new DataView(actl.buffer).setUint32(4, 3);
    const idat = chunksOf(still).find((c) => c.type === 'IDAT')!.data;
    const iend = still.length - 12;
    const apng = cat(
      insertAfterIhdr(still.subarray(0, iend), [
        { type: 'acTL', data: actl },
        { type: 'fcTL', data: frameControl(0, 1, 4) },
      ]),
      chunk('fcTL', frameControl(1, 0, 0)),
      chunk('fdAT', cat(Uint8Array.of(0, 0, 0, 2), idat)),
      still.subarray(iend),
    );
    const animated = await info({ image: apng, filename: 'a.png' });
    // 1/4 s, then 0/100 s.
    expect(animated.body).toMatchObject({ width: 16, height: 12, frames: 2, duration_ms: 250, loop: 3 });

    const xmp = cat(
      ascii('http://ns.adobe.com/xap/1.0/\0'),
      ascii(
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:Description xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0"/></x:xmpmeta>',
      ),
    );
    const mpf = cat(ascii('MPF\0'), new Uint8Array(16));
    const segment = (code: number, data: Uint8Array) =>
      cat(Uint8Array.of(0xff, code, (data.length + 2) >> 8, (data.length + 2) & 0xff), data);
    const jpeg = jpegOf(photo(16, 12));
    const ultraHdr = cat(jpeg.subarray(0, 2), segment(0xe1, xmp), segment(0xe2, mpf), jpeg.subarray(2));
    const hdr = await info({ image: ultraHdr });
    expect(hdr.body).toMatchObject({ gain_map: true, hdr: true });
  });

  it('hdr: a PNG cICP chunk or an ICC cicp tag with the PQ or HLG transfer', async () => {
    const still = pngOf(photo(16, 12));
    const cicp = insertAfterIhdr(still, [{ type: 'cICP', data: Uint8Array.of(9, 18, 0, 1) }]);
    expect((await info({ image: cicp, filename: 'a.png' })).body).toMatchObject({ hdr: true, icc: null });
    const sdr = insertAfterIhdr(still, [{ type: 'cICP', data: Uint8Array.of(1, 13, 0, 1) }]);
    expect((await info({ image: sdr, filename: 'a.png' })).body).toMatchObject({ hdr: false });
    const profile = iccWithDescription('Rec. 2100 PQ', 'RGB ', [9, 16, 0, 1]);
    const webp = withMetadata(webpOf(photo(16, 12)), 16, 12, { icc: profile });
    expect((await info({ image: webp, filename: 'a.webp' })).body).toMatchObject({
      hdr: true,
      gain_map: false,
      icc: { description: 'Rec. 2100 PQ', color_space: 'RGB', bytes: profile.length },
    });
  });

  it('a picture too large to preview within the memory budget is still described, without its colours', async () => {
    // A progressive JPEG's decoder holds every coefficient: 800×600 needs over 5 MB with the request's base.
    const rgb = new Uint8Array(800 * 600 * 3).map((_, i) => (i * 7) & 255);
    const image = encodePixelsJpeg(rgb, 800, 600, 3, { quality: 50, progressive: true });
    const res = await compressCall(key.key, { image, format: 'json' }, { env: { MEMORY_BUDGET_MB: '5' } });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({
      width: 800,
      height: 600,
      format: 'jpeg',
      dominant_color: null,
      thumbhash: null,
    });
  });

  it('describes a lossy WebP', async () => {
    const image = webpOf(photo(50, 20));
    const { body } = await info({ image, filename: 'a.webp' });
    expect(body).toMatchObject({ width: 50, height: 20, format: 'webp', has_alpha: false, bit_depth: 8, icc: null });
  });

  it("the thumbhash's average and the dominant colour are the picture's colour", async () => {
    const { body } = await info({ image: jpegOf(flat(64, 48, [200, 60, 30]), 95) });
    const [r, g, b] = thumbHashAverage(base64Bytes(body.thumbhash!));
    expect(Math.abs(r * 255 - 200), `r ${r * 255}`).toBeLessThan(14);
    expect(Math.abs(g * 255 - 60), `g ${g * 255}`).toBeLessThan(14);
    expect(Math.abs(b * 255 - 30), `b ${b * 255}`).toBeLessThan(14);
    const dominant = body.dominant_color!.match(/[0-9a-f]{2}/g)!.map((h) => Number.parseInt(h, 16));
    expect(Math.abs(dominant[0]! - 200) + Math.abs(dominant[1]! - 60) + Math.abs(dominant[2]! - 30)).toBeLessThan(12);
  });

  it('counts one compression of the month', async () => {
    const k = await makeKey({ image: 'free' });
    const before = await monthUsed(k);
    const res = await compressCall(k.key, { image: jpegOf(photo(32, 24)), format: 'json' });
    expect(res.status).toBe(200);
    expect(await monthUsed(k)).toBe(before + 1);
  });

  it('refuses parameters that shape an output, naming them, and charges nothing', async () => {
    const k = await makeKey({ image: 'pro' });
    const image = jpegOf(photo(32, 24));
    for (const [param, value] of [
      ['target_kb', '10'],
      ['width', '10'],
      ['palette', 'true'],
      ['lossless', 'true'],
      ['fit', 'contain'],
      ['rotate', '90'],
      ['background', 'red'],
    ] as const) {
      const res = await compressCall(k.key, { image, format: 'json', [param]: value });
      const error = await expectError(res, 400, 'bad_request');
      expect(error.message).toContain('format=json');
      expect((error as { param?: string }).param).toBe(param);
    }
    expect(await monthUsed(k)).toBe(0);
  });

  it('refuses an unreadable upload as a compression would (415)', async () => {
    const res = await compressCall(key.key, { image: ascii('BM not really an image'), format: 'json' });
    await expectError(res, 415, 'unsupported_media_type');
  });
});

describe('f=json on a signed image URL', () => {
  it('answers the description as cacheable JSON, charged once', async () => {
    const a = await signingAccount('free');
    const src = gradient(64, 48);
    const path = await signed(a, 'f=json', src.url);
    const res = await getImage(path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await res.json()) as Info;
    expect(body).toMatchObject({ width: 64, height: 48, format: 'png', frames: 1 });
    expect(await monthUsed(a)).toBe(1);
    const again = await getImage(path);
    expect(again.headers.get('x-cache')).toBe('HIT');
    expect(await monthUsed(a)).toBe(1);
  });

  it('refuses w, h, kb and transformations beside f=json', async () => {
    const a = await signingAccount('pro');
    for (const [options, named] of [
      ['f=json,w=20', 'w'],
      ['f=json,r=90', 'r'],
    ]) {
      const res = await getImage(await signed(a, options!, gradient().url));
      const error = await expectError(res, 400, 'bad_request');
      expect(error.message).toContain(`f=json describes the image as it is and encodes nothing: leave out ${named}`);
    }
  });
});
