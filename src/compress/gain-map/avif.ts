// A JPEG's HDR gain map carried into AVIF output (issue 51): the stored map decoded whole (a sixteenth of
// the picture's pixels or less), put through the picture's geometry as for a JPEG output (transformed.ts),
// and handed to the AVIF encoder with its ISO 21496-1 numbers (read from the map's ISO 21496-1 block, or
// turned from its Ultra HDR hdrgm XMP), which libavif writes as a 'tmap' item beside the picture: the
// picture stays the SDR rendition every viewer shows, and an HDR screen applies the map. What cannot be
// carried is dropped, never a failure: the response says so.
import { withJpegJob } from '../../../wasm/jpeg-engine.ts';
import { encoderQuality } from '../quality-scale.ts';
import type { AvifGainMapInput, CompressRequest, CompressResult } from '../types.ts';
import type { GainMapImage } from './detect.ts';
import { type IsoGainMapMetadata, readIsoGainMap } from './iso21496.ts';
import { GAIN_MAP_QUALITY, type GainMapPlan } from './plan.ts';
import { startsWith } from './segments.ts';
import { neutralValue, type TransformedMap, transformMapPixels } from './transformed.ts';
import { ISO_21496_SIGNATURE } from './xmp.ts';

const APP2 = 0xe2;
const HDR_BASE = 'the gain map describes an HDR base rendition';

/** Ultra HDR's defaults for the hdrgm fields a map may leave out (its gamma 1, offsets 1/64, no minimum). */
const ULTRA_HDR_DEFAULTS = { GainMapMin: 0, Gamma: 1, OffsetSDR: 1 / 64, OffsetHDR: 1 / 64, HDRCapacityMin: 0 };

/** One value per channel, from a field written once (all channels) or three times; null when malformed. */
function perChannel(value: string | undefined, fallback?: number): number[] | null {
  if (value === undefined) return fallback === undefined ? null : [fallback, fallback, fallback];
  const numbers = value
    .replace(/<[^>]*>/g, ' ')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
  if (numbers.some((n) => !Number.isFinite(n))) return null;
  if (numbers.length === 1) return [numbers[0]!, numbers[0]!, numbers[0]!];
  return numbers.length === 3 ? numbers : null;
}

/**
 * The map's ISO 21496-1 numbers (AvifGainMapInput.metadata), or the reason they cannot be had.
 *
 * A map with both an ISO 21496-1 block and hdrgm XMP (what Ultra HDR 1.1 writers such as libultrahdr
 * write, the same values twice) is described by its ISO block: libultrahdr's own reader takes the ISO
 * block first, it is the standard's form and holds the writer's exact fractions where the XMP holds them
 * as decimal text, and 'tmap' is that block again. Its hdrgm XMP serves only when the ISO block cannot be
 * read (cut short, a later version): the map is still described, so it is kept.
 */
export function isoGainMapNumbers(map: GainMapImage): number[] | string {
  const iso = map.markers.find((m) => m.code === APP2 && startsWith(m.data, ISO_21496_SIGNATURE));
  if (!iso) return hdrgmNumbers(map);
  const read = readIsoGainMap(iso.data.subarray(ISO_21496_SIGNATURE.length));
  if (read.ok) return isoNumbers(read.metadata, map.header.jpeg?.components ?? 3);
  if (!hasHdrgm(map)) return `the gain map's ISO 21496-1 block ${read.detail} (${read.problem})`;
  return hdrgmNumbers(map);
}

const hasHdrgm = (map: GainMapImage): boolean =>
  map.hdrgm.GainMapMax !== undefined && map.hdrgm.HDRCapacityMax !== undefined;

/** An ISO 21496-1 block's values in AvifGainMapInput.metadata's order; `components`: the map JPEG's. */
function isoNumbers(m: IsoGainMapMetadata, components: number): number[] | string {
  // libultrahdr marks an HDR base with a flag; Skia's reader tells it by the headrooms. Either is dropped,
  // as an hdrgm map with BaseRenditionIsHDR is.
  if (m.backwardDirection || m.baseHdrHeadroom > m.alternateHdrHeadroom) return HDR_BASE;
  // The 'tmap' written here applies the map in the picture's colour space: the alternate rendition's (the
  // map JPEG's ICC profile) is not carried. For a grey map with one set of values that is the same HDR
  // picture: one gain and one offset on every channel commute with a change of primaries that keeps white
  // (white to white: both are D65). A map whose channels differ would change colour, so it is dropped.
  if (!m.useBaseColourSpace && (m.channels === 3 || components !== 1))
    return "the gain map's channels apply in the alternate rendition's colour space, which AVIF output does not carry";
  return [
    ...m.gainMapMin,
    ...m.gainMapMax,
    ...m.gamma,
    ...m.baseOffset,
    ...m.alternateOffset,
    m.baseHdrHeadroom,
    m.alternateHdrHeadroom,
  ];
}

