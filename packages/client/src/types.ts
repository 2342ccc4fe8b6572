// The SDK's public types, derived from the generated ones (generated/openapi.ts) so they follow the
// service's OpenAPI document.
import type { Operations, Schemas } from './generated/openapi.ts';
import type { ShrinkrayError } from './errors.ts';

export type { Operations, Schemas };

type CompressBody = Operations['POST /api/v1/compress']['body'];

/**
 * PNG palette quantisation (the compress parts `palette`, `colors`). The document describes `palette` as the
 * multipart field it is (`"true"`/`"false"`); callers pass a boolean, sent as that text.
 */
export interface PaletteOptions {
  /** PNG output only: quantise to at most `colors` colours, with dithering, steered by quality. */
  palette?: boolean;
  /** 2 to 256 (default 256), with palette. */
  colors?: number;
  /** WebP output: lossless WebP. JPEG XL output of a JPEG: its own data re-coded, which `djxl` rebuilds byte for byte. */
  lossless?: boolean;
  /** false: an animation (GIF, WebP, AVIF sequence) gives its first frame even as WebP (by default WebP keeps the animation). */
  anim?: boolean;
}
type WithPalette<T> = Omit<T, keyof PaletteOptions> & PaletteOptions;

/**
 * The compress parameters of the OpenAPI document (quality, format, width, height, metadata, target_kb, palette,
 * …); `format=json` answers a description, not an image: that is `info()`.
 */
export type CompressParameters = WithPalette<Omit<CompressBody, 'image' | 'format'>> & { format?: FormatChoice };

export interface RequestOptions {
  /** Aborts the call (and any wait between retries). */
  signal?: AbortSignal;
  /** Per call, overriding the client's. */
  timeout?: number;
  maxRetries?: number;
  /** Called before each retry of this call, with the error and the wait in ms. */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  error: ShrinkrayError;
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  path: string;
}

export interface CompressOptions extends RequestOptions {
  /** The file name sent with the upload (the service derives Content-Disposition's name from it). */
  filename?: string;
}

/** What `format` may ask of compress: a format, or `keep` (the input's own). */
export type FormatChoice = Exclude<NonNullable<CompressBody['format']>, 'json'>;
/** What an output can be. */
export type OutputFormat = Exclude<FormatChoice, 'keep'>;

export interface RateLimit {
  limit: number | undefined;
  remaining: number | undefined;
  /** Unix seconds at which the binding window resets. */
  reset: number | undefined;
}

export interface CompressResult {
  /** The compressed image. */
  data: Uint8Array;
  contentType: string;
  format: OutputFormat | undefined;
  /** From Content-Disposition: the original stem with the output's extension. */
  filename: string | undefined;
  originalSize: number;
  compressedSize: number;
  /** (original − compressed) ÷ original × 100, one decimal; negative when a conversion grew the file. */
  savingsPercent: number;
  width: number | undefined;
  height: number | undefined;
  /** The quality used; undefined for lossless output (X-Quality: lossless). */
  quality: number | undefined;
  /**
   * The number the format's encoder was given for `quality`, on its own scale (X-Encoder-Quality): `quality`
   * means the same in every lossy format, so WebP's and AVIF's encoders get their own number for it; JPEG's
   * is `quality` itself. Undefined for lossless output.
   */
  encoderQuality: number | undefined;
  /**
   * The output keeps every pixel: PNG without a palette, lossless WebP, a JPEG re-coded as JPEG XL
   * (`lossless=true`), a never-bigger lossless rewrite.
   */
  lossless: boolean;
  /** With target_kb: whether the output fits. */
  targetReached: boolean | undefined;
  /**
   * A GIF, AVIF or animated WebP input (X-Frames): the frames written and the frames it has: `{ written: N,
   * total: N }` for an animation written as animated WebP, else `{ written: 1, total: N }`. Undefined for other inputs.
   */
  frames: { written: number; total: number } | undefined;
  /** When the image was cropped (fit cover or crop): the kept box in upright source pixels (X-Crop-Box). */
  cropBox: { x: number; y: number; width: number; height: number } | undefined;
  /**
   * With cropBox: the gravity that placed it (X-Gravity); `auto` when gravity `face` found no face, `center`
   * when gravity `auto` fell back to it.
   */
  gravity: string | undefined;
  /** With gravity `auto` or `face` and a crop: how sure the smart crop was, 0–1 (X-Crop-Confidence). */
  cropConfidence: number | undefined;
  requestId: string | undefined;
  rateLimit: RateLimit;
}

/** What `info()` answers: the image described (format=json), nothing encoded. */
export type ImageInfo = Schemas['ImageInfo'];

export interface InfoOptions extends RequestOptions {
  /** The file name sent with the upload. */
  filename?: string;
  /** `keep`: the EXIF summary includes the GPS position (left out otherwise). */
  metadata?: 'strip' | 'keep';
}

export type Account = Schemas['Account'];
export type MetaTagsResponse = Operations['GET /api/v1/meta-tags']['response'];
export type MetaTagsBulkResponse = Operations['POST /api/v1/meta-tags/bulk']['response'];
export type ToolListQuery = Operations['GET /api/v1/tools']['query'];
export type ToolList = Operations['GET /api/v1/tools']['response'];
export type ToolResponse = Operations['GET /api/v1/tools/{slug}']['response'];
export type CategoryList = Operations['GET /api/v1/categories']['response'];
export type QrQuery = Operations['GET /api/v1/qr']['query'];
export type QrResponse = Operations['GET /api/v1/qr']['response'];
export type Health = Operations['GET /api/v1/health']['response'];

/** Query values may be given as numbers too; they travel as text. */
export type Loose<T> = { [K in keyof T]: T[K] | (T[K] extends string | undefined ? number : never) };
