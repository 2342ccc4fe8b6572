// One `quality` scale for every lossy output: the API's q (1–100) means the SSIMULACRA2 our JPEG reaches
// at q, whatever the format. JPEG's own scale is the reference (calibrated against MozJPEG,
// docs/image-engine.md "Quality scale"); WebP's and AVIF's encoders are given the number of their own
// scale that scores like our JPEG at q. The points are measured by `npm run bench -- quality-scale`
// (test/bench/quality-scale.ts) on the camera photos at width 2048; docs/image-engine.md "One quality
// scale" has the figures. A size target (`target_kb`) searches on the API's scale and maps each guess.
import type { ImageFormat } from './formats.ts';
import { WEBP_LOSSLESS_EFFORT } from './limits.ts';

/** An (API quality, encoder quality) point; the mapping is linear between points. */
export type QualityPoint = readonly [api: number, encoder: number];

/**
 * libwebp's quality (0–100) for the API's, linear between these points: each the libwebp quality whose
 * median SSIMULACRA2 difference to our JPEG at q is nearest 0 (searched on 6 photos, confirmed on 31).
 * At the same number libwebp scored 2–5 points below our JPEG. Not measured below 60: 1 stays 1.
 */
export const WEBP_QUALITY_POINTS: ReadonlyArray<QualityPoint> = [
  [1, 1],
  [60, 66],
  [80, 85],
  [90, 93],
  [100, 100],
];

/**
 * libavif's quality (0–100) for the API's, linear between these points, found as WebP's were (with the
 * service's speed and options, wasm/avif-settings.ts). The points before (60 → 56, 80 → 76, 90 → 94,
 * measured against a JPEG that has since moved) scored 3–5 points above our JPEG. Searched again for
 * pictures coded at 10 bits (AVIF_DEPTH), which score higher at the same number: 90 → 81 (was 86; 60 stays
 * 51); 80 → 66, whose median difference on all 31 camera photos is −0.50 against 67's +0.61 (67 was
 * nearest 0 on the 6 search photos). libavif's quality moves libaom's quantizer in whole steps (66 and 67
 * are neighbours), so no point in between exists. 100 stops at 98: libavif's 100 is lossless.
 */
export const AVIF_QUALITY_POINTS: ReadonlyArray<QualityPoint> = [
  [1, 1],
  [60, 51],
  [80, 66],
  [90, 81],
  [100, 98],
];

/**
 * libjxl's butteraugli distance (lower is better: 1 is about visually lossless) for the API's quality,
 * linear between these points: each the distance whose median SSIMULACRA2 difference to our JPEG at q is
 * near 0 on all 31 camera photos at width 2048 (effort JXL_EFFORT, with the module's flatter quantisation
 * field and finer DC, wasm/patches/jxl/02): q60 4.15, q80 2.53, q90 1.27, found with libjxl built natively
 * with the same patch at four to six distances a photo and measured with the module
 * (docs/experiments/jxl.md, "A flatter field and a finer DC"). The patch raises the score at a given
 * distance, so the points are higher than libjxl's own (cjxl's `-q` 60/80/90: 3.7, 1.9, 1.0). libjxl's
 * edge-preserving filter takes a third pass from distance 4, which costs about 1.5 points at once: q60's
 * point lies above that step. Not measured below 60; 100 stops short of 0, which is lossless.
 */
export const JXL_DISTANCE_POINTS: ReadonlyArray<QualityPoint> = [
  [1, 15],
  [60, 4.15],
  [80, 2.53],
  [90, 1.27],
  [100, 0.1],
];

const POINTS: Partial<Record<ImageFormat, ReadonlyArray<QualityPoint>>> = {
  webp: WEBP_QUALITY_POINTS,
  avif: AVIF_QUALITY_POINTS,
};

/**
 * `quality` (1–100) on `points`' encoder scale: linear between the points, rounded to `decimals` (libjxl's
 * distance is a fraction).
 */
export function mapQuality(points: ReadonlyArray<QualityPoint>, quality: number, decimals = 0): number {
  const q = Math.max(1, Math.min(100, quality));
  const unit = 10 ** decimals;
  for (let i = 1; i < points.length; i++) {
    const [q0, e0] = points[i - 1]!;
    const [q1, e1] = points[i]!;
    if (q <= q1) return Math.round((e0 + ((q - q0) * (e1 - e0)) / (q1 - q0)) * unit) / unit;
  }
  return points[points.length - 1]![1];
}

/**
 * The number `format`'s encoder is given for the API's `quality` (X-Encoder-Quality): JPEG's scale is the
 * API's own; a format without a table (PNG's palette, whose quality is already its own measured one)
 * keeps the number as it is.
 */
export function encoderQuality(format: ImageFormat, quality: number): number {
  if (format === 'jxl') return mapQuality(JXL_DISTANCE_POINTS, quality, 2);
  const points = POINTS[format];
  return points ? mapQuality(points, quality) : quality;
}

/** libwebp's `quality` argument: the mapped quality for a lossy encode, the effort for a lossless one. */
export const webpQualityArgument = (quality: number, lossless: boolean): number =>
  lossless ? WEBP_LOSSLESS_EFFORT : encoderQuality('webp', quality);
