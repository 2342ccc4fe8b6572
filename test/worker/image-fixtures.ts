// Test images made by the tests themselves: synthetic pixels encoded with our own codecs, plus the
// byte surgery (EXIF blocks, patched headers, truncation) that the error and orientation tests need.
import { expect } from 'vitest';
import type { RgbaImage } from '../../wasm/image.ts';
import { decodeJpeg, encodeJpeg, jpegOptions } from './mozjpeg.ts';
import { decodePng, encodePng } from '../../wasm/png.ts';
import { decodeWebp, encodeWebp } from '../../wasm/webp.ts';
import { concatBytes } from '../../src/bytes.ts';
import { crc32 } from '../../src/compress/crc32.ts';
import { webpOptions } from '../../src/compress/encoders.ts';
import { bearer, call, type TestClock } from './helpers.ts';

export type Rgba = [number, number, number, number];

const clamp = (v: number): number => Math.max(0, Math.min(255, Math.round(v)));

/** A photo-like image: smooth gradients with a deterministic texture, so encoders have real work. */
export function photo(width: number, height: number, alpha?: (x: number, y: number) => number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  let seed = 12345;
  const noise = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 24) - 128;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const n = noise() / 16;
      data[i] = clamp((255 * x) / width + n + 20 * Math.sin(y / 7));
      data[i + 1] = clamp((255 * y) / height + n);
      data[i + 2] = clamp(128 + 100 * Math.sin((x + y) / 23) + n);
      data[i + 3] = alpha ? alpha(x, y) : 255;
    }
  }
  return { data, width, height };
}

/** Four flat quadrants: red top-left, green top-right, blue bottom-left, white bottom-right. */
export const QUADRANT_COLOURS: Record<'tl' | 'tr' | 'bl' | 'br', Rgba> = {
  tl: [255, 0, 0, 255],
  tr: [0, 255, 0, 255],
  bl: [0, 0, 255, 255],
  br: [255, 255, 255, 255],
};

export function quadrants(width: number, height: number): RgbaImage {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const q = y < height / 2 ? (x < width / 2 ? 'tl' : 'tr') : x < width / 2 ? 'bl' : 'br';
      data.set(QUADRANT_COLOURS[q], (y * width + x) * 4);
    }
  }
  return { data, width, height };
}

/**
 * The stored pixels a camera writes for an upright image with this EXIF orientation: the inverse of
 * what a viewer applies. Written from the EXIF definitions (where row 0 / column 0 of the stored
 * image is displayed), independently of the service's own code.
 */
export function storeWithOrientation(upright: RgbaImage, orientation: number): RgbaImage {
  const { width: W, height: H } = upright;
  const swap = orientation >= 5;
  const w = swap ? H : W;
  const h = swap ? W : H;
  const out = new Uint8Array(w * h * 4);
  for (let sy = 0; sy < h; sy++) {
    for (let sx = 0; sx < w; sx++) {
      // Where stored pixel (sx, sy) is displayed.
      const [x, y] = (
        {
          1: [sx, sy],
          2: [W - 1 - sx, sy],
          3: [W - 1 - sx, H - 1 - sy],
          4: [sx, H - 1 - sy],
          5: [sy, sx],
          6: [W - 1 - sy, sx],
          7: [W - 1 - sy, H - 1 - sx],
          8: [sy, H - 1 - sx],
        } as Record<number, [number, number]>
      )[orientation]!;
      out.set(upright.data.subarray((y * W + x) * 4, (y * W + x) * 4 + 4), (sy * w + sx) * 4);
    }
  }
  return { data: out, width: w, height: h };
}

export const jpegOf = (image: RgbaImage, quality = 92): Uint8Array => encodeJpeg(image, jpegOptions(quality));
export const webpOf = (image: RgbaImage, quality = 92): Uint8Array => encodeWebp(image, webpOptions(quality));
export const pngOf = (image: RgbaImage): Uint8Array => encodePng(image.data, image.width, image.height);

export function decodeAny(bytes: Uint8Array): RgbaImage {
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return decodeJpeg(bytes);
  if (bytes[0] === 0x89 && bytes[1] === 0x50) return decodePng(bytes);
  return decodeWebp(bytes);
}

export function pixel(image: RgbaImage, x: number, y: number): Rgba {
  const i = (y * image.width + x) * 4;
  return [...image.data.subarray(i, i + 4)] as Rgba;
}

/** Colours equal within `tolerance` per channel (lossy codecs move flat colours a little). */
export function near(actual: Rgba, expected: Rgba, tolerance = 12): boolean {
  return actual.every((v, i) => Math.abs(v - expected[i]!) <= tolerance);
}

/** A TIFF block (little-endian) whose IFD0 holds only Orientation. */
export function exifTiff(orientation: number): Uint8Array {
  return new Uint8Array([
    0x49,
    0x49,
    0x2a,
    0x00,
    0x08,
    0x00,
    0x00,
    0x00, // "II", 42, IFD0 at 8
    0x01,
    0x00, // one entry
    0x12,
    0x01,
    0x03,
    0x00,
    0x01,
    0x00,
    0x00,
    0x00,
    orientation,
    0x00,
    0x00,
    0x00, // 0x0112 SHORT ×1
    0x00,
    0x00,
    0x00,
    0x00, // no next IFD
  ]);
}

