// What the HEIC decoder (wasm/heicdec-engine.ts) holds while the rows are read out, from the container
// alone. One tile (a grid cell; the whole picture when it is not a grid) is decoded at a time: libde265's
// picture and its per-block state, and libheif's copy of the planes. A grid's tile is then converted to
// RGBA (16-bit RGB above 8 bits) and a grid of more than one column keeps a band of RGBA as wide as the
// picture and a tile high; a picture that is not a grid stays as libheif's planes, its rows converted one
// at a time (wasm/src/sr_heicdec.c).
import type { AvifInfo } from '../avif-input/structure.ts';

/**
 * A tile's peak per pixel, besides its samples: libde265's per-block state (prediction modes, motion,
 * deblocking flags) and what malloc leaves between the two decoders' allocations. Fitted with
 * `HEIC_BYTES_PER_SAMPLE_BYTE` to the module's growth decoding single-picture HEICs of 12 MP (4000×3000,
 * 8 and 10 bits, 4:2:0 and 4:4:4; `npx node test/bench/heicdec-memory.ts`, docs/image-engine.md "HEIC
 * decoder"): the measured peaks (4.70 bytes a pixel at 8-bit 4:2:0, 13.63 at 10-bit 4:4:4, the fixed part
 * taken off) fit 1.72 plus 1.99 a sample byte; rounded up to 2 and 2.25, every measurement is at least 12 %
 * under the plan.
 */
export const HEIC_TILE_BASE_BYTES_PER_PIXEL = 2;
/**
 * For each byte of samples a pixel holds (1.5 at 8-bit 4:2:0, 3 at 4:4:4, twice that above 8 bits): one in
 * libde265's picture, one in libheif's copy of it, which libheif makes because its libde265 plugin copies
 * the planes into its own image before the decoder is freed (no option hands libde265's planes over).
 */
export const HEIC_BYTES_PER_SAMPLE_BYTE = 2.25;
/**
 * A grid's tile converted by libheif to RGBA, per pixel: 4 bytes, and above 8 bits 16-bit RGB (6; 8 with
 * alpha), counted as 8. Measured on the whole-picture conversion (the same code as a tile's): 8.66 bytes a
 * pixel at 8-bit 4:2:0 and 19.57 at 10-bit 4:4:4 against the 9.4 and 23.5 these plan.
 */
export const HEIC_TILE_RGBA_BYTES_PER_PIXEL_8_BIT = 4;
export const HEIC_TILE_RGBA_BYTES_PER_PIXEL_HIGH_BIT = 8;
/** libheif's and libde265's fixed part: contexts, tables, the parsed boxes (estimated). */
export const HEIC_DECODER_FIXED_BYTES = 4 * 1024 * 1024;

/**
 * The largest HEIC that is one picture (not a grid of tiles) the plan admits at the default budget
 * (`DEFAULT_MEMORY_BUDGET_MB`), 8-bit 4:2:0, for a small output of any format: libheif decodes such a
 * picture whole and holds libde265's picture and its own copy of the planes at once (measured: a 12 MP one
 * grew the module by 58.3 MiB, 5.1 bytes a pixel; docs/image-engine.md, "HEIC decoder"), so a 12 MP camera's
 * (4000×3000) fits, JPEG output at full size too. A grid's decoder holds a tile row. The plan decides; this
 * is what its refusal names (test/worker/compress/heic-input.test.ts checks the two agree).
 */
export const HEIC_SINGLE_PICTURE_MAX_PIXELS = 16_300_000;

/** What a refusal for memory adds for a HEIC decoded whole: why, and the largest that fits. */
export function heicWholePictureNote(header: { heic?: { singlePicture: boolean } }): string {
  if (!header.heic?.singlePicture) return '';
  const mp = (HEIC_SINGLE_PICTURE_MAX_PIXELS / 1e6).toFixed(1);
  return ` (a HEIC that is one picture, not a grid of tiles, is decoded whole: at the default budget one of at most ${mp} MP fits; a phone's tiled HEIC is read a tile row at a time)`;
}

/** The decoder's peak while its rows are read, in bytes. */
export function heicDecoderBytes(info: AvifInfo): number {
  // CTBs are at most 64 pixels: libde265 pads its picture to them.
  const pad = (n: number): number => Math.ceil(n / 64) * 64;
  const { depth, monochrome, subX, subY } = info.av1;
  const high = depth > 8;
  const samples = monochrome ? 1 : 1 + 2 / ((subX ? 2 : 1) * (subY ? 2 : 1));
  const grid = info.cell.count > 1;
  const rgba = grid ? (high ? HEIC_TILE_RGBA_BYTES_PER_PIXEL_HIGH_BIT : HEIC_TILE_RGBA_BYTES_PER_PIXEL_8_BIT) : 0;
  const perPixel = HEIC_TILE_BASE_BYTES_PER_PIXEL + HEIC_BYTES_PER_SAMPLE_BYTE * samples * (high ? 2 : 1) + rgba;
  // A tile as coded (its SPS, heic-input/structure.ts), which may exceed its ispe by a conformance window.
  const coded = info.av1.size ?? { codedWidth: info.cell.width, codedHeight: info.cell.height };
  const width = pad(Math.max(info.cell.width, coded.codedWidth));
  const height = pad(Math.max(info.cell.height, coded.codedHeight));
  const tile = width * height * perPixel * (info.alpha ? 1.5 : 1);
  const columns = Math.ceil(info.codedWidth / info.cell.width);
  const band = grid && columns > 1 ? info.codedWidth * info.cell.height * 4 : 0;
  return Math.ceil(HEIC_DECODER_FIXED_BYTES + tile + band);
}
