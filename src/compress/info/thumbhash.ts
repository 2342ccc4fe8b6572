// ThumbHash (Evan Wallace's format, MIT licence; docs/licences.md): a picture's blurred placeholder in about
// 25 bytes — its average colour, aspect ratio and the lowest frequencies of its luminance, two chroma
// channels and alpha, each DCT coefficient in 4 bits. Written here from the format's definition so that it
// stays a pure function over our preview, without a dependency; the reference decoder reads what it writes.
import type { RgbaImage } from '../../../wasm/image.ts';

/** The encoder's input, at most: ThumbHash stores a handful of coefficients, which 100 px determine. */
export const THUMBHASH_MAX_SIDE = 100;

/** The picture averaged down (in blocks, alpha-weighted) until it fits THUMBHASH_MAX_SIDE². */
function shrink(image: RgbaImage): RgbaImage {
  const k = Math.ceil(Math.max(image.width, image.height) / THUMBHASH_MAX_SIDE);
  if (k <= 1) return image;
  const width = Math.ceil(image.width / k);
  const height = Math.ceil(image.height / k);
  const sums = new Float64Array(width * height * 5);
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const i = (y * image.width + x) * 4;
      const o = (((y / k) | 0) * width + ((x / k) | 0)) * 5;
      const a = image.data[i + 3]!;
      sums[o]! += image.data[i]! * a;
      sums[o + 1]! += image.data[i + 1]! * a;
      sums[o + 2]! += image.data[i + 2]! * a;
      sums[o + 3]! += a;
      sums[o + 4]! += 1;
    }
  }
  const data = new Uint8Array(width * height * 4);
  for (let p = 0; p < width * height; p++) {
    const a = sums[p * 5 + 3]!;
    for (let c = 0; c < 3; c++) data[p * 4 + c] = a > 0 ? Math.round(sums[p * 5 + c]! / a) : 0;
    data[p * 4 + 3] = Math.round(a / sums[p * 5 + 4]!);
  }
  return { data, width, height };
}

/** DC, normalised AC coefficients and their scale of one channel, over the triangle cx·ny < nx·(ny − cy). */
function encodeChannel(channel: Float64Array, w: number, h: number, nx: number, ny: number) {
  let dc = 0;
  let scale = 0;
  const ac: number[] = [];
  const fx = new Float64Array(w);
  for (let cy = 0; cy < ny; cy++) {
    for (let cx = 0; cx * ny < nx * (ny - cy); cx++) {
      for (let x = 0; x < w; x++) fx[x] = Math.cos((Math.PI / w) * cx * (x + 0.5));
      let f = 0;
      for (let y = 0; y < h; y++) {
        const fy = Math.cos((Math.PI / h) * cy * (y + 0.5));
        for (let x = 0; x < w; x++) f += channel[x + y * w]! * fx[x]! * fy;
      }
      f /= w * h;
      if (cx > 0 || cy > 0) {
        ac.push(f);
        scale = Math.max(scale, Math.abs(f));
      } else dc = f;
    }
  }
  if (scale > 0) for (let i = 0; i < ac.length; i++) ac[i] = 0.5 + (0.5 / scale) * ac[i]!;
  return { dc, ac, scale };
}

/** The ThumbHash of an RGBA picture (any size: it is averaged down first), as bytes. */
export function thumbHash(picture: RgbaImage): Uint8Array {
  const { data, width: w, height: h } = shrink(picture);
  const n = w * h;
  let avgR = 0;
  let avgG = 0;
  let avgB = 0;
  let avgA = 0;
  for (let i = 0; i < n * 4; i += 4) {
    const alpha = data[i + 3]! / 255;
    avgR += (alpha / 255) * data[i]!;
    avgG += (alpha / 255) * data[i + 1]!;
    avgB += (alpha / 255) * data[i + 2]!;
    avgA += alpha;
  }
  if (avgA > 0) {
    avgR /= avgA;
    avgG /= avgA;
    avgB /= avgA;
  }
  const hasAlpha = avgA < n;
  // Fewer luminance coefficients when alpha takes some of the bytes.
  const lLimit = hasAlpha ? 5 : 7;
  const lx = Math.max(1, Math.round((lLimit * w) / Math.max(w, h)));
  const ly = Math.max(1, Math.round((lLimit * h) / Math.max(w, h)));
  // Luminance, yellow–blue, red–green and alpha, each pixel composited onto the average colour.
  const l = new Float64Array(n);
  const p = new Float64Array(n);
  const q = new Float64Array(n);
  const a = new Float64Array(n);
  for (let i = 0, j = 0; i < n; i++, j += 4) {
    const alpha = data[j + 3]! / 255;
    const r = avgR * (1 - alpha) + (alpha / 255) * data[j]!;
    const g = avgG * (1 - alpha) + (alpha / 255) * data[j + 1]!;
    const b = avgB * (1 - alpha) + (alpha / 255) * data[j + 2]!;
    l[i] = (r + g + b) / 3;
    p[i] = (r + g) / 2 - b;
    q[i] = r - g;
    a[i] = alpha;
  }
  const L = encodeChannel(l, w, h, Math.max(3, lx), Math.max(3, ly));
  const P = encodeChannel(p, w, h, 3, 3);
  const Q = encodeChannel(q, w, h, 3, 3);
  const A = hasAlpha ? encodeChannel(a, w, h, 5, 5) : null;

  const landscape = w > h;
  const header24 =
    Math.round(63 * L.dc) |
    (Math.round(31.5 + 31.5 * P.dc) << 6) |
    (Math.round(31.5 + 31.5 * Q.dc) << 12) |
    (Math.round(31 * L.scale) << 18) |
    (Number(hasAlpha) << 23);
  const header16 =
    (landscape ? ly : lx) |
    (Math.round(63 * P.scale) << 3) |
    (Math.round(63 * Q.scale) << 9) |
    (Number(landscape) << 15);
  const channels = A ? [L.ac, P.ac, Q.ac, A.ac] : [L.ac, P.ac, Q.ac];
  const acCount = channels.reduce((sum, ac) => sum + ac.length, 0);
  const acStart = A ? 6 : 5;
  const hash = new Uint8Array(acStart + Math.ceil(acCount / 2));
  hash.set([header24 & 255, (header24 >> 8) & 255, header24 >> 16, header16 & 255, header16 >> 8]);
  if (A) hash[5] = Math.round(15 * A.dc) | (Math.round(15 * A.scale) << 4);
  let index = 0;
  for (const ac of channels) {
    for (const f of ac) {
      hash[acStart + (index >> 1)]! |= Math.round(15 * f) << ((index & 1) << 2);
      index++;
    }
  }
  return hash;
}
