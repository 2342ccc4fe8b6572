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
import { gainMapMetadata } from './numbers.ts';
import { GAIN_MAP_QUALITY, type GainMapPlan } from './plan.ts';
import { neutralValue, type TransformedMap, transformMapPixels } from './transformed.ts';

/**
 * The map's ISO 21496-1 numbers (AvifGainMapInput.metadata's order), or the reason they cannot be had:
 * no usable description (numbers.ts), an HDR base rendition, channels that apply in another colour space.
 */
export function isoGainMapNumbers(map: GainMapImage): number[] | string {
  const m = gainMapMetadata(map);
  if (typeof m === 'string') return m;
  // Ultra HDR says BaseRenditionIsHDR, libultrahdr's ISO block a flag, Skia's reader tells it by the
  // headrooms: any of them is dropped.
  if (m.backwardDirection || m.baseHdrHeadroom > m.alternateHdrHeadroom)
    return 'the gain map describes an HDR base rendition';
  // The 'tmap' written here applies the map in the picture's colour space: the alternate rendition's (the
  // map JPEG's ICC profile) is not carried. For a grey map with one set of values that is the same HDR
  // picture: one gain and one offset on every channel commute with a change of primaries that keeps white
  // (white to white: both are D65). A map whose channels differ would change colour, so it is dropped.
  if (!m.useBaseColourSpace && (m.channels === 3 || map.header.jpeg?.components !== 1))
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
  const rgb =
    decoded.channels === 1 || decoded.channels === 3 ? decoded.pixels : rgbOf(decoded.pixels, decoded.channels);
  // A grey map saved with three components (as some writers save greyscale) is stored as one: 4:4:4 RGB
  // would let the encoder move its channels apart (colour where the map has none) and costs about 12 %
  // more bytes (docs/experiments/gain-map.md). Only when its numbers are one set too.
  const grey = decoded.channels !== 1 && oneSetOfNumbers(metadata) ? greyOf(rgb) : undefined;
  const channels = decoded.channels === 1 || grey ? 1 : 3;
  const pixels = grey ?? rgb;
  const out = transformMapPixels(pixels, channels, { ...transform, stored }, neutralValue(map));
  return { ...out, channels, metadata, quality: encoderQuality('avif', GAIN_MAP_QUALITY) };
}

/** How far a grey map's channels may differ after its JPEG's chroma was coded, and still be grey. */
const GREY_MAP_TOLERANCE = 2;

/** Whether a map's 17 numbers give every channel the same min, max, gamma and offsets. */
const oneSetOfNumbers = (m: number[]): boolean =>
  [0, 3, 6, 9, 12].every((at) => m[at] === m[at + 1] && m[at] === m[at + 2]);

/** One channel of an RGB map whose channels agree within GREY_MAP_TOLERANCE everywhere, else undefined. */
function greyOf(rgb: Uint8Array): Uint8Array | undefined {
  const out = new Uint8Array(rgb.length / 3);
  for (let i = 0, j = 0; j < out.length; i += 3, j++) {
    const r = rgb[i]!,
      g = rgb[i + 1]!,
      b = rgb[i + 2]!;
    if (Math.max(r, g, b) - Math.min(r, g, b) > GREY_MAP_TOLERANCE) return undefined;
    out[j] = Math.round((r + g + b) / 3);
  }
  return out;
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
