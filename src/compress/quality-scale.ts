// One `quality` scale for every lossy output: the API's q (1–100) means the SSIMULACRA2 our JPEG reaches
// at q, whatever the format. JPEG's own scale is the reference (calibrated against MozJPEG,
// docs/image-engine.md "Quality scale"); WebP's and AVIF's encoders are given the number of their own
// scale that scores like our JPEG at q. The points are measured by `npm run bench -- quality-scale`
// (test/bench/quality-scale.ts) on the camera photos at width 2048; docs/image-engine.md "One quality
// scale" has the figures. A size target (`target_kb`) searches on the API's scale and maps each guess.
import type { ImageFormat } from './formats.ts';

/** An (API quality, encoder quality) point; the mapping is linear between points. */
export type QualityPoint = readonly [api: number, encoder: number];

/**
 * libwebp's quality (0–100) for the API's, linear between these points. libwebp at the same number
 * scores well below our JPEG (its q80 about 7 points lower), so the points sit higher.
 */
export const WEBP_QUALITY_POINTS: ReadonlyArray<QualityPoint> = [
  [1, 1],
  [60, 60],
  [80, 80],
  [90, 90],
  [100, 100],
];

/**
 * libavif's quality (0–100) for the API's, linear between these points. 100 stops at 98: libavif's 100
 * is lossless.
 */
export const AVIF_QUALITY_POINTS: ReadonlyArray<QualityPoint> = [
  [1, 1],
  [60, 56],
  [80, 76],
  [90, 94],
  [100, 98],
];

const POINTS: Partial<Record<ImageFormat, ReadonlyArray<QualityPoint>>> = {
  webp: WEBP_QUALITY_POINTS,
  avif: AVIF_QUALITY_POINTS,
};

/** `quality` (1–100) on `points`' encoder scale: linear between the points, rounded. */
export function mapQuality(points: ReadonlyArray<QualityPoint>, quality: number): number {
  const q = Math.max(1, Math.min(100, quality));
  for (let i = 1; i < points.length; i++) {
    const [q0, e0] = points[i - 1]!;
    const [q1, e1] = points[i]!;
    if (q <= q1) return Math.round(e0 + ((q - q0) * (e1 - e0)) / (q1 - q0));
  }
  return points[points.length - 1]![1];
}

/**
 * The number `format`'s encoder is given for the API's `quality` (X-Encoder-Quality): JPEG's scale is the
 * API's own; a format without a table (PNG's palette, whose quality is already its own measured one)
 * keeps the number as it is.
 */
export function encoderQuality(format: ImageFormat, quality: number): number {
  const points = POINTS[format];
  return points ? mapQuality(points, quality) : quality;
}
