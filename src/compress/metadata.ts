// Which metadata segments of a JPEG go into its output. The ICC profile always does when it describes
// the output's colours (a Display-P3 phone photo keeps them); EXIF and XMP only with metadata=keep,
// with their orientation reset to 1 because the pixels are written upright. Nothing else survives:
// no GPS position, camera serial, thumbnails, MPF or comments.
import type { JpegMarker } from '../../wasm/jpeg-engine.ts';
import { concatBytes } from '../bytes.ts';

export const METADATA_MODES = ['strip', 'keep'] as const;
export type MetadataMode = (typeof METADATA_MODES)[number];

const APP1 = 0xe1;
const APP2 = 0xe2;
const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));
const ICC_SIGNATURE = ascii('ICC_PROFILE\0');
const EXIF_SIGNATURE = ascii('Exif\0\0');
const XMP_SIGNATURES = [ascii('http://ns.adobe.com/xap/1.0/\0'), ascii('http://ns.adobe.com/xmp/extension/\0')];

const startsWith = (data: Uint8Array, prefix: number[]): boolean =>
  data.length >= prefix.length && prefix.every((b, i) => data[i] === b);

/** The profile's colour space (bytes 16–19 of the ICC header), from the first chunk; null if unreadable. */
export function iccColourSpace(markers: JpegMarker[]): string | null {
  const first = markers.find((m) => m.code === APP2 && startsWith(m.data, ICC_SIGNATURE) && m.data[12] === 1);
  if (!first || first.data.length < 14 + 20) return null;
  return String.fromCharCode(...first.data.subarray(14 + 16, 14 + 20));
}

/** The ICC profile of an RGB JPEG, its APP2 chunks joined in their sequence order; null for none or another colour model. */
export function rgbIccProfile(markers: JpegMarker[]): Uint8Array | null {
  if (iccColourSpace(markers) !== 'RGB ') return null;
  const chunks = markers
    .filter((m) => m.code === APP2 && startsWith(m.data, ICC_SIGNATURE) && m.data.length > 14)
    .sort((a, b) => a.data[12]! - b.data[12]!)
    .map((m) => m.data.subarray(14));
  return concatBytes(chunks);
}

/**
 * Metadata as an output in a container of its own carries it (WebP chunks, AVIF items): the ICC profile
 * whole, EXIF as its TIFF block (without "Exif\0\0"), the XMP packet.
 */
export interface ImageMetadata {
  icc?: Uint8Array;
  exif?: Uint8Array;
  xmp?: Uint8Array;
}

/**
 * A JPEG's metadata for such a container, by the same rules as its segments: an RGB profile always;
 * EXIF and XMP only with metadata=keep, their orientation reset to 1 (the pixels are written upright).
 * Extended XMP (the rest of a packet over 64 KB, split into segments of its own) is left out.
 */
export function jpegMetadata(markers: JpegMarker[], mode: MetadataMode): ImageMetadata {
  const out: ImageMetadata = {};
  const icc = rgbIccProfile(markers);
  if (icc) out.icc = icc;
  if (mode !== 'keep') return out;
  const exif = markers.find((m) => m.code === APP1 && startsWith(m.data, EXIF_SIGNATURE));
  if (exif) out.exif = exifUpright(exif.data).subarray(EXIF_SIGNATURE.length);
  const xmp = markers.find((m) => m.code === APP1 && startsWith(m.data, XMP_SIGNATURES[0]!));
  if (xmp) out.xmp = xmpUpright(xmp.data).subarray(XMP_SIGNATURES[0]!.length);
  return out;
}

/**
 * The segments to write, in their original order. `channels` is the output's (1 grey, 3 RGB): a
 * profile for another colour model (a CMYK profile once the pixels are RGB) would misdescribe them.
 */
export function outputMarkers(markers: JpegMarker[], mode: MetadataMode, channels: number): JpegMarker[] {
  const keep = segmentFilter(markers, mode, channels);
  return markers.flatMap((marker) => {
    const data = keep(marker);
    return data ? [{ code: marker.code, data }] : [];
  });
}

/**
 * What becomes of one APPn or COM segment: its payload to write (possibly changed), or null to drop it.
 * Built from all the file's segments, since whether the ICC profile fits the output is in its first chunk.
 */
