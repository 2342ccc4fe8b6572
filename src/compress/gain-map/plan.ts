// Whether a JPEG upload's gain map will be kept, decided before any pixel with the rest of the plan:
// only JPEG and AVIF output carry one; a map the index does not lead to, or whose phase would not fit the
// memory budget, is dropped (the picture is never refused for its map).
import type { ImageFormat } from '../formats.ts';
import type { ImageHeader } from '../header.ts';
import { dctScale, type JpegEncodeMode, plan, type Plan, withGainMapEstimate } from '../memory-plan.ts';
import { findGainMap, type GainMapSource } from './detect.ts';
import { swapsAxes } from '../exif.ts';
import type { Transform } from '../transform/options.ts';
import { mapGeometry, type MapGeometry } from './geometry.ts';
import { transformedMapSize } from './transformed.ts';
import { resizeGeometry } from './resize-geometry.ts';

/**
 * The quality the map is written at, whatever the picture's: libultrahdr's default for maps. A map is
 * smooth and small (a sixteenth of the picture's pixels at a quarter per side), so 85 costs little,
 * and the caller's low qualities would band the HDR highlights (docs/benchmarks.md, "Gain maps").
 */
export const GAIN_MAP_QUALITY = 85;

export interface GainMapPlan {
  source: GainMapSource;
  /** Written with the picture (kept), or not (dropped, `reason` saying why). */
  keep: boolean;
  reason?: string;
  geometry?: MapGeometry;
  /** The map's DCT scale and encoder mode, from its own plan. */
  scaleNum?: number;
  mode?: JpegEncodeMode;
}

export interface GainMapRequest {
  bytes: Uint8Array;
  format: ImageFormat;
  quality: number;
  /** A transformation (fit other than scale-down, trim, rotate, flip, background…): the map goes through it whole. */
  transform?: Transform;
}

/**
 * The gain map's plan beside the picture's `picture` plan, and the request's estimate with it; null
 * for an upload without a gain map.
 */
export function planGainMap(
  request: GainMapRequest,
  header: ImageHeader,
  picture: Plan,
  budget: number,
): { gainMap: GainMapPlan; estimate: number } | null {
  const source = findGainMap(request.bytes, header);
  if (!source) return null;
  const dropped = (reason: string) => ({ gainMap: { source, keep: false, reason }, estimate: picture.estimate });
  if (request.format !== 'jpeg' && request.format !== 'avif')
    return dropped(`${request.format} output carries no gain map`);
  if (!source.map) return dropped(source.problem ?? 'the gain map was not found');
  const map = source.map;
  if (request.transform || request.format === 'avif') {
    // Put through the transformation whole (transformed.ts): the stored map decoded, and the output map.
    // AVIF output takes every map that way, a plain resize being a transformation that only resizes.
    const geometry = request.transform ? picture.transform : resizeGeometry(picture.output);
    if (!geometry) return dropped('the transformation has no geometry');
    const upright = swapsAxes(header.orientation) ? { width: header.height, height: header.width } : header;
    const { output } = transformedMapSize({
      upright,
      geometry,
      flip: request.transform?.flip,
      rotate: request.transform?.rotate ?? 0,
      orientation: header.orientation,
      stored: map.header,
    });
    const channels = Math.min(3, map.header.jpeg?.components ?? 3);
    // The engine's frame and its copy out, then the output map in JavaScript and in the engine, with the
    // two-pass encoder's coefficients (two bytes a sample) and its output.
    const decoded = map.bytes.length + 2 * map.header.width * map.header.height * channels;
    const encoded = 5 * output.width * output.height * channels;
    const estimate = withGainMapEstimate(picture, request.bytes.length, request.quality, decoded + encoded);
    if (estimate > budget) return dropped('the gain map does not fit the memory budget beside its picture');
    return { gainMap: { source, keep: true }, estimate };
  }
  const geometry = mapGeometry(
    { input: header, stored: picture.stored, orientation: header.orientation },
    { width: map.header.width, height: map.header.height },
  );
  const mapPlan = plan(
    'jpeg',
    { ...map.header, orientation: header.orientation },
    map.bytes.length,
    { format: 'jpeg', quality: GAIN_MAP_QUALITY, ...geometry.output, allowLossless: false },
    budget,
  );
  const estimate = withGainMapEstimate(picture, request.bytes.length, request.quality, mapPlan.estimate);
  if (estimate > budget) return dropped('the gain map does not fit the memory budget beside its picture');
  const scaleNum = dctScale(map.header, geometry.stored);
  return { gainMap: { source, keep: true, geometry, scaleNum, mode: mapPlan.mode }, estimate };
}
