// A JPEG's head segments (everything before its first scan) at the byte level, with where each payload
// sits in the file: MPF offsets count from inside one of them. Reads only what lies inside `bytes`.

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

const SOS = 0xda;
const EOI = 0xd9;
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

export const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
/** Bytes as characters 0–255, one each (TextDecoder's "latin1" is windows-1252, which moves 0x80–0x9F). */
export function latin1(bytes: Uint8Array): string {
  let text = '';
  for (let at = 0; at < bytes.length; at += 8192) text += String.fromCharCode(...bytes.subarray(at, at + 8192));
  return text;
}

export const startsWith = (data: Uint8Array, prefix: Uint8Array): boolean =>
  data.length >= prefix.length && prefix.every((b, i) => data[i] === b);
