// gravity=auto (smart crop, issue 48): a detailed object on the right of a flat 240×120 picture is kept by a
// square cover crop, whichever door and whatever the flip and rotation; a flat picture gets the centre crop,
// said as X-Gravity: center with confidence 0 (gravity=face: transform-face.test.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { Shrinkray } from '../../../packages/client/src/index.ts';
import type { RgbaImage } from '../../../wasm/image.ts';
import { call, makeKey, type TestKey } from '../helpers.ts';
import { readHeader } from '../../../src/compress/header.ts';
import { DEFAULT_QUALITY } from '../../../src/compress/limits.ts';
import { plan } from '../../../src/compress/memory-plan.ts';
import {
  bodyBytes,
  compressCall,
  concat,
  crc32,
  decodeAny,
  jpegOf,
  pngOf,
  storeWithOrientation,
  withJpegOrientation,
  type Parts,
} from '../image-fixtures.ts';
import { getImage, ORIGIN, signed, signingAccount } from '../img-helpers.ts';

/** The object: x 180–219, y 40–79 (as test/fixtures/origin.ts's objectPng draws it). */
const OBJECT = { left: 180, right: 220 };

function grey(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set([120, 130, 140, 255], i);
  return { data, width, height };
}

/** A saturated checkered square of 40 px centred at (200, 60) on the grey: what a centre crop cuts off. */
function withObject(): RgbaImage {
  const image = grey(240, 120);
  for (let y = 40; y < 80; y++)
    for (let x = OBJECT.left; x < OBJECT.right; x++)
      image.data.set(((x >> 2) + (y >> 2)) % 2 === 0 ? [230, 60, 30, 255] : [20, 30, 200, 255], (y * 240 + x) * 4);
  return image;
}

/** Pixels whose chroma (max − min of R, G, B) is over 100: the object's, never the grey's. */
function colourful(image: RgbaImage): number {
  let n = 0;
  for (let i = 0; i < image.data.length; i += 4) {
    const [r, g, b] = [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!];
    if (Math.max(r, g, b) - Math.min(r, g, b) > 100) n++;
  }
  return n;
}

const cropBox = (res: Response): number[] => (res.headers.get('x-crop-box') ?? '').split(',').map(Number);

function expectKeepsObject(res: Response): void {
  const [x, , w] = cropBox(res);
  expect(x, res.headers.get('x-crop-box') ?? 'no X-Crop-Box').toBeGreaterThan(0);
  expect(x).toBeLessThanOrEqual(OBJECT.left);
  expect(x! + w!).toBeGreaterThanOrEqual(OBJECT.right);
  expect(res.headers.get('x-gravity')).toBe('auto');
  expect(Number(res.headers.get('x-crop-confidence'))).toBeGreaterThan(0.5);
}

let pro: TestKey;

beforeAll(async () => {
  pro = await makeKey({ image: 'pro' });
  // The engine's first instance is made on the first compression: not inside the first test's time.
  await compressCall(pro.key, { image: pngOf(grey(8, 8)), filename: 'w.png', format: 'jpeg' });
}, 30_000);

async function cropped(parts: Parts): Promise<{ res: Response; image: RgbaImage }> {
  const res = await compressCall(pro.key, { fit: 'cover', width: '60', height: '60', gravity: 'auto', ...parts });
  const body = await bodyBytes(res);
  expect(res.status, new TextDecoder().decode(body.subarray(0, 300))).toBe(200);
  return { res, image: decodeAny(body) };
}

describe('gravity=auto on POST /compress', () => {
  it('a square cover crop of a JPEG keeps the detailed object on the right, and says how sure it is', async () => {
    const { res, image } = await cropped({ image: jpegOf(withObject()), filename: 'o.jpg', format: 'png' });
    expectKeepsObject(res);
    expect([image.width, image.height]).toEqual([60, 60]);
    // A centre crop (source x 60–179) would hold none of the object's colours.
    expect(colourful(image)).toBeGreaterThan(100);
  });

  it('placed in the output axes: flipped and turned, the crop still holds the object', async () => {
    const { res, image } = await cropped({
      image: pngOf(withObject()),
      filename: 'o.png',
      format: 'png',
      flip: 'h',
      rotate: '90',
    });
    expectKeepsObject(res);
    expect(colourful(image)).toBeGreaterThan(100);
  });

  it('a JPEG stored turned (EXIF orientation 6) is looked at upright: the same crop', async () => {
    const stored = withJpegOrientation(jpegOf(storeWithOrientation(withObject(), 6)), 6);
    const { res, image } = await cropped({ image: stored, filename: 'o.jpg', format: 'png' });
    expectKeepsObject(res);
    expect(colourful(image)).toBeGreaterThan(100);
  });

  it('a flat picture: the centre crop, said as X-Gravity center with confidence 0', async () => {
    const { res } = await cropped({ image: pngOf(grey(240, 120)), filename: 'g.png', format: 'jpeg' });
    expect(res.headers.get('x-crop-box')).toBe('60,0,120,120');
    expect(res.headers.get('x-gravity')).toBe('center');
    expect(res.headers.get('x-crop-confidence')).toBe('0.00');
  });
});

