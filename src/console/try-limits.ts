// What "Try it" needs to warn before uploading an image the server would refuse: the pixel cap and the
// memory rule of whole-image inputs (PNG and WebP), as the server's vars and memory-plan.ts have them.
// The page's script repeats memory-plan.ts's estimate for those inputs; JPEG's depends on its encoding
// (progressive or not), which the browser does not know, so only the pixel cap is checked for it.
import type { CompressConfig } from '../compress/config.ts';
import { outputBytesPerPixel, REQUEST_BASE_BYTES, WHOLE_IMAGE_BYTES_PER_PIXEL } from '../compress/memory-plan.ts';

export interface TryLimits {
  maxInputPixels: number;
  memoryBudget: number;
  baseBytes: number;
  wholeImageBytesPerPixel: number;
  /** Output bytes per pixel by quality: [up to quality, bytes] in rising order. */
  outputBytesPerPixel: [number, number][];
}

export function tryLimits(config: CompressConfig): TryLimits {
  // memory-plan.ts's steps, sampled at its thresholds (85, 95, 100).
  const steps: [number, number][] = [85, 95, 100].map((q) => [q, outputBytesPerPixel(q)]);
  return {
    maxInputPixels: config.maxInputPixels,
    memoryBudget: config.memoryBudget,
    baseBytes: REQUEST_BASE_BYTES,
    wholeImageBytesPerPixel: WHOLE_IMAGE_BYTES_PER_PIXEL,
    outputBytesPerPixel: steps,
  };
}
