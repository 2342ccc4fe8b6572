// What comes back from POST /api/v1/compress: every input × output format, EXIF orientation, alpha on
// JPEG, never upscaling, the never-bigger rule and target_kb, judged by the bytes and headers.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RgbaImage } from '../../wasm/image.ts';
import { makeKey, type TestKey } from './helpers.ts';
import {
  QUADRANT_COLOURS,
  bodyBytes,
  compressCall,
  decodeAny,
  jpegOf,
  near,
  photo,
  pixel,
  pngOf,
  quadrants,
  storeWithOrientation,
  webpOf,
  withJpegOrientation,
} from './image-fixtures.ts';

const FORMATS = ['jpeg', 'png', 'webp'] as const;
const MAGIC: Record<string, number[]> = {
  jpeg: [0xff, 0xd8, 0xff],
  png: [0x89, 0x50, 0x4e, 0x47],
  webp: [0x52, 0x49, 0x46, 0x46],
};
const TYPES: Record<string, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };
const EXT: Record<string, string> = { jpeg: 'jpg', png: 'png', webp: 'webp' };

let pro: TestKey;
let source: RgbaImage;
let inputs: Record<string, Uint8Array>;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  source = photo(300, 200);
  inputs = { jpeg: jpegOf(source), png: pngOf(source), webp: webpOf(source) };
});

describe('each input format to each output format', () => {
  for (const from of FORMATS) {
    for (const to of FORMATS) {
      it(`${from} → ${to}: right type, magic bytes, size and headers`, async () => {
        const res = await compressCall(pro.key, {
          image: inputs[from]!,
          format: to,
          width: 150,
          filename: `shot.${EXT[from]}`,
        });
        expect(res.status).toBe(200);
        const body = await bodyBytes(res);
        expect(res.headers.get('content-type')).toBe(TYPES[to]);
        expect([...body.subarray(0, MAGIC[to]!.length)]).toEqual(MAGIC[to]);
        expect(res.headers.get('content-disposition')).toBe(`inline; filename="shot.${EXT[to]}"`);
        expect(res.headers.get('cache-control')).toBe('no-store');
        expect(Number(res.headers.get('x-original-size'))).toBe(inputs[from]!.length);
        expect(Number(res.headers.get('x-compressed-size'))).toBe(body.length);
        expect(res.headers.get('content-length')).toBe(String(body.length));
        const savings = ((inputs[from]!.length - body.length) / inputs[from]!.length) * 100;
        expect(res.headers.get('x-savings-percent')).toBe(savings.toFixed(1));
        expect(res.headers.get('x-image-width')).toBe('150');
        expect(res.headers.get('x-image-height')).toBe('100');
        // PNG output is lossless: no quality was used.
        expect(res.headers.get('x-quality')).toBe(to === 'png' ? 'lossless' : '80');
        expect(res.headers.get('x-target-reached')).toBeNull();
        expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
        expect(res.headers.get('server-timing')).toMatch(
          /^decode;dur=\d+\.\d, resize;dur=\d+\.\d, encode;dur=\d+\.\d;desc="1 encode", total;dur=\d+\.\d$/,
        );
        const decoded = decodeAny(body);
        expect([decoded.width, decoded.height]).toEqual([150, 100]);
        // Still the same picture: a pixel from the middle is close to the source's.
        expect(near(pixel(decoded, 75, 50), pixel(source, 150, 100), 40)).toBe(true);
      });
    }
  }

  it('a conversion that grows the file reports negative savings', async () => {
    const res = await compressCall(pro.key, { image: inputs.jpeg!, format: 'png' });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('x-savings-percent'))).toBeLessThan(0);
  });
});

