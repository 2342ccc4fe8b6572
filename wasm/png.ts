// PNG encoding and lossless optimisation. The codecs are compiled into the Worker bundle (nothing is
// fetched at run time) and instantiated once per isolate, on first use.
//
// The wasm-bindgen glue is used directly rather than @jsquash's wrappers: the encode wrapper reads
// `data.buffer` whole (wrong for a view into a larger buffer), and the optimise wrapper pulls in
// feature detection and a multi-threaded build that a Worker can never use.
import initPng, { encode } from '@jsquash/png/codec/pkg/squoosh_png.js';
import pngModule from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm';
import initOxipng, { optimise } from '@jsquash/oxipng/codec/pkg/squoosh_oxipng.js';
import oxipngModule from '@jsquash/oxipng/codec/pkg/squoosh_oxipng_bg.wasm';

/**
 * Runs `start` once per isolate and shares its promise. A failed instantiation is not kept, so the
 * next request tries again.
 */
function once(start: () => Promise<unknown>): () => Promise<unknown> {
  let ready: Promise<unknown> | undefined;
  return () =>
    (ready ??= start().catch((error: unknown) => {
      ready = undefined;
      throw error;
    }));
}

/** Instantiates the PNG codec; shared with anything else that uses the same glue (e.g. its decoder). */
export const initPngCodec = once(() => initPng(pngModule));
const initOxipngCodec = once(() => initOxipng(oxipngModule));

/** Encodes 8-bit RGBA pixels, row-major, as a PNG. */
export async function encodePng(rgba: Uint8ClampedArray | Uint8Array, width: number, height: number): Promise<Uint8Array> {
  if (rgba.length !== width * height * 4) {
    throw new RangeError(`expected ${width * height * 4} RGBA bytes for ${width}×${height}, got ${rgba.length}`);
  }
  await initPngCodec();
  const bytes = rgba instanceof Uint8Array ? rgba : new Uint8Array(rgba.buffer, rgba.byteOffset, rgba.byteLength);
  return encode(bytes, width, height, 8);
}

/** Re-compresses a PNG with oxipng (level 0–6), losslessly: pixels, including alpha, are kept exactly. */
export async function optimisePng(png: Uint8Array, level: number): Promise<Uint8Array> {
  await initOxipngCodec();
  return optimise(png, level, false, false);
}
