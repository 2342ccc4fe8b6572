// JPEG segments at the byte level, read and written here once: `headSegments` lists a JPEG's head
// segments (everything before its first scan) with where each payload sits in the file (MPF offsets
// count from inside one of them), `segmentBytes` writes one. `stripJpeg` is the cheapest lossless rewrite of an upright JPEG: its
// coded data copied byte for byte, its metadata segments filtered (metadata.ts), anything after the
// end-of-image marker (MPF secondary images, gain maps, motion-photo videos) dropped; it can never be
// larger than the input, and an input whose entropy coding beats libjpeg's (MozJPEG's optimised scans)
// keeps that coding this way.
import { concatBytes } from '../bytes.ts';

const SOS = 0xda;
const EOI = 0xd9;
const APP0 = 0xe0;
const APP14 = 0xee;
const COM = 0xfe;

/** Tables, frame, scans, restart interval, JFIF (APP0) and Adobe (APP14, which says how to read the colours) stay. */
const isMetadata = (marker: number): boolean => (marker > APP0 && marker < APP14) || marker === 0xef || marker === COM;

export interface HeadSegment {
  code: number;
  /** Offset of the segment's 0xFF in `bytes`. */
  start: number;
  /** Offset of the payload (after the length field). */
  at: number;
  /** Offset just past the segment. */
  end: number;
  data: Uint8Array;
}

const TEM = 0x01;
const isStandalone = (marker: number): boolean => marker === TEM || (marker >= 0xd0 && marker <= 0xd7);

/** The segments between SOI and the first SOS; null when `bytes` is no JPEG or a length runs out of it. */
export function headSegments(bytes: Uint8Array): HeadSegment[] | null {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return null;
  const out: HeadSegment[] = [];
  let at = 2;
  while (at + 1 < bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === SOS || marker === EOI) return out;
    if (isStandalone(marker)) {
      at += 2;
      continue;
    }
    if (at + 4 > bytes.length) return null;
    const end = at + 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!);
    if (end > bytes.length || end < at + 4) return null;
    out.push({ code: marker, start: at, at: at + 4, end, data: bytes.subarray(at + 4, end) });
    at = end;
  }
  return null;
}

/** A marker segment: 0xFF, the code, the length (payload + 2), the payload. */
export function segmentBytes(code: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(payload.length + 4);
  out[0] = 0xff;
  out[1] = code;
  out[2] = (payload.length + 2) >> 8;
  out[3] = (payload.length + 2) & 0xff;
  out.set(payload, 4);
  return out;
}

/**
 * Rewrites `bytes` keeping every segment but metadata, for which `filter` gives the payload to keep
 * (or null). Returns null when the structure is not what the header reader accepted (the caller then
 * has other rewrites).
 */
export function stripJpeg(
  bytes: Uint8Array,
  filter: (marker: { code: number; data: Uint8Array }) => Uint8Array | null,
): Uint8Array | null {
  const parts: Uint8Array[] = [bytes.subarray(0, 2)];
  let at = 2;
  while (at + 1 < bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === EOI) {
      parts.push(bytes.subarray(at, at + 2));
      return concatBytes(parts);
    }
    if (at + 4 > bytes.length) return null;
    const end = at + 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!);
    if (end > bytes.length) return null;
    if (isMetadata(marker)) {
      const kept = filter({ code: marker, data: bytes.subarray(at + 4, end) });
      if (kept) parts.push(segmentBytes(marker, kept));
      at = end;
      continue;
    }
    if (marker !== SOS) {
      parts.push(bytes.subarray(at, end));
      at = end;
      continue;
    }
    // A scan: its header, then entropy-coded data up to the next marker that is not a stuffed 0xFF00 or RSTn.
    let next = end;
    for (;;) {
      next = bytes.indexOf(0xff, next);
      if (next < 0 || next + 1 >= bytes.length) return null;
      const after = bytes[next + 1]!;
      if (after === 0x00 || (after >= 0xd0 && after <= 0xd7) || after === 0xff) next++;
      else break;
    }
    parts.push(bytes.subarray(at, next));
    at = next;
  }
  return null;
}
