// What a HEIC declares about itself, read from its boxes before any pixel is decoded. HEIC is HEIF, the
// same ISO-BMFF item structure as AVIF, so AVIF input's reader (avif-input/structure.ts) reads it with
// HEVC's item type (`hvc1`) and configuration (`hvcC`): the primary item's size (`ispe`, cut by `clap`),
// `irot`/`imir`, a grid's tiles, alpha; and from the sequence parameter set (in `hvcC`, or in an item's
// data) the picture's coded size, bit depth and chroma, which size the decoder's memory.
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

/**
 * An HEVCDecoderConfigurationRecord (ISO/IEC 14496-15): the picture's size, chroma and bit depth as its
 * sequence parameter set codes them, which is what libde265 decodes (the record's own chroma and depth
 * fields, bytes 16 and 17, and `ispe` are only what the writer says).
 */
function hevcConfig(b: Uint8Array, box: Box): Av1Config {
  const { size, chroma, depth } = hevcSps(b, box);
  return { depth, monochrome: chroma === 0, subX: chroma === 1 || chroma === 2, subY: chroma === 1, size };
}

/** What the memory plan reads from an SPS: the picture's size, chroma_format_idc (3 with separate planes) and the larger bit depth. */
export interface Sps {
  size: NonNullable<Av1Config['size']>;
  chroma: number;
  depth: number;
}

const SPS_NAL_TYPE = 33;

/**
 * The sequence parameter set of an `hvcC` (several must agree): an `hvc1` item keeps its parameter sets
 * there (ISO/IEC 14496-15 8.4.1), and libheif hands them to libde265 ahead of the data.
 */
function hevcSps(b: Uint8Array, box: Box): Sps {
  // 22 bytes of fields, then numOfArrays; each array: its NAL unit type, a count, then each unit's length and bytes.
  need(box, 23);
  let at = box.start + 23;
  let found: Sps | null = null;
  const cut = (): never => {
    throw new AvifError('its HEVC configuration (hvcC) is truncated');
  };
  for (let array = 0, arrays = b[box.start + 22]!; array < arrays; array++) {
    if (at + 3 > box.end) cut();
    const count = (b[at + 1]! << 8) | b[at + 2]!;
    at += 3;
    for (let n = 0; n < count; n++) {
      if (at + 2 > box.end) cut();
      const length = (b[at]! << 8) | b[at + 1]!;
      at += 2;
      if (at + length > box.end) cut();
      const nal = b.subarray(at, at + length);
      at += length;
      // By its own header, as libde265 takes it (the array's type is only a label).
      if (length < 2 || ((nal[0]! >> 1) & 0x3f) !== SPS_NAL_TYPE) continue;
      const sps = readSps(nal);
      const same = (x: Sps) =>
        x.chroma === sps.chroma &&
        x.depth === sps.depth &&
        (Object.keys(x.size) as (keyof Sps['size'])[]).every((k) => x.size[k] === sps.size[k]);
      if (found && !same(found))
        throw new AvifError('its HEVC configuration (hvcC) holds sequence parameter sets that disagree');
      found = sps;
    }
  }
  // Without one in hvcC, an SPS in the picture's data would decide its size unseen; hvc1 does not allow that.
  if (!found) throw new AvifError('its HEVC configuration (hvcC) has no sequence parameter set');
  return found;
}

/**
 * An SPS NAL unit (ITU-T H.265 7.3.2.2): pic_width/height_in_luma_samples and the size inside its
 * conformance window, chroma_format_idc, the bit depths.
 */
