// Writing a kept gain map after its picture, as Ultra HDR 1.1 lays it out: the primary (its XMP's
// Container:Directory giving the map's length, the ISO 21496-1 block where the input had one, then an
// MPF index whose offsets count from its own TIFF header), followed by the map JPEG with its hdrgm XMP
// and ISO block. The map is decoded and put through the picture's geometry by the JPEG engine.
import { encodePixelsJpeg, JpegEngineError, withJpegJob } from '../../../wasm/jpeg-engine.ts';
import { FULL_CHROMA_QUALITY } from '../limits.ts';
import type { CompressRequest, CompressResult } from '../types.ts';
import type { GainMapSource } from './detect.ts';
import { MPF_PAYLOAD_BYTES, MPF_SIGNATURE, writeMpf } from './mpf.ts';
import { GAIN_MAP_QUALITY, type GainMapPlan } from './plan.ts';
import { headSegments, segmentBytes } from '../jpeg-segments.ts';
import { ascii, latin1, startsWith } from './segments.ts';
import { neutralValue, transformMapPixels, type TransformedMap } from './transformed.ts';
import { primaryGainMapXmp, withGainMapLength, XMP_SIGNATURE } from './xmp.ts';

const APP1 = 0xe1;
const APP2 = 0xe2;
/** The largest payload one marker segment holds (its 16-bit length counts itself). */
const MAX_SEGMENT_PAYLOAD = 65_533;

/**
 * The request the picture's path is given: with a kept map, the upload up to the map, so "never bigger"
 * weighs the picture against the input's picture (the map is written after it either way).
 */
export function pictureRequest(request: CompressRequest, gainMap: GainMapPlan): CompressRequest {
  const map = gainMap.source.map;
  if (!gainMap.keep || !map) return request;
  return { ...request, bytes: request.bytes.subarray(0, map.bytes.byteOffset - request.bytes.byteOffset) };
}

/** The result with its gain map written after it (kept), or as it was (dropped: the header says so). */
export function withGainMap(result: CompressResult, gainMap: GainMapPlan): CompressResult {
  const map = gainMap.source.map;
  if (!gainMap.keep || !map || !gainMap.geometry || result.format !== 'jpeg') return { ...result, gainMap: 'dropped' };
  const { geometry } = gainMap;
  // The never-bigger rewrite of an upright picture leaves its pixels as they were: so is the map.
  const unchanged =
    result.lossless &&
    geometry.orientation === 1 &&
    geometry.stored.width === map.header.width &&
    geometry.stored.height === map.header.height;
  return joined(result, gainMap, unchanged ? () => map.bytes : () => encodeMap(gainMap), unchanged);
}

/**
 * A transformed picture's result with its gain map put through the same transformation (transformed.ts)
 * and written after it; `geometry` is the plan's, after any smart crop placed the box.
 */
export function withTransformedGainMap(
  result: CompressResult,
  gainMap: GainMapPlan,
  transform: Omit<TransformedMap, 'stored'>,
): CompressResult {
  const map = gainMap.source.map;
  if (!gainMap.keep || !map || result.format !== 'jpeg') return { ...result, gainMap: 'dropped' };
  return joined(result, gainMap, () => {
    const stored = { width: map.header.width, height: map.header.height };
    const decoded = withJpegJob(map.bytes, (job) => {
      job.setPixels(8, stored.width, stored.height, 1);
      return { pixels: job.frame(), channels: job.channels };
    });
    const out = transformMapPixels(decoded.pixels, decoded.channels, { ...transform, stored }, neutralValue(map));
    return encodePixelsJpeg(out.pixels, out.width, out.height, decoded.channels === 1 ? 1 : 3, {
      quality: GAIN_MAP_QUALITY,
      sampling: decoded.channels === 1 || GAIN_MAP_QUALITY >= FULL_CHROMA_QUALITY ? [1, 1] : [2, 2],
      markers: map.markers,
    });
  });
}