describe('EXIF orientation', () => {
  const upright = quadrants(64, 32);
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('orientation %i comes out upright, with the tag gone', async (orientation) => {
    const stored = storeWithOrientation(upright, orientation);
    const jpeg = withJpegOrientation(jpegOf(stored, 95), orientation);
    const res = await compressCall(pro.key, { image: jpeg, format: 'png' });
    expect(res.status).toBe(200);
    expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['64', '32']);
    const out = decodeAny(await bodyBytes(res));
    expect([out.width, out.height]).toEqual([64, 32]);
    expect(near(pixel(out, 8, 8), QUADRANT_COLOURS.tl)).toBe(true);
    expect(near(pixel(out, 56, 8), QUADRANT_COLOURS.tr)).toBe(true);
    expect(near(pixel(out, 8, 24), QUADRANT_COLOURS.bl)).toBe(true);
    expect(near(pixel(out, 56, 24), QUADRANT_COLOURS.br)).toBe(true);
  });

  it('orientation and resize together: the box applies to the upright image', async () => {
    const stored = storeWithOrientation(quadrants(400, 200), 6);
    const res = await compressCall(pro.key, {
      image: withJpegOrientation(jpegOf(stored, 95), 6),
      format: 'jpeg',
      width: 100,
    });
    const out = decodeAny(await bodyBytes(res));
    expect([out.width, out.height]).toEqual([100, 50]);
    expect(near(pixel(out, 10, 10), QUADRANT_COLOURS.tl, 30)).toBe(true);
    expect(near(pixel(out, 90, 40), QUADRANT_COLOURS.br, 30)).toBe(true);
  });

  it('JPEG output carries no EXIF (metadata is stripped)', async () => {
    const jpeg = withJpegOrientation(jpegOf(photo(64, 64), 95), 3);
    const out = await bodyBytes(await compressCall(pro.key, { image: jpeg, format: 'jpeg', quality: 95 }));
    expect(new TextDecoder('latin1').decode(out).includes('Exif')).toBe(false);
  });
});

describe('transparency', () => {
  // Left half fully transparent (its hidden colour black), right half opaque red.
  const halfClear = photo(64, 32, (x) => (x < 32 ? 0 : 255));
  for (let i = 0; i < halfClear.data.length; i += 4) {
    if (halfClear.data[i + 3] === 0) halfClear.data.set([0, 0, 0, 0], i);
    else halfClear.data.set([255, 0, 0, 255], i);
  }

  it.each(['png', 'webp'])('transparent %s to JPEG is white where it was transparent', async (from) => {
    const image = from === 'png' ? pngOf(halfClear) : webpOf(halfClear, 100);
    const out = decodeAny(await bodyBytes(await compressCall(pro.key, { image, format: 'jpeg', quality: 95 })));
    expect(near(pixel(out, 8, 16), [255, 255, 255, 255])).toBe(true);
    expect(near(pixel(out, 56, 16), [255, 0, 0, 255], 20)).toBe(true);
  });

  it('PNG and WebP output keep the alpha channel', async () => {
    for (const format of ['png', 'webp']) {
      const out = decodeAny(await bodyBytes(await compressCall(pro.key, { image: pngOf(halfClear), format })));
      expect(pixel(out, 8, 16)[3]).toBe(0);
      expect(pixel(out, 56, 16)[3]).toBe(255);
    }
  });

  it('PNG output is lossless', async () => {
    const image = photo(40, 30, (x, y) => (x * 7 + y * 3) % 256);
    const out = decodeAny(await bodyBytes(await compressCall(pro.key, { image: webpOf(image, 100), format: 'png' })));
    const viaWebp = decodeAny(webpOf(image, 100));
    expect(out.data).toEqual(viaWebp.data);
  });
});

