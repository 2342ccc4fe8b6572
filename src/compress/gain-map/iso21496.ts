// ISO 21496-1's gain map metadata, read from the binary block a JPEG's gain map carries in its APP2 after
// the URN (the primary's block holds only the two versions). The layout, as libultrahdr writes and reads it
// in JPEG (libavif's 'tmap' item has the same, without the common denominator), all big-endian:
//   u16 minimum_version, u16 writer_version, u8 flags: bit 7 is_multichannel (3 sets of per-channel values,
//   else 1 for all channels), bit 6 use_base_colour_space, bit 3 common denominator, bit 2 backward
//   direction (libultrahdr's: the base is the HDR rendition);
//   then either u32 denominator, u32 base headroom, u32 alternate headroom and per channel s32 min, s32 max,
//   u32 gamma, s32 base offset, s32 alternate offset (numerators over that one denominator),
//   or each of those as its own numerator and u32 denominator, in the same order.
// Headrooms and min/max are log2; gamma and the offsets linear. Bytes after the last channel are a later
// writer's additions (its writer_version says so), which a reader of version 0 skips.

/** The minimum_version this reader understands: a block asking for a later reader is not read. */
export const ISO_21496_READER_VERSION = 0;

const MULTICHANNEL = 0x80;
const USE_BASE_COLOUR_SPACE = 0x40;
const COMMON_DENOMINATOR = 0x08;
const BACKWARD_DIRECTION = 0x04;

/**
 * The largest magnitude a signed value (min, max, offsets) may have: libavif holds each as a signed 32-bit
 * fraction again when it writes the 'tmap' item, and −2³¹ ⁄ 1, which fits the JPEG's s32, does not fit there.
 */
const SIGNED_LIMIT = 2 ** 31 - 1;
/** The largest unsigned value (headrooms, gamma): a u32 numerator over 1. */
const UNSIGNED_LIMIT = 2 ** 32 - 1;

type PerChannel = [number, number, number];

export interface IsoGainMapMetadata {
  /** How many sets of per-channel values the block holds: 1 (copied to all three) or 3 (red, green, blue). */
  channels: 1 | 3;
  /** Whether the map applies in the base picture's colour space (else in the alternate's, given by its ICC). */
  useBaseColourSpace: boolean;
  /** libultrahdr's flag for a map whose base rendition is the HDR one. */
  backwardDirection: boolean;
  /** log2 of the base and alternate renditions' HDR headroom. */
  baseHdrHeadroom: number;
  alternateHdrHeadroom: number;
  /** Per channel: log2 gains at map values 0 and 1, the map's gamma, and the offsets (k) of each rendition. */
  gainMapMin: PerChannel;
  gainMapMax: PerChannel;
  gamma: PerChannel;
  baseOffset: PerChannel;
  alternateOffset: PerChannel;
}

export type IsoGainMapProblem = 'truncated' | 'unknown version' | 'zero denominator' | 'out of range';

export type IsoGainMapOutcome =
  | { ok: true; metadata: IsoGainMapMetadata }
  | { ok: false; problem: IsoGainMapProblem; detail: string };

const fail = (problem: IsoGainMapProblem, detail: string): IsoGainMapOutcome => ({ ok: false, problem, detail });

/** The metadata of a gain map's ISO 21496-1 block (`block`: the bytes after the URN and its NUL). */
export function readIsoGainMap(block: Uint8Array): IsoGainMapOutcome {
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  if (block.length < 5) return fail('truncated', `holds ${block.length} bytes, not the versions and flags`);
  const minimumVersion = view.getUint16(0);
  if (minimumVersion > ISO_21496_READER_VERSION)
    return fail('unknown version', `asks for a reader of version ${minimumVersion} (this one reads version 0)`);
  const flags = view.getUint8(4);
  const channels = flags & MULTICHANNEL ? 3 : 1;
  const common = (flags & COMMON_DENOMINATOR) !== 0;
  // A numerator is 4 bytes, with its own denominator 8; 2 headrooms and 5 values per channel.
  const needed = 5 + (common ? 4 + (2 + 5 * channels) * 4 : (2 + 5 * channels) * 8);
  if (block.length < needed)
    return fail('truncated', `holds ${block.length} bytes where its ${channels} channel(s) need ${needed}`);

  let at = 5;
  const denominator = common ? view.getUint32(at) : 0;
  if (common) at += 4;
  let zero = false;
  const next = (signed: boolean): number => {
    const n = signed ? view.getInt32(at) : view.getUint32(at);
    at += 4;
    let d = denominator;
    if (!common) {
      d = view.getUint32(at);
      at += 4;
    }
    if (d === 0) zero = true;
    return n / d;
  };
  const baseHdrHeadroom = next(false);
  const alternateHdrHeadroom = next(false);
  const sets: number[][] = [];
  for (let c = 0; c < channels; c++) sets.push([next(true), next(true), next(false), next(true), next(true)]);
  if (zero) return fail('zero denominator', 'has a fraction over 0');
  const channel = (i: number): PerChannel => [0, 1, 2].map((c) => sets[channels === 3 ? c : 0]![i]!) as PerChannel;
  const metadata: IsoGainMapMetadata = {
    channels,
    useBaseColourSpace: (flags & USE_BASE_COLOUR_SPACE) !== 0,
    backwardDirection: (flags & BACKWARD_DIRECTION) !== 0,
    baseHdrHeadroom,
    alternateHdrHeadroom,
    gainMapMin: channel(0),
    gainMapMax: channel(1),
    gamma: channel(2),
    baseOffset: channel(3),
    alternateOffset: channel(4),
  };
  const problem = isoRangeProblem(metadata);
  return problem ? fail('out of range', `has ${problem}`) : { ok: true, metadata };
}

/**
 * What of a gain map's values ISO 21496-1 (and libavif, which checks them again when it writes 'tmap')
 * does not allow, whichever description they came from; null when all are allowed.
 */
export function isoRangeProblem(m: IsoGainMapMetadata): string | null {
  for (let c = 0; c < 3; c++) {
    if (!(m.gamma[c]! > 0)) return 'a gamma of 0 or below';
    if (m.gainMapMax[c]! < m.gainMapMin[c]!) return 'a gain map max below its min';
  }
  const unsigned = [m.baseHdrHeadroom, m.alternateHdrHeadroom, ...m.gamma];
  if (unsigned.some((v) => !(v >= 0 && v <= UNSIGNED_LIMIT))) return 'a headroom or gamma out of range';
  const signed = [m.gainMapMin, m.gainMapMax, m.baseOffset, m.alternateOffset].flat();
  if (signed.some((v) => !(Math.abs(v) <= SIGNED_LIMIT))) return 'a value beyond ±(2³¹ − 1)';
  return null;
}
