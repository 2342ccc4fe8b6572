// The compression use case's contract: what a caller asks (`CompressRequest`), what it gets back
// (`CompressResult`), and the shape of a source format's path. A leaf: types only, so the pipeline, its
// paths and their callers all read it without reaching each other.
import type { Orientation } from './exif.ts';
import type { ImageFormat, InputFormat } from './formats.ts';
import type { Plan } from './memory-plan.ts';
import type { MetadataMode } from './metadata.ts';
import type { Box } from './transform/geometry.ts';
import type { Transform } from './transform/options.ts';

export interface CompressRequest {
  bytes: Uint8Array;
  format: ImageFormat;
  quality: number;
  width?: number;
  height?: number;
  targetKb?: number;
  metadata?: MetadataMode;
  /** PNG output quantised to a palette of at most `colors` (the fewest that reach `quality`). */
  palette?: boolean;
  colors?: number;
  /** WebP output written lossless (every pixel kept). */
  lossless?: boolean;
  /** An animation (GIF, WebP, AVIF sequence) to WebP keeps its frames unless false (anim=false: the first frame). */
  anim?: boolean;
  /** Fit, gravity, rotate, flip, background (transform/); undefined when only a resize was asked. */
  transform?: Transform;
  /** Set by the pipeline, not the caller: a JPEG's HDR gain map, ready to be written into AVIF output (gain-map/avif.ts). */
  avifGainMap?: AvifGainMapInput;
}

/** A gain map's pixels at the output's geometry and its ISO 21496-1 numbers, for the AVIF encoder. */
export interface AvifGainMapInput {
  pixels: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 3;
  /** Min, max and gamma per channel (log2, log2, linear), base and alternate offsets per channel, base and alternate headroom (log2). */
  metadata: number[];
  /** libavif's quality for the map. */
  quality: number;
}

export interface CompressResult {
  bytes: Uint8Array;
  inputFormat: InputFormat;
  format: ImageFormat;
  width: number;
  height: number;
  /**
   * The quality used (X-Quality); `lossless` where none was: PNG output without a palette, lossless WebP,
   * the never-bigger lossless rewrite (a palette PNG gives the palette's measured quality).
   */
  quality: number | 'lossless';
  /** Set when `targetKb` was given. */
  targetReached?: boolean;
  encodes: number;
  /** Whether the lossless rewrite replaced a lossy result that was not smaller (the never-bigger rule). */
  lossless: boolean;
  /** Set when the input had an HDR gain map: written after the picture (kept) or not (dropped). */
  gainMap?: 'kept' | 'dropped';
  /** Milliseconds per phase. */
  timings: { decode: number; resize: number; encode: number };
  /** An animation or a GIF: frames written (1, or all of them as animated WebP) of the frames it has (X-Frames). */
  frames?: { written: number; total: number };
  /**
   * Where the image was cropped, in upright source pixels (X-Crop-Box), the gravity that placed it
   * (X-Gravity), and with gravity=auto how sure the smart crop was, 0–1 (X-Crop-Confidence).
   */
  crop?: { box: Box; gravity: string; confidence?: number };
}

/**
 * The pipeline's answer: a path's result and the number its encoder was given for `quality`, on the
 * encoder's own scale (X-Encoder-Quality, quality-scale.ts): the same as `quality` for JPEG and a palette
 * PNG, `lossless` where `quality` is. Set once, by the pipeline, from the format and quality.
 */
export interface CompressedImage extends CompressResult {
  encoderQuality: number | 'lossless';
}

/** A source format's path (jpeg-path.ts, webp-path.ts): the request, its plan, the source's orientation, the metadata mode. */
export type SourcePath = (
  request: CompressRequest,
  plan: Plan,
  orientation: Orientation,
  metadata: MetadataMode,
) => Promise<CompressResult>;
