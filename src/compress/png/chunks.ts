// PNG chunk framing: reading the chunk list of a file (lengths and CRCs checked) and writing chunks.
// The pixels themselves are in png/decoder.ts and png/encoder.ts.
import { crc32 } from '../crc32.ts';
import { concatBytes } from '../../bytes.ts';

export const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

export interface Chunk {
  type: string;
  /** A view into the file, not a copy. */
  data: Uint8Array;
}

/** The file cannot be decoded: the message says why, for a 422. */
export class PngError extends Error {}

const u32 = (b: Uint8Array, at: number): number =>
  ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;
const tagOf = (b: Uint8Array, at: number): string => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/**
 * Every chunk up to IEND, in order. A CRC that fails on a critical chunk refuses the file; on an
 * ancillary chunk it drops that chunk (a damaged text chunk must not cost the image). A file that ends
 * before IEND is refused: its last rows would be invented.
 */
export function readChunks(bytes: Uint8Array): Chunk[] {
  for (let i = 0; i < 8; i++)
    if (bytes[i] !== PNG_SIGNATURE[i]) throw new PngError('it does not start with the PNG signature');
  const chunks: Chunk[] = [];
  let at = 8;
  for (;;) {
    if (at + 12 > bytes.length) throw new PngError('it is truncated: it ends before its IEND chunk');
    const length = u32(bytes, at);
    const type = tagOf(bytes, at + 4);
    if (!/^[A-Za-z]{4}$/.test(type)) throw new PngError('a chunk has an invalid type');
    const end = at + 12 + length;
    if (length > 0x7fffffff || end > bytes.length) throw new PngError(`it is truncated inside its ${type} chunk`);
    const critical = (type.charCodeAt(0) & 0x20) === 0;
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== u32(bytes, at + 8 + length)) {
      if (critical) throw new PngError(`its ${type} chunk fails its checksum`);
    } else {
      chunks.push({ type, data: bytes.subarray(at + 8, at + 8 + length) });
    }
    if (type === 'IEND') return chunks;
    at = end;
  }
}

/** One chunk's bytes: length, type, data, CRC. */
export function chunkBytes(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** Inserts chunks right after IHDR (where colour and metadata chunks may all stand) of a PNG we wrote. */
export function insertAfterIhdr(png: Uint8Array, chunks: Chunk[]): Uint8Array {
  if (chunks.length === 0) return png;
  const ihdrEnd = 8 + 12 + 13;
  return concatBytes([
    png.subarray(0, ihdrEnd),
    ...chunks.map((c) => chunkBytes(c.type, c.data)),
    png.subarray(ihdrEnd),
  ]);
}