/** `png` with a private ancillary chunk of `size` bytes after IHDR: the same pixels, a larger upload. */
function padded(png: Uint8Array, size: number): Uint8Array {
  const body = new Uint8Array(4 + size);
  body.set(new TextEncoder().encode('prVt'));
  const chunk = new Uint8Array(12 + size);
  const view = new DataView(chunk.buffer);
  view.setUint32(0, size);
  chunk.set(body, 4);
  view.setUint32(8 + size, crc32(body));
  return concat(png.subarray(0, 33), chunk, png.subarray(33));
}

describe('gravity=auto within the memory plan', () => {
  it('a preview the budget cannot hold beside the compression: the centre, confidence 0; with room, auto', async () => {
    const MB = 1024 * 1024;
    const png = pngOf(withObject());
    const request = {
      format: 'jpeg',
      quality: DEFAULT_QUALITY,
      width: 60,
      height: 60,
      transform: { fit: 'cover', gravity: 'auto', rotate: 0 },
    } as const;
    const preview = { format: 'jpeg', quality: DEFAULT_QUALITY, width: 256, height: 256 } as const;
    const estimates = (bytes: Uint8Array) => {
      const header = readHeader('png', bytes);
      return [plan('png', header, bytes.length, request).estimate, plan('png', header, bytes.length, preview).estimate];
    };
    const [compression, withPreview] = estimates(png);
    expect(withPreview, 'the preview of this picture costs more than its compression').toBeGreaterThan(compression!);
    // Padded so that the compression just fits a whole number of MB and the preview does not (the upload
    // counts twice in both).
    const budget = Math.ceil(compression! / MB);
    const upload = padded(png, Math.floor((budget * MB - compression! - 64) / 2));
    const [e, p] = estimates(upload);
    expect(e).toBeLessThanOrEqual(budget * MB);
    expect(p).toBeGreaterThan(budget * MB);
    const parts = { image: upload, filename: 'o.png', format: 'jpeg', fit: 'cover', width: '60', height: '60' };
    const tight = await compressCall(
      pro.key,
      { ...parts, gravity: 'auto' },
      { env: { MEMORY_BUDGET_MB: String(budget) } },
    );
    expect(tight.status).toBe(200);
    await tight.arrayBuffer();
    expect(tight.headers.get('x-crop-box')).toBe('60,0,120,120');
    expect(tight.headers.get('x-gravity')).toBe('center');
    expect(tight.headers.get('x-crop-confidence')).toBe('0.00');
    const roomy = await compressCall(
      pro.key,
      { ...parts, gravity: 'auto' },
      { env: { MEMORY_BUDGET_MB: String(budget + 1) } },
    );
    expect(roomy.status).toBe(200);
    await roomy.arrayBuffer();
    expect(roomy.headers.get('x-gravity')).toBe('auto');
  });
});

describe('gravity=auto through the SDK', () => {
  it('answers the crop, the gravity and the confidence', async () => {
    const client = new Shrinkray({ apiKey: pro.key, baseUrl: 'https://api.shrinkray.test', fetch: call });
    const result = await client.compress(jpegOf(withObject()), {
      fit: 'cover',
      width: 60,
      height: 60,
      gravity: 'auto',
      filename: 'o.jpg',
    });
    expect(result.gravity).toBe('auto');
    expect(result.cropBox!.x).toBeGreaterThan(0);
    expect(result.cropConfidence).toBeGreaterThan(0.5);
  });
});

describe('g=auto on signed image URLs', () => {
  it('a miss and a hit answer the same crop, gravity and confidence', async () => {
    const a = await signingAccount();
    const url = `${ORIGIN}/img/object.png?group=${crypto.randomUUID()}`;
    const path = await signed(a, 'fit=cover,w=60,h=60,g=auto,f=png', url);
    const miss = await getImage(path);
    expect(miss.status).toBe(200);
    expect(miss.headers.get('x-cache')).toBe('MISS');
    expectKeepsObject(miss);
    await miss.arrayBuffer();
    const hit = await getImage(path);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    await hit.arrayBuffer();
    for (const name of ['x-crop-box', 'x-gravity', 'x-crop-confidence'])
      expect(hit.headers.get(name), name).toBe(miss.headers.get(name));
  });
});
