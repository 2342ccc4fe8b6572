// What the AVIF decoder (wasm/avifdec-engine.ts) holds while the rows are read out, from the container
// alone: dav1d's picture of what one call decodes (the image, or one grid cell) in its own allocation
// (padded to 128 pixels each way), dav1d's frame state for that picture, and for a grid, libavif's
// picture of the whole image, into which the cells are copied one by one. An image with alpha decodes
// a second AV1 item (alpha is monochrome) beside it. Samples take 2 bytes above 8 bits. The parts follow
// dav1d 1.5.1's allocations and were checked against the module's memory (docs/image-engine.md, "AVIF
// decoder"; `npx node test/bench/avifdec-memory.ts`).
import type { AvifInfo } from './structure.ts';

/**
 * dav1d's frame state besides its picture that grows with the picture (decode.c
 * dav1d_decode_frame_init), per padded pixel whatever the depth: the loop filter's masks (1,348 bytes
 * per 128 × 128) and levels (4 bytes per 4 × 4), the segmentation map (1 byte per 4 × 4) and intra
 * block copy's motion vectors (5 bytes per 8 × 8) where the frame uses them, the restoration units: 0.48.
 */
export const DAV1D_BLOCK_STATE_BYTES_PER_PIXEL = 0.5;
/**
 * And rows of samples kept per superblock row (at 64-pixel superblocks; 128-pixel ones keep half per
 * pixel): CDEF's saved lines, 4 luma rows and 8 chroma rows at the chroma planes' stride, and the intra
 * edge, 3 rows. With the block state, 0.67 bytes a padded pixel for 8-bit 4:2:0 up to 0.97 for 10-bit
 * 4:4:4, against 0.31–0.50 and 0.44–0.51 measured (the module's memory less its initial 2 MiB, the
 * file, the picture and the rows; avifenc's and sharp's files at 3, 12 and 24 MP, 2026-11-29): the
 * margin is what those files leave unused (128-pixel superblocks, intra block copy). It replaces 0.75 a
 * pixel at 8 bits and 2 above, fitted to one 13 MP file whose 10-bit module this build measures at
 * 88.0 MB, not the 104.4 then.
 */
const DAV1D_LINE_ROWS = 4 + 3;
const DAV1D_CHROMA_LINE_ROWS = 8;
const DAV1D_SUPERBLOCK_ROWS = 64;
/** dav1d's fixed part: its contexts, tables and one tile's scratch, within the module's initial 2 MiB (measured). */
export const DAV1D_FIXED_BYTES = 2 * 1024 * 1024;
/** sr_hdr.h's tables, for a picture above 8 bits or converted: 65,536 floats of code values and the curves. */
const HDR_TABLE_BYTES = 65_536 * 4 + 32 * 1024;
/** Rows the glue converts per call (AVIF_DECODE_BAND_ROWS), with a row either way, at most 8 bytes a pixel (16-bit RGBA for HDR). */
const BAND_BYTES_PER_COLUMN = 34 * 8 + 32 * 4;

const pad = (n: number): number => Math.ceil(n / 128) * 128;
/** dav1d widens a stride that is a multiple of 1024 bytes by 64 (picture.c: cache sets). */
const stride = (bytes: number): number => (bytes % 1024 === 0 ? bytes + 64 : bytes);

/** One dav1d picture of width × height: luma, and chroma as subsampled. */
function pictureBytes(width: number, height: number, info: AvifInfo, mono: boolean): number {
  const sample = info.av1.depth > 8 ? 2 : 1;
  const luma = stride(pad(width) * sample) * pad(height);
  if (mono || info.av1.monochrome) return luma;
  const chroma = stride((pad(width) >> (info.av1.subX ? 1 : 0)) * sample) * (pad(height) >> (info.av1.subY ? 1 : 0));
  return luma + 2 * chroma;
}

/** dav1d's frame state for a picture of width × height (DAV1D_BLOCK_STATE_BYTES_PER_PIXEL and its lines). */
function stateBytes(width: number, height: number, info: AvifInfo, mono: boolean): number {
  const sample = info.av1.depth > 8 ? 2 : 1;
  const chromaStride = mono || info.av1.monochrome ? 0 : info.av1.subX ? 0.5 : 1;
  const lines = (sample * (DAV1D_LINE_ROWS + DAV1D_CHROMA_LINE_ROWS * chromaStride)) / DAV1D_SUPERBLOCK_ROWS;
  return pad(width) * pad(height) * (DAV1D_BLOCK_STATE_BYTES_PER_PIXEL + lines);
}

/** The decoder's peak while its rows are read, in bytes. */
export function avifDecoderBytes(info: AvifInfo): number {
  const grid = info.cell.count > 1;
  const { width, height } = info.cell;
  const colour = pictureBytes(width, height, info, false) + stateBytes(width, height, info, false);
  const alpha = info.alpha ? pictureBytes(width, height, info, true) + stateBytes(width, height, info, true) : 0;
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
