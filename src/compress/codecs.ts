// The whole-frame codec calls of the paths: PNG decoding for the small-output optimiser, WebP output (lossy or lossless)
// through the WebP engine's row-fed encoder, and JPEG output of such images through the engine's encoder. Loaded with a dynamic import so that only a
// request that compresses instantiates WebAssembly (and tools that merely build the app never load it).
import type { RgbaImage } from '../../wasm/image.ts';
import { encodePixelsJpeg } from '../../wasm/jpeg-engine.ts';
import { decodePng, encodeOptimisedPng } from '../../wasm/png.ts';
import { resizeImage } from '../../wasm/resize.ts';
import { encodeRowsWebp } from '../../wasm/webp-engine.ts';
import { PNG_OPTIMISE_LEVEL } from './encoders.ts';
import type { ImageFormat } from './formats.ts';
import { FULL_CHROMA_QUALITY } from './jpeg-path.ts';
import { WEBP_LOSSLESS_EFFORT } from './limits.ts';

/** PNG input (WebP input goes through the WebP engine, webp-path.ts). */
export function decode(format: 'png', bytes: Uint8Array): RgbaImage {
  return decodePng(bytes);
}

/**
 * Lossy formats take the quality; PNG ignores it (lossless, then optimised by oxipng), as does lossless
 * WebP. JPEG wants opaque pixels.
 */
export function encode(format: ImageFormat, image: RgbaImage, quality: number, lossless = false): Uint8Array {
  switch (format) {
    case 'jpeg':
      return encodePixelsJpeg(rgbOf(image), image.width, image.height, 3, {
        quality, sampling: quality >= FULL_CHROMA_QUALITY ? [1, 1] : [2, 2], progressive: true,
      });
    case 'webp':
      // The WebP engine's encoder, fed the rows at once: its picture is YUV, not a second RGBA copy.
      return encodeRowsWebp(image.width, image.height, { channels: 4, quality: lossless ? WEBP_LOSSLESS_EFFORT : quality, lossless }, (push) => push(image.data)).bytes;
    case 'png':
      return encodeOptimisedPng(image, PNG_OPTIMISE_LEVEL);
  }
}

function rgbOf(image: RgbaImage): Uint8Array {
  const rgb = new Uint8Array(image.width * image.height * 3);
  for (let i = 0, o = 0; o < rgb.length; i += 4, o += 3) {
    rgb[o] = image.data[i]!;
    rgb[o + 1] = image.data[i + 1]!;
    rgb[o + 2] = image.data[i + 2]!;
  }
  return rgb;
}

/** Lanczos3 on sRGB values; alpha-weighted when the image has transparency, so edges do not darken. */
export function resize(image: RgbaImage, width: number, height: number, premultiply: boolean): RgbaImage {
  return resizeImage(image, width, height, { filter: 'lanczos3', premultiply, linearRgb: false });
}
