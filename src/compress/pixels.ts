// Pixel operations done in JavaScript on RGBA buffers: EXIF orientation, alpha checks, flattening.
import type { RgbaImage } from '../../wasm/image.ts';
import { swapsAxes, type Orientation } from './exif.ts';

/**
 * Turns stored pixels upright as the EXIF orientation says (1 = already upright). Mirror-only
 * orientations work in place; the others need one new buffer.
 */
export function applyOrientation(image: RgbaImage, orientation: Orientation): RgbaImage {
  if (orientation === 1) return image;
  const { width: w, height: h } = image;
  // A 32-bit view needs 4-byte alignment; the codecs' buffers always have it.
  if (image.data.byteOffset % 4 !== 0) image = { ...image, data: image.data.slice() };
  const src = new Uint32Array(image.data.buffer, image.data.byteOffset, w * h);
  if (orientation === 2 || orientation === 4) {
    if (orientation === 2) for (let y = 0; y < h; y++) src.subarray(y * w, (y + 1) * w).reverse();
    else for (let y = 0; y < h >> 1; y++) swapRows(src, w, y, h - 1 - y);
    return image;
  }
  if (orientation === 3) {
    src.reverse();
    return image;
  }
  const outW = swapsAxes(orientation) ? h : w;
  const outH = swapsAxes(orientation) ? w : h;
  const out = new Uint32Array(outW * outH);
  // For each upright pixel (x, y), the stored pixel it comes from.
  for (let y = 0; y < outH; y++) {
    const row = y * outW;
    for (let x = 0; x < outW; x++) {
      let sx: number;
      let sy: number;
      switch (orientation) {
        case 5:
          sx = y;
          sy = x;
          break;
        case 6:
          sx = y;
          sy = h - 1 - x;
          break;
        case 7:
          sx = w - 1 - y;
          sy = h - 1 - x;
          break;
        default:
          sx = w - 1 - y;
          sy = x;
          break; // 8
      }
      out[row + x] = src[sy * w + sx]!;
    }
  }
  return { data: new Uint8Array(out.buffer), width: outW, height: outH };
}

function swapRows(pixels: Uint32Array, width: number, a: number, b: number): void {
  const rowA = pixels.subarray(a * width, (a + 1) * width);
  const copy = rowA.slice();
  rowA.set(pixels.subarray(b * width, (b + 1) * width));
  pixels.set(copy, b * width);
}

/** Whether any pixel is less than fully opaque. */
export function hasTransparency(image: RgbaImage): boolean {
  const data = image.data;
  for (let i = 3; i < data.length; i += 4) if (data[i] !== 255) return true;
  return false;
}

/** Composites the pixels onto white, in place, and makes them opaque (JPEG has no alpha). */
export function flattenOntoWhite(image: RgbaImage): void {
  const data = image.data;
  for (let i = 0; i < data.length; i += 4) {
    const alpha = data[i + 3]!;
    if (alpha === 255) continue;
    const white = 255 * (255 - alpha);
    data[i] = Math.round((data[i]! * alpha + white) / 255);
    data[i + 1] = Math.round((data[i + 1]! * alpha + white) / 255);
    data[i + 2] = Math.round((data[i + 2]! * alpha + white) / 255);
    data[i + 3] = 255;
  }
}
