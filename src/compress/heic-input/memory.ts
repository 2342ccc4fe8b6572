// What the HEIC decoder (wasm/heicdec-engine.ts) holds while the rows are read out, from the container
// alone. One tile (a grid cell; the whole picture when it is not a grid) is decoded at a time: libde265's
// picture and its per-block state, libheif's copy of the planes, and the tile converted to RGBA (16-bit
// RGB above 8 bits); a grid of more than one column also keeps a band of RGBA as wide as the picture and a
// tile high.
import type { AvifInfo } from '../avif-input/structure.ts';

/**
 * A tile's peak per pixel while it is decoded and converted, at 8 bits 4:2:0: libde265's picture (1.5)
 * and block state, libheif's planes (1.5), the RGBA tile (4) and libheif's conversion scratch. Measured on
 * this build (docs/image-engine.md, "HEIC decoder"): a 2048×1536 HEIC that is one picture grew the module
 * by 24.6 MB, 7.8 bytes a pixel; rounded up.
 */
export const HEIC_TILE_BYTES_PER_PIXEL_8_BIT = 9;
/**
 * The same above 8 bits: samples take 2 bytes in both decoders' planes, and the tile comes as 16-bit RGB
 * (6 bytes a pixel) to be dithered to 8 (wasm/src/sr_hdr.h). Measured: a 2048×1536 10-bit 4:2:0 HEIC that
 * is one picture grew the module by 43.9 MB, 14.65 bytes a pixel, tone-mapped or not. With alpha (16-bit
 * RGBA) not measured: the margin is meant to cover it.
 */
export const HEIC_TILE_BYTES_PER_PIXEL_HIGH_BIT = 18;
/** libheif's and libde265's fixed part: contexts, tables, the parsed boxes (estimated). */
export const HEIC_DECODER_FIXED_BYTES = 4 * 1024 * 1024;

/**
 * The largest HEIC that is one picture (not a grid of tiles) the plan admits at the default budget
 * (`DEFAULT_MEMORY_BUDGET_MB`), 8-bit 4:2:0, for a small output of any format: libheif decodes such a picture whole and
 * holds libde265's picture, its own copy and the whole RGBA picture at once (measured: a 13 MP one grew
 * the module by 108 MB, 8.7 bytes a pixel; docs/image-engine.md, "HEIC decoder"), so 12 MP ones (a 4000×3000
 * camera's) do not fit. A grid's decoder holds a tile row. The plan decides; this is what its refusal names
 * (test/worker/compress/heic-input.test.ts checks the two agree).
 */
export const HEIC_SINGLE_PICTURE_MAX_PIXELS = 9_600_000;

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
  const perPixel = info.av1.depth > 8 ? HEIC_TILE_BYTES_PER_PIXEL_HIGH_BIT : HEIC_TILE_BYTES_PER_PIXEL_8_BIT;
  const tile = pad(info.cell.width) * pad(info.cell.height) * perPixel * (info.alpha ? 1.5 : 1);
  const columns = Math.ceil(info.codedWidth / info.cell.width);
  const band = info.cell.count > 1 && columns > 1 ? info.codedWidth * info.cell.height * 4 : 0;
  return Math.ceil(HEIC_DECODER_FIXED_BYTES + tile + band);
}
