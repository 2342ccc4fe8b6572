// The one whole-frame codec call left in the paths: JPEG output of a PNG with `target_kb`, whose
// retries encode the gathered frame again, by the engine's encoder fed the pixels at once. Every other
// pair streams rows (jpeg-path.ts, webp-path.ts, png/png-path.ts). Loaded with a dynamic import so that
// only a request that compresses instantiates WebAssembly.
import type { RgbaImage } from '../../wasm/image.ts';
import { encodePixelsJpeg } from '../../wasm/jpeg-engine.ts';
import { FULL_CHROMA_QUALITY } from './limits.ts';
import type { JpegMarker } from '../../wasm/jpeg-engine.ts';

/** The frame (opaque RGBA) as a progressive JPEG at `quality`. */
export function encodeJpegFrame(image: RgbaImage, quality: number, markers: JpegMarker[] = []): Uint8Array {
  const rgb = new Uint8Array(image.width * image.height * 3);
  for (let i = 0, o = 0; o < rgb.length; i += 4, o += 3) {
    rgb[o] = image.data[i]!;
    rgb[o + 1] = image.data[i + 1]!;
    rgb[o + 2] = image.data[i + 2]!;
  }
  return encodePixelsJpeg(rgb, image.width, image.height, 3, {
    quality,
    sampling: quality >= FULL_CHROMA_QUALITY ? [1, 1] : [2, 2],
    progressive: true,
    markers,
  });
}