/** The map's hdrgm XMP as ISO 21496-1's numbers, or why not: no hdrgm, an HDR base, a value out of range. */
function hdrgmNumbers(map: GainMapImage): number[] | string {
  const f = map.hdrgm;
  if (!hasHdrgm(map)) return 'the gain map has no hdrgm parameters';
  if (f.BaseRenditionIsHDR !== undefined && !/^false$/i.test(f.BaseRenditionIsHDR)) return HDR_BASE;
  const min = perChannel(f.GainMapMin, ULTRA_HDR_DEFAULTS.GainMapMin);
  const max = perChannel(f.GainMapMax);
  const gamma = perChannel(f.Gamma, ULTRA_HDR_DEFAULTS.Gamma);
  const sdr = perChannel(f.OffsetSDR, ULTRA_HDR_DEFAULTS.OffsetSDR);
  const hdr = perChannel(f.OffsetHDR, ULTRA_HDR_DEFAULTS.OffsetHDR);
  const capacityMin = perChannel(f.HDRCapacityMin, ULTRA_HDR_DEFAULTS.HDRCapacityMin)?.[0];
  const capacityMax = perChannel(f.HDRCapacityMax)?.[0];
  if (!min || !max || !gamma || !sdr || !hdr || capacityMin === undefined || capacityMax === undefined)
    return 'the gain map parameters are malformed';
  // ISO 21496-1 stores the gamma and both headrooms unsigned, the gamma above 0.
  if (gamma.some((g) => g <= 0) || capacityMin < 0 || capacityMax < 0)
    return 'the gain map parameters are out of range';
  return [...min, ...max, ...gamma, ...sdr, ...hdr, capacityMin, capacityMax];
}

/** The kept map at the output's geometry, with its numbers; or the reason it is dropped. */
export function avifGainMapInput(
  gainMap: GainMapPlan,
  transform: Omit<TransformedMap, 'stored'>,
): AvifGainMapInput | string {
  const map = gainMap.source.map;
  if (!gainMap.keep || !map) return gainMap.reason ?? 'the gain map was not found';
  const metadata = isoGainMapNumbers(map);
  if (typeof metadata === 'string') return metadata;
  const stored = { width: map.header.width, height: map.header.height };
  const decoded = withJpegJob(map.bytes, (job) => {
    job.setPixels(8, stored.width, stored.height, 1);
    return { pixels: job.frame(), channels: job.channels };
  });
  const channels = decoded.channels === 1 ? 1 : 3;
  const pixels = decoded.channels === channels ? decoded.pixels : rgbOf(decoded.pixels, decoded.channels);
  const out = transformMapPixels(pixels, channels, { ...transform, stored }, neutralValue(map));
  return { ...out, channels, metadata, quality: encoderQuality('avif', GAIN_MAP_QUALITY) };
}

/** RGB of a frame with more channels (the engine's RGBA). */
function rgbOf(pixels: Uint8Array, channels: number): Uint8Array {
  const n = pixels.length / channels;
  const out = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) out.set(pixels.subarray(i * channels, i * channels + 3), i * 3);
  return out;
}

/**
 * Runs the picture's AVIF path with the map beside it (`run` gets the request with the map, or without it
 * when it cannot be made), and says whether it was written.
 */
export async function withAvifGainMap(
  request: CompressRequest,
  gainMap: GainMapPlan,
  transform: Omit<TransformedMap, 'stored'>,
  run: (request: CompressRequest) => Promise<CompressResult>,
): Promise<CompressResult> {
  let input: AvifGainMapInput | string;
  try {
    input = avifGainMapInput(gainMap, transform);
  } catch {
    // The picture is what was asked for: a map the engine cannot decode is dropped, never a failure.
    input = 'the gain map could not be decoded';
  }
  if (typeof input === 'string') return { ...(await run(request)), gainMap: 'dropped' };
  const result = await run({ ...request, avifGainMap: input });
  return { ...result, gainMap: result.gainMap ?? 'dropped' };
}