describe('size', () => {
  it('never upscales: a box larger than the image keeps its size', async () => {
    for (const box of [{ width: 1000 }, { height: 1000 }, { width: 1000, height: 1000 }]) {
      const res = await compressCall(pro.key, { image: inputs.png!, format: 'jpeg', ...box });
      expect([res.headers.get('x-image-width'), res.headers.get('x-image-height')]).toEqual(['300', '200']);
    }
  });

  it('keeps the aspect ratio inside the box; both sides bind by the tighter one', async () => {
    const cases: [Record<string, number>, [number, number]][] = [
      [{ width: 100 }, [100, 67]],
      [{ height: 50 }, [75, 50]],
      [{ width: 150, height: 50 }, [75, 50]],
      [{ width: 1 }, [1, 1]],
    ];
    for (const [box, size] of cases) {
      const out = decodeAny(
        await bodyBytes(await compressCall(pro.key, { image: inputs.png!, format: 'png', ...box })),
      );
      expect([out.width, out.height]).toEqual(size);
    }
  });

  it('never bigger, never the input: a JPEG whose re-encode is not smaller gets its lossless rewrite', async () => {
    const small = withJpegOrientation(jpegOf(photo(128, 80), 30), 1); // EXIF the rewrite must drop
    const res = await compressCall(pro.key, { image: small, format: 'jpeg', quality: 100 });
    const body = await bodyBytes(res);
    expect(body).not.toEqual(small);
    expect(body.length).toBeLessThan(small.length);
    expect(Number(res.headers.get('x-savings-percent'))).toBeGreaterThan(0);
    expect(res.headers.get('x-compressed-size')).toBe(String(body.length));
    expect(decodeAny(body).data).toEqual(decodeAny(small).data);
  });

  it('never bigger does not apply to a conversion, a resize or target_kb', async () => {
    const small = jpegOf(photo(120, 80), 30);
    const resized = await bodyBytes(
      await compressCall(pro.key, { image: small, format: 'jpeg', quality: 100, width: 119 }),
    );
    expect(resized).not.toEqual(small);
    const converted = await bodyBytes(await compressCall(pro.key, { image: small, format: 'png' }));
    expect(converted.length).toBeGreaterThan(small.length);
  });

  it('a smaller same-format result is returned as compressed', async () => {
    const big = jpegOf(source, 98);
    const res = await compressCall(pro.key, { image: big, format: 'jpeg', quality: 60 });
    expect(Number(res.headers.get('x-compressed-size'))).toBeLessThan(big.length);
    expect(Number(res.headers.get('x-savings-percent'))).toBeGreaterThan(0);
  });
});

describe('target_kb', () => {
  const timing = (res: Response) =>
    Number(/encode;dur=[\d.]+;desc="(\d+) encodes?"/.exec(res.headers.get('server-timing') ?? '')?.[1]);

  it.each(['jpeg', 'webp'])('%s: reached, with the highest quality that fits, in at most 8 encodes', async (format) => {
    const image = photo(400, 300);
    const q80 = await bodyBytes(await compressCall(pro.key, { image: pngOf(image), format }));
    const target = Math.floor(q80.length / 1024 / 2);
    const res = await compressCall(pro.key, { image: pngOf(image), format, target_kb: target });
    const body = await bodyBytes(res);
    expect(res.headers.get('x-target-reached')).toBe('true');
    expect(body.length).toBeLessThanOrEqual(target * 1024);
    const quality = Number(res.headers.get('x-quality'));
    expect(quality).toBeLessThan(80);
    expect(timing(res)).toBeGreaterThan(1);
    expect(timing(res)).toBeLessThanOrEqual(8);
    // One quality step up no longer fits: it really is the highest.
    const above = await bodyBytes(await compressCall(pro.key, { image: pngOf(image), format, quality: quality + 1 }));
    expect(above.length).toBeGreaterThan(target * 1024);
  });

  it('already under the target at the requested quality: one encode, that quality', async () => {
    const res = await compressCall(pro.key, { image: inputs.png!, format: 'jpeg', quality: 70, target_kb: 10240 });
    expect(res.headers.get('x-target-reached')).toBe('true');
    expect(res.headers.get('x-quality')).toBe('70');
    expect(timing(res)).toBe(1);
  });

  it('unreachable: the quality-1 result with X-Target-Reached false', async () => {
    const image = pngOf(photo(800, 600));
    const res = await compressCall(pro.key, { image, format: 'jpeg', target_kb: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-target-reached')).toBe('false');
    expect(res.headers.get('x-quality')).toBe('1');
    const q1 = await bodyBytes(await compressCall(pro.key, { image, format: 'jpeg', quality: 1 }));
    expect((await bodyBytes(res)).length).toBe(q1.length);
    expect(timing(res)).toBeLessThanOrEqual(8);
  });
});
