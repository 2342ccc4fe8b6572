// The codec calls the pipeline makes, by format. Loaded with a dynamic import so that only a request
// that compresses instantiates WebAssembly (and tools that merely build the app never load it).
import type { RgbaImage } from '../../wasm/image.ts';
import { decodeJpeg, encodeJpeg } from '../../wasm/jpeg.ts';
import { decodePng, encodeOptimisedPng } from '../../wasm/png.ts';
import { resizeImage } from '../../wasm/resize.ts';
import { decodeWebp, encodeWebp } from '../../wasm/webp.ts';
import { jpegOptions, PNG_OPTIMISE_LEVEL, webpOptions } from './encoders.ts';
import type { ImageFormat } from './formats.ts';

export function decode(format: ImageFormat, bytes: Uint8Array): RgbaImage {
  switch (format) {
    case 'jpeg':
      return decodeJpeg(bytes);
    case 'png':
      return decodePng(bytes);
    case 'webp':
      return decodeWebp(bytes);
  }
}

/** Lossy formats take the quality; PNG ignores it (lossless, then optimised by oxipng). */
export function encode(format: ImageFormat, image: RgbaImage, quality: number): Uint8Array {
  switch (format) {
    case 'jpeg':
      return encodeJpeg(image, jpegOptions(quality));
    case 'webp':
      return encodeWebp(image, webpOptions(quality));
    case 'png':
      return encodeOptimisedPng(image, PNG_OPTIMISE_LEVEL);
  }
}

/** Lanczos3 on sRGB values; alpha-weighted when the image has transparency, so edges do not darken. */
export function resize(image: RgbaImage, width: number, height: number, premultiply: boolean): RgbaImage {
  return resizeImage(image, width, height, { filter: 'lanczos3', premultiply, linearRgb: false });
}
