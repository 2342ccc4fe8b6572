// Byte and text helpers of the gain-map code (XMP is read as latin1 text, signatures compared as bytes).
// The JPEG's segments themselves are read and written by ../jpeg-segments.ts.

export const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
/** Bytes as characters 0–255, one each (TextDecoder's "latin1" is windows-1252, which moves 0x80–0x9F). */
export function latin1(bytes: Uint8Array): string {
  let text = '';
  for (let at = 0; at < bytes.length; at += 8192) text += String.fromCharCode(...bytes.subarray(at, at + 8192));
  return text;
}

export const startsWith = (data: Uint8Array, prefix: Uint8Array): boolean =>
  data.length >= prefix.length && prefix.every((b, i) => data[i] === b);
