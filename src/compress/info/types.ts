// Image info (`format=json` on POST /compress, `f=json` on image URLs): what a caller asks and what it gets,
// the answer's fields named as the API writes them. A leaf: types and the one constant.
import type { InputFormat } from '../formats.ts';
import type { MetadataMode } from '../metadata.ts';
import type { IccSummary } from './icc.ts';
import type { ExifSummary } from './exif-summary.ts';

/** The `format` (image URLs: `f`) that asks for the description instead of an image. */
export const INFO_FORMAT = 'json';

export interface InfoRequest {
  format: typeof INFO_FORMAT;
  bytes: Uint8Array;
  /** keep: the EXIF summary includes the GPS position. */
  metadata: MetadataMode;
}

export interface ImageInfo {
  /** Upright: after EXIF orientation, as the compressed image would be. */
  width: number;
  height: number;
  format: InputFormat;
  bytes: number;
  /** The EXIF orientation, 1–8 (1 when the file has none). */
  orientation: number;
  /** The file has an alpha channel or transparency (PNG tRNS): whether a pixel is actually transparent is not checked. */
  has_alpha: boolean;
  /** Bits per sample: JPEG 8 or 12, PNG 1–16 (a palette image: its palette's 8), WebP 8. */
  bit_depth: number;
  icc: IccSummary | null;
  /** The picture carries more than SDR: a gain map, or the PQ or HLG transfer in a PNG cICP or an ICC cicp tag. */
  hdr: boolean;
  /** A JPEG with a gain map (Ultra HDR, ISO 21496-1) after its primary image. */
  gain_map: boolean;
  /** 1 for a still image; an APNG's frame count. */
  frames: number;
  /** An animation's total duration; null for a still image. */
  duration_ms: number | null;
  /** An animation's loop count (0: forever); null for a still image. */
  loop: number | null;
  /** null when the file has no EXIF. */
  exif: ExifSummary | null;
  /**
   * "#rrggbb" of the preview's most common colour; null when every pixel is transparent, or when the picture
   * cannot be previewed within the memory budget.
   */
  dominant_color: string | null;
  /** ThumbHash of the preview, base64 (at most 40 bytes decoded); null when there is no preview (as above). */
  thumbhash: string | null;
}

export interface InfoResult {
  info: ImageInfo;
  timings: { preview: number };
}
