// A gain map's parameters, as ISO 21496-1 states them, from whichever description the map carries: its
// ISO 21496-1 block (iso21496.ts) or its Ultra HDR hdrgm XMP. AVIF output writes them as its 'tmap' item
// (avif.ts); a transformation's padding gets the map value that means no boost (transformed.ts).
//
// A map with both (what Ultra HDR 1.1 writers such as libultrahdr write: the same values twice) is
// described by its ISO block: libultrahdr's own reader takes the ISO block first, it is the standard's
// form and holds the writer's exact fractions where the XMP holds them as decimal text, and 'tmap' is that
// block again. Its hdrgm XMP serves only when the ISO block cannot be read (cut short, a later version):
// the map is still described, so it is kept.
import type { GainMapImage } from './detect.ts';
import { type IsoGainMapMetadata, isoRangeProblem, readIsoGainMap } from './iso21496.ts';
import { startsWith } from './segments.ts';
import { ISO_21496_SIGNATURE } from './xmp.ts';

const APP2 = 0xe2;

/** Ultra HDR's defaults for the hdrgm fields a map may leave out (its gamma 1, offsets 1/64, no minimum). */
const ULTRA_HDR_DEFAULTS = { GainMapMin: 0, Gamma: 1, OffsetSDR: 1 / 64, OffsetHDR: 1 / 64, HDRCapacityMin: 0 };

/** The map's parameters, or why it has none that can be used. */
export function gainMapMetadata(map: GainMapImage): IsoGainMapMetadata | string {
  const iso = map.markers.find((m) => m.code === APP2 && startsWith(m.data, ISO_21496_SIGNATURE));
  if (!iso) return hdrgmMetadata(map);
  const read = readIsoGainMap(iso.data.subarray(ISO_21496_SIGNATURE.length));
  if (read.ok) return read.metadata;
  if (!hasHdrgm(map)) return `the gain map's ISO 21496-1 block ${read.detail} (${read.problem})`;
  return hdrgmMetadata(map);
}

const hasHdrgm = (map: GainMapImage): boolean =>
  map.hdrgm.GainMapMax !== undefined && map.hdrgm.HDRCapacityMax !== undefined;

/** One value per channel, from a field written once (all channels) or three times; null when malformed. */
function perChannel(value: string | undefined, fallback?: number): [number, number, number] | null {
  if (value === undefined) return fallback === undefined ? null : [fallback, fallback, fallback];
  const numbers = value
    .replace(/<[^>]*>/g, ' ')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
  if (numbers.some((n) => !Number.isFinite(n))) return null;
  if (numbers.length === 1) return [numbers[0]!, numbers[0]!, numbers[0]!];
  return numbers.length === 3 ? [numbers[0]!, numbers[1]!, numbers[2]!] : null;
}

/**
 * The map's hdrgm XMP in ISO 21496-1's terms (HDRCapacityMin/Max are the headrooms, OffsetSDR/HDR the base
 * and alternate offsets; Ultra HDR applies a map in the picture's colour space), or why not.
 */
function hdrgmMetadata(map: GainMapImage): IsoGainMapMetadata | string {
  const f = map.hdrgm;
  if (!hasHdrgm(map)) return 'the gain map has no hdrgm parameters';
  const gainMapMin = perChannel(f.GainMapMin, ULTRA_HDR_DEFAULTS.GainMapMin);
  const gainMapMax = perChannel(f.GainMapMax);
  const gamma = perChannel(f.Gamma, ULTRA_HDR_DEFAULTS.Gamma);
  const baseOffset = perChannel(f.OffsetSDR, ULTRA_HDR_DEFAULTS.OffsetSDR);
  const alternateOffset = perChannel(f.OffsetHDR, ULTRA_HDR_DEFAULTS.OffsetHDR);
  const baseHdrHeadroom = perChannel(f.HDRCapacityMin, ULTRA_HDR_DEFAULTS.HDRCapacityMin)?.[0];
  const alternateHdrHeadroom = perChannel(f.HDRCapacityMax)?.[0];
  if (
    !gainMapMin ||
    !gainMapMax ||
    !gamma ||
    !baseOffset ||
    !alternateOffset ||
    baseHdrHeadroom === undefined ||
    alternateHdrHeadroom === undefined
  )
    return 'the gain map parameters are malformed';
  const values = [gainMapMin, gainMapMax, gamma, baseOffset, alternateOffset];
  const metadata: IsoGainMapMetadata = {
    channels: values.every(([r, g, b]) => r === g && g === b) ? 1 : 3,
    useBaseColourSpace: true,
    backwardDirection: f.BaseRenditionIsHDR !== undefined && !/^false$/i.test(f.BaseRenditionIsHDR),
    baseHdrHeadroom,
    alternateHdrHeadroom,
    gainMapMin,
    gainMapMax,
    gamma,
    baseOffset,
    alternateOffset,
  };
  const problem = isoRangeProblem(metadata);
  return problem ? `the gain map parameters are out of range: ${problem}` : metadata;
}