function encodeMap(gainMap: GainMapPlan): Uint8Array {
  const map = gainMap.source.map!;
  const { stored, orientation } = gainMap.geometry!;
  return withJpegJob(map.bytes, (job) => {
    job.setPixels(gainMap.scaleNum ?? 8, stored.width, stored.height, orientation);
    for (const marker of map.markers) job.addMarker(marker.code, marker.data);
    return job.encode(GAIN_MAP_QUALITY, GAIN_MAP_QUALITY < FULL_CHROMA_QUALITY, gainMap.mode ?? 'two_pass').bytes;
  });
}

/** The result with `makeMap`'s map joined after the picture; dropped where the engine cannot make it. */
function joined(
  result: CompressResult,
  gainMap: GainMapPlan,
  makeMap: () => Uint8Array,
  unchanged = false,
): CompressResult {
  let mapBytes: Uint8Array;
  const started = performance.now();
  try {
    mapBytes = makeMap();
  } catch (err) {
    // The picture is what was asked for: a map the engine cannot decode is dropped, never a failure.
    if (err instanceof JpegEngineError) return { ...result, gainMap: 'dropped' };
    throw err;
  }
  const bytes = joinPrimaryAndMap(result.bytes, mapBytes, gainMap.source);
  if (!bytes) return { ...result, gainMap: 'dropped' };
  // The map's decode, resize and encode run as one engine call: Server-Timing counts them as encoding.
  const timings = { ...result.timings, encode: result.timings.encode + performance.now() - started };
  return { ...result, bytes, timings, encodes: result.encodes + (unchanged ? 0 : 1), gainMap: 'kept' };
}

/**
 * The primary with its gain-map segments after its leading APPn run, then the map; null if the primary
 * is not the JPEG we expect (never for the engine's output). Also joins a lossless JPEG XL transcode's
 * stripped parts (jxl/strip.ts).
 */
export function joinPrimaryAndMap(primary: Uint8Array, map: Uint8Array, source: GainMapSource): Uint8Array | null {
  const head = headSegments(primary);
  const firstTable = head?.find((s) => s.code < 0xe0 || s.code > 0xef);
  if (!head || !firstTable) return null;
  const { flavours, primaryIso } = source;
  const parts: Uint8Array[] = [primary.subarray(0, 2)];
  let wroteXmp = false;
  for (const s of head) {
    if (s.start >= firstTable.start) break;
    if (s.code === APP2 && startsWith(s.data, MPF_SIGNATURE)) continue;
    if (s.code === APP1 && startsWith(s.data, XMP_SIGNATURE) && flavours.includes('ultrahdr')) {
      const updated = ascii(withGainMapLength(latin1(s.data), map.length));
      parts.push(
        updated.length <= MAX_SEGMENT_PAYLOAD ? segmentBytes(APP1, updated) : primary.subarray(s.start, s.end),
      );
      wroteXmp = true;
      continue;
    }
    parts.push(primary.subarray(s.start, s.end));
  }
  // metadata=strip dropped the input's XMP: the directory alone goes back (it describes image data).
  if (flavours.includes('ultrahdr') && !wroteXmp) {
    const xmp = new Uint8Array([...XMP_SIGNATURE, ...ascii(primaryGainMapXmp(map.length))]);
    parts.push(segmentBytes(APP1, xmp));
  }
  if (primaryIso) parts.push(segmentBytes(APP2, primaryIso));
  const mpfAt = parts.reduce((n, p) => n + p.length, 0);
  const tiffStart = mpfAt + 4 + MPF_SIGNATURE.length;
  const primarySize = mpfAt + 4 + MPF_PAYLOAD_BYTES + (primary.length - firstTable.start);
  parts.push(segmentBytes(APP2, writeMpf(primarySize, map.length, primarySize - tiffStart)));
  parts.push(primary.subarray(firstTable.start), map);
  const out = new Uint8Array(primarySize + map.length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