export function readSps(nal: Uint8Array): Sps {
  // The payload without its emulation-prevention bytes (00 00 03 → 00 00, 7.4.2).
  const bytes: number[] = [];
  let zeros = 0;
  for (const x of nal) {
    if (zeros >= 2 && x === 3) {
      zeros = 0;
      continue;
    }
    zeros = x === 0 ? zeros + 1 : 0;
    bytes.push(x);
  }
  let bit = 0;
  const skip = (n: number): void => {
    bit += n;
    if (bit > bytes.length * 8) throw new AvifError('its sequence parameter set is cut short');
  };
  const u = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++) {
      skip(1);
      v = v * 2 + ((bytes[(bit - 1) >> 3]! >> (7 - ((bit - 1) & 7))) & 1);
    }
    return v;
  };
  // Exp-Golomb (9.2); 32 leading zeros or more is no value an SPS field can take.
  const ue = (): number => {
    let zeros = 0;
    while (u(1) === 0) if (++zeros > 31) throw new AvifError('its sequence parameter set is malformed');
    return 2 ** zeros - 1 + u(zeros);
  };
  skip(16); // the NAL unit header
  skip(4); // sps_video_parameter_set_id
  const subLayers = u(3); // sps_max_sub_layers_minus1
  skip(1); // sps_temporal_id_nesting_flag
  // profile_tier_level(1, sps_max_sub_layers_minus1), 7.3.3: the general profile (88 bits) and level.
  skip(88 + 8);
  const present = Array.from({ length: subLayers }, () => ({ profile: u(1), level: u(1) }));
  if (subLayers > 0) skip(2 * (8 - subLayers));
  for (const layer of present) skip((layer.profile ? 88 : 0) + (layer.level ? 8 : 0));
  ue(); // sps_seq_parameter_set_id
  const chroma = ue();
  if (chroma > 3) throw new AvifError(`its sequence parameter set has chroma format ${chroma}`);
  const separatePlanes = chroma === 3 ? u(1) : 0;
  const codedWidth = ue();
  const codedHeight = ue();
  let [width, height] = [codedWidth, codedHeight];
  if (u(1)) {
    // The window's offsets are in chroma samples (Table 6-1; separate planes code each as 4:0:0).
    const subWidth = !separatePlanes && (chroma === 1 || chroma === 2) ? 2 : 1;
    const subHeight = !separatePlanes && chroma === 1 ? 2 : 1;
    width -= subWidth * (ue() + ue());
    height -= subHeight * (ue() + ue());
  }
  if (codedWidth === 0 || codedHeight === 0 || width <= 0 || height <= 0)
    throw new AvifError(`its sequence parameter set codes a picture of ${width}×${height}`);
  const depth = 8 + Math.max(ue(), ue()); // bit_depth_luma_minus8, bit_depth_chroma_minus8
  if (depth > 16) throw new AvifError(`its sequence parameter set codes ${depth} bits a sample`);
  return { size: { width, height, codedWidth, codedHeight }, chroma, depth };
}

const CHROMA_NAMES = ['4:0:0', '4:2:0', '4:2:2', '4:4:4'];

/**
 * The picture size of every SPS in an item's HEVC data (NAL units, each after a length of
 * lengthSizeMinusOne + 1 bytes, hvcC byte 21): hvc1 allows none there, but libde265 would take one in
 * place of the hvcC's, so one coding a larger picture is refused as the hvcC's would be, and one of
 * another chroma or bit depth than the hvcC's (which the plan counts) is refused here.
 */
function hevcDataSizes(b: Uint8Array, config: Box, data: Uint8Array): NonNullable<Av1Config['size']>[] {
  need(config, 22);
  const lengthBytes = (b[config.start + 21]! & 3) + 1;
  const sizes: NonNullable<Av1Config['size']>[] = [];
  let configured: Sps | null = null;
  for (let at = 0; at + lengthBytes <= data.length; ) {
    let length = 0;
    for (let i = 0; i < lengthBytes; i++) length = length * 256 + data[at + i]!;
    at += lengthBytes;
    // A unit running past the data is the decoder's to refuse; it is no SPS read here.
    if (length >= 2 && at + length <= data.length && ((data[at]! >> 1) & 0x3f) === SPS_NAL_TYPE) {
      const sps = readSps(data.subarray(at, at + length));
      configured ??= hevcSps(b, config);
      if (sps.chroma !== configured.chroma || sps.depth !== configured.depth) {
        const coding = (x: Sps) => `${x.depth}-bit ${CHROMA_NAMES[x.chroma]}`;
        throw new AvifError(
          `its HEVC data has a sequence parameter set of ${coding(sps)}, not its hvcC's ${coding(configured)}`,
        );
      }
      sizes.push(sps.size);
    }
    at += length;
  }
  return sizes;
}

const HEVC = { item: 'hvc1', configBox: 'hvcC', name: 'HEVC', config: hevcConfig, dataSizes: hevcDataSizes };

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
