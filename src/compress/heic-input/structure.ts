// What a HEIC declares about itself, read from its boxes before any pixel is decoded. HEIC is HEIF, the
// same ISO-BMFF item structure as AVIF, so AVIF input's reader (avif-input/structure.ts) reads it with
// HEVC's item type (`hvc1`) and configuration (`hvcC`): the primary item's size (`ispe`, cut by `clap`),
// `irot`/`imir`, a grid's tiles, bit depth and chroma (which size the decoder's memory), alpha.
// Auxiliary images (depth maps, Apple's HDR gain map) and thumbnails are other items: tolerated, not read.
import {
  type Av1Config,
  AvifError,
  type AvifInfo,
  type Box,
  boxes,
  find,
  fourcc,
  need,
  readItems,
  u32,
} from '../avif-input/structure.ts';
import { HEIF_BRANDS } from '../formats.ts';

/** HEVCDecoderConfigurationRecord (ISO/IEC 14496-15): chroma_format_idc at byte 16, bit depth at 17. */
function hevcConfig(b: Uint8Array, box: Box): Av1Config {
  need(box, 18);
  const chroma = b[box.start + 16]! & 3;
  return {
    depth: (b[box.start + 17]! & 7) + 8,
    monochrome: chroma === 0,
    subX: chroma === 1 || chroma === 2,
    subY: chroma === 1,
  };
}

const HEVC = { item: 'hvc1', configBox: 'hvcC', name: 'HEVC', config: hevcConfig };

/** Reads the structure; throws AvifError (the HEIF reader's error) for a file it cannot make sense of. */
export function readHeicStructure(b: Uint8Array): AvifInfo {
  if (b.length < 16 || fourcc(b, 4) !== 'ftyp') throw new AvifError('it has no file type box');
  // As for AVIF: a file cut after its metadata still says what it is (the Try it planner sends only the
  // first bytes); the cut is its defect, refused when the file is whole.
  let defect: string | null = null;
  const top = boxes(b, 0, b.length, (why) => {
    defect = `the HEIC cannot be read: ${why}`;
  });
  const size = Math.min(u32(b, 0), b.length);
  const brands = [fourcc(b, 8)];
  for (let at = 16; at + 4 <= size; at += 4) brands.push(fourcc(b, at));
  if (!brands.some((x) => HEIF_BRANDS.includes(x))) throw new AvifError('its file type box names no HEIF brand');
  const meta = find(top, 'meta');
  if (!meta) throw new AvifError(defect ? 'it is truncated before its meta box ends' : 'it has no meta box');
  return { ...readItems(b, meta, HEVC), defect };
}