export function segmentFilter(
  markers: JpegMarker[],
  mode: MetadataMode,
  channels: number,
): (marker: JpegMarker) => Uint8Array | null {
  const space = iccColourSpace(markers);
  const keepIcc =
    space !== null && (channels === 1 ? space === 'GRAY' : channels === 3 ? space === 'RGB ' : space === 'CMYK');
  return (marker) => {
    if (marker.code === APP2 && startsWith(marker.data, ICC_SIGNATURE)) return keepIcc ? marker.data : null;
    if (mode === 'keep' && marker.code === APP1 && startsWith(marker.data, EXIF_SIGNATURE))
      return exifUpright(marker.data);
    if (mode === 'keep' && marker.code === APP1 && XMP_SIGNATURES.some((s) => startsWith(marker.data, s)))
      return xmpUpright(marker.data);
    return null;
  };
}

/**
 * segmentFilter under metadata=strip for a copy that keeps the JPEG's stored pixels unturned (a lossless
 * JPEG XL transcode): the EXIF becomes the Orientation tag alone (orientationExif) when it is not 1, so
 * the picture still shows upright; every other rule is segmentFilter's.
 */
export function storedPixelsFilter(
  markers: JpegMarker[],
  channels: number,
  orientation: number,
): (marker: JpegMarker) => Uint8Array | null {
  const strip = segmentFilter(markers, 'strip', channels);
  // One EXIF however many the file has (an editor may copy it): a second would say the tag twice.
  let exifWritten = orientation === 1;
  return (marker) => {
    if (!(marker.code === APP1 && startsWith(marker.data, EXIF_SIGNATURE))) return strip(marker);
    if (exifWritten) return null;
    exifWritten = true;
    return orientationExif(orientation);
  };
}

const ORIENTATION_TAG = 0x0112;

/** An APP1 EXIF payload holding IFD0's Orientation and nothing else (little-endian TIFF, one entry). */
export function orientationExif(orientation: number): Uint8Array {
  const out = new Uint8Array(EXIF_SIGNATURE.length + 8 + 2 + 12 + 4);
  out.set(EXIF_SIGNATURE);
  const view = new DataView(out.buffer, EXIF_SIGNATURE.length);
  view.setUint16(0, 0x4949);
  view.setUint16(2, 42, true);
  view.setUint32(4, 8, true);
  view.setUint16(8, 1, true);
  view.setUint16(10, ORIENTATION_TAG, true);
  view.setUint16(12, 3, true);
  view.setUint32(14, 1, true);
  view.setUint16(18, orientation, true);
  return out;
}

/** A copy of an APP1 EXIF payload with IFD0's Orientation set to 1 (same length, nothing else moved). */
export function exifUpright(payload: Uint8Array): Uint8Array {
  const out = payload.slice();
  const tiff = 6;
  if (out.length < tiff + 8) return out;
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const order = view.getUint16(tiff);
  if (order !== 0x4949 && order !== 0x4d4d) return out;
  const little = order === 0x4949;
  const ifd = tiff + view.getUint32(tiff + 4, little);
  if (ifd + 2 > out.length) return out;
  const entries = view.getUint16(ifd, little);
  for (let i = 0; i < entries; i++) {
    const at = ifd + 2 + i * 12;
    if (at + 12 > out.length) break;
    if (view.getUint16(at, little) === ORIENTATION_TAG && view.getUint16(at + 2, little) === 3)
      view.setUint16(at + 8, 1, little);
  }
  return out;
}

/** XMP may repeat the orientation (tiff:Orientation); the digit is replaced in place, so lengths hold. */
export function xmpUpright(payload: Uint8Array): Uint8Array {
  const text = new TextDecoder('latin1').decode(payload);
  const fixed = text
    .replace(/(tiff:Orientation\s*=\s*["'])[2-8](["'])/g, '$11$2')
    .replace(/(<tiff:Orientation>\s*)[2-8](\s*<\/tiff:Orientation>)/g, '$11$2');
  if (fixed === text) return payload;
  return Uint8Array.from(fixed, (c) => c.charCodeAt(0));
}
