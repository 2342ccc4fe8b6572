// PNG decode and encode (@jsquash/png) and lossless optimisation (@jsquash/oxipng), both wasm-bindgen
// builds run through our own host so their instances can be replaced (see bindgen.ts).
import oxipngWasm from '@jsquash/oxipng/codec/pkg/squoosh_oxipng_bg.wasm';
import pngWasm from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm';
import { BindgenInstance } from './bindgen.ts';
import { bytesOf, rgbaImage, type RgbaImage } from './image.ts';
import { Slot } from './instances.ts';

const png = new Slot('png', () => new BindgenInstance(pngWasm));
const oxipng = new Slot('oxipng', () => new BindgenInstance(oxipngWasm));

/** Decodes any PNG (palette, grey, 16-bit, interlaced) to 8-bit RGBA. */
export function decodePng(bytes: Uint8Array): RgbaImage {
  const image = png.run((codec) => codec.callReturningObject<RgbaImage>('decode', bytes));
  return rgbaImage(image.data, image.width, image.height);
}

/** Encodes 8-bit RGBA pixels, row-major, as a PNG. */
export function encodePng(rgba: Uint8ClampedArray | Uint8Array, width: number, height: number): Uint8Array {
  const image = rgbaImage(bytesOf(rgba), width, height);
  return png.run((codec) => codec.callReturningBytes('encode', image.data, width, height, 8));
}

/**
 * Writes RGBA pixels straight to an optimised PNG with oxipng (level 0–6): it picks the smallest
 * colour type that keeps every pixel exact (grey, RGB without alpha, palette), with no intermediate PNG.
 */
export function encodeOptimisedPng(image: RgbaImage, level: number): Uint8Array {
  return oxipng.run((codec) =>
    codec.callReturningBytes('optimise_raw', image.data, image.width, image.height, level, 0, 0),
  );
}

/**
 * Re-compresses a PNG with oxipng (level 0–6), losslessly: pixels, including alpha, are kept exactly
 * (no interlacing, no alpha optimisation that would change hidden colours).
 */
export function optimisePng(bytes: Uint8Array, level: number): Uint8Array {
  return oxipng.run((codec) => codec.callReturningBytes('optimise', bytes, level, 0, 0));
}