/** The JPEG with an APP1 Exif segment carrying `orientation` inserted after SOI. */
export function withJpegOrientation(jpeg: Uint8Array, orientation: number): Uint8Array {
  const payload = new Uint8Array([0x45, 0x78, 0x69, 0x66, 0, 0, ...exifTiff(orientation)]);
  const segment = new Uint8Array([0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload]);
  return concat(jpeg.subarray(0, 2), segment, jpeg.subarray(2));
}

/** libjpeg's zigzag order: the natural (row-major) index of each DQT entry. */
const ZIGZAG = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
  35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47,
  55, 62, 63,
];

/** A JPEG's 8-bit quantisation tables by id, in natural order (row-major, vertical frequency first). */
export function quantTables(bytes: Uint8Array): Map<number, number[]> {
  const tables = new Map<number, number[]>();
  for (
    let at = 2;
    at + 4 <= bytes.length && bytes[at] === 0xff && bytes[at + 1] !== 0xda;
    at += 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!)
  ) {
    if (bytes[at + 1] !== 0xdb) continue;
    const end = at + 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!);
    for (let p = at + 4; p + 65 <= end; p += 65) {
      const table = new Array<number>(64);
      ZIGZAG.forEach((natural, k) => {
        table[natural] = bytes[p + 1 + k]!;
      });
      tables.set(bytes[p]! & 15, table);
    }
  }
  return tables;
}

export const concat = (...parts: Uint8Array[]): Uint8Array => concatBytes(parts);

/** A copy of the file whose header declares `width`×`height` (checksums kept valid), pixels untouched. */
export function declaringSize(bytes: Uint8Array, width: number, height: number): Uint8Array {
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  if (out[0] === 0xff) {
    for (let at = 2; at < out.length; at += 2 + view.getUint16(at + 2)) {
      if (out[at + 1]! >= 0xc0 && out[at + 1]! <= 0xc2) {
        view.setUint16(at + 5, height);
        view.setUint16(at + 7, width);
        return out;
      }
    }
    throw new Error('no SOF in fixture');
  }
  if (out[0] === 0x89) {
    view.setUint32(16, width);
    view.setUint32(20, height);
    view.setUint32(29, crc32(out.subarray(12, 29)));
    return out;
  }
  throw new Error('declaringSize: JPEG and PNG only');
}

export interface Parts {
  image?: Uint8Array | string;
  filename?: string;
  [field: string]: Uint8Array | string | number | undefined;
}

export function form(parts: Parts): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(parts)) {
    if (name === 'filename' || value === undefined) continue;
    if (value instanceof Uint8Array) data.append(name, new File([value], parts.filename ?? 'photo.jpg'));
    else data.append(name, String(value));
  }
  return data;
}

export { crc32 };

export const MULTIPART_BOUNDARY = 'sr-test-3f9a1c';
export const MULTIPART_TYPE = `multipart/form-data; boundary=${MULTIPART_BOUNDARY}`;

/** Multipart bytes written by hand, so a body can be streamed, held or cut wherever a test needs. */
export function multipartBytes(parts: { name: string; value: string | Uint8Array; filename?: string }[]): Uint8Array {
  const text = (s: string) => new TextEncoder().encode(s);
  const chunks = parts.flatMap(({ name, value, filename }) => [
    text(
      `--${MULTIPART_BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}\r\n`,
    ),
    text(filename === undefined ? '\r\n' : 'Content-Type: application/octet-stream\r\n\r\n'),
    typeof value === 'string' ? text(value) : value,
    text('\r\n'),
  ]);
  return concat(...chunks, text(`--${MULTIPART_BOUNDARY}--\r\n`));
}

export function compressCall(
  key: string,
  parts: Parts,
  options: { clock?: TestClock; env?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<Response> {
  return call('/api/v1/compress', {
    method: 'POST',
    headers: { ...bearer(key), ...options.headers },
    body: form(parts),
    clock: options.clock,
    env: options.env,
  });
}

export async function bodyBytes(res: Response): Promise<Uint8Array> {
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * What the memory guard promises a caller: `parts` (a source `width` pixels wide) refused 422
 * image_too_large naming a max_width that narrows it, and that width then compressed (200, that wide).
 * Returns the refusal's error and max_width, for the caller's further checks.
 */
export async function expectLargestWidthWorks(
  key: string,
  parts: Parts,
  width: number,
  options: { env: Record<string, unknown> },
): Promise<{ error: any; max: number }> {
  const refused = await compressCall(key, parts, options);
  expect(refused.status).toBe(422);
  const { error } = await refused.json<any>();
  expect(error.code).toBe('image_too_large');
  const max = error.details.max_width as number;
  expect(max).toBeGreaterThan(100);
  expect(max).toBeLessThan(width);
  const fits = await compressCall(key, { ...parts, width: String(max) }, options);
  expect(fits.status).toBe(200);
  expect(fits.headers.get('x-image-width')).toBe(String(max));
  return { error, max };
}
