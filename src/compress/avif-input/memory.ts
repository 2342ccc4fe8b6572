// What the AVIF decoder (wasm/avifdec-engine.ts) holds while the rows are read out, from the container
// alone: dav1d's picture of what one call decodes (the image, or one grid cell) in its own allocation
// (padded to 128 pixels each way), dav1d's frame state for that picture, and for a grid, libavif's
// picture of the whole image, into which the cells are copied one by one. An image with alpha decodes
// a second AV1 item (alpha is monochrome) beside it. Samples take 2 bytes above 8 bits. The constants
// were measured on this build (docs/image-engine.md, "AVIF input").
import type { AvifInfo } from './structure.ts';

/**
 * dav1d's frame state besides its picture, per (padded) pixel of the picture: block data, loop-filter and
 * CDEF lines, larger above 8 bits. Measured on a 13 MP photo (docs/image-engine.md, "AVIF decoder"): the
 * module grew to 27.5 MB for 8-bit 4:2:0 (a 20.3 MB picture: 0.45 a pixel besides) and to 104.4 MB for
 * 10-bit 4:4:4 (an 81 MB picture: 1.6); rounded up.
 */
export const DAV1D_STATE_BYTES_PER_PIXEL_8_BIT = 0.75;
export const DAV1D_STATE_BYTES_PER_PIXEL_HIGH_BIT = 2;
/** dav1d's fixed part: its contexts, tables and one tile's scratch (measured). */
export const DAV1D_FIXED_BYTES = 2 * 1024 * 1024;
/** sr_hdr.h's tables, for a picture above 8 bits or converted: 65,536 floats of code values and the curves. */
const HDR_TABLE_BYTES = 65_536 * 4 + 32 * 1024;
/** Rows the glue converts per call (AVIF_DECODE_BAND_ROWS), with a row either way, at most 8 bytes a pixel (16-bit RGBA for HDR). */
const BAND_BYTES_PER_COLUMN = 34 * 8 + 32 * 4;

const pad = (n: number): number => Math.ceil(n / 128) * 128;

/** One dav1d picture of width × height: luma, and chroma as subsampled. */
function pictureBytes(width: number, height: number, info: AvifInfo, mono: boolean): number {
  const sample = info.av1.depth > 8 ? 2 : 1;
  const luma = pad(width) * pad(height) * sample;
  if (mono || info.av1.monochrome) return luma;
  const chroma = (pad(width) >> (info.av1.subX ? 1 : 0)) * (pad(height) >> (info.av1.subY ? 1 : 0)) * sample;
  return luma + 2 * chroma;
}

/** The decoder's peak while its rows are read, in bytes. */
export function avifDecoderBytes(info: AvifInfo): number {
  const grid = info.cell.count > 1;
  const { width, height } = info.cell;
  const state =
    pad(width) *
    pad(height) *
    (info.av1.depth > 8 ? DAV1D_STATE_BYTES_PER_PIXEL_HIGH_BIT : DAV1D_STATE_BYTES_PER_PIXEL_8_BIT);
  const colour = pictureBytes(width, height, info, false) + state;
  const alpha = info.alpha ? pictureBytes(width, height, info, true) + state : 0;
  // A grid's cells go through one decoder, one at a time, into libavif's whole picture.
  const sample = info.av1.depth > 8 ? 2 : 1;
  const chromaShare = info.av1.monochrome ? 0 : 2 / ((info.av1.subX ? 2 : 1) * (info.av1.subY ? 2 : 1));
  const whole = grid ? info.codedWidth * info.codedHeight * sample * (1 + chromaShare + (info.alpha ? 1 : 0)) : 0;
  const decoders = grid ? Math.max(colour, alpha) : colour + alpha;
  return Math.ceil(DAV1D_FIXED_BYTES + HDR_TABLE_BYTES + decoders + whole + info.codedWidth * BAND_BYTES_PER_COLUMN);
}

/**
 * Reference pictures an AV1 sequence may keep (AV1's eight reference slots), each a distinct picture at
 * worst: what decoding a sequence's later frames holds besides the first frame's decoder.
 */
export const AV1_REFERENCE_PICTURES = 8;

/** What an image sequence's later frames add to the decoder's peak, in bytes. */
export function avifSequenceBytes(info: AvifInfo): number {
  const { width, height } = info.cell;
  const picture = pictureBytes(width, height, info, false) + (info.alpha ? pictureBytes(width, height, info, true) : 0);
  return AV1_REFERENCE_PICTURES * picture;
}
