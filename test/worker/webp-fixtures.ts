// WebP fixtures made by the tests: encoded by @jsquash's libwebp (an encoder independent of the engine
// under test) and put into containers written here by hand: metadata chunks, animation.
import type { RgbaImage } from '../../wasm/image.ts';
import { encodeWebp } from '../../wasm/webp.ts';
import { webpOptions } from '../../src/compress/encoders.ts';
import { concat, exifTiff } from './image-fixtures.ts';

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const le32 = (n: number): Uint8Array =>
  new Uint8Array([n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]);
const le24 = (n: number): number[] => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff];
const u32le = (b: Uint8Array, at: number): number =>
  (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

export const lossyWebp = (image: RgbaImage, quality = 90): Uint8Array => encodeWebp(image, webpOptions(quality));
export const losslessWebp = (image: RgbaImage): Uint8Array =>
  encodeWebp(image, { ...webpOptions(75), lossless: 1, exact: 1 });

export interface Chunk {
  tag: string;
  data: Uint8Array;
}

/** The top-level chunks of a WebP file. */
export function chunksOf(bytes: Uint8Array): Chunk[] {
  const out: Chunk[] = [];
  for (let at = 12; at + 8 <= bytes.length; ) {
    const size = u32le(bytes, at + 4);
    out.push({ tag: String.fromCharCode(...bytes.subarray(at, at + 4)), data: bytes.subarray(at + 8, at + 8 + size) });
    at += 8 + size + (size & 1);
  }
  return out;
}

export const channelsOf = (bytes: Uint8Array): string[] => chunksOf(bytes).map((c) => c.tag);

export function riff(chunks: Chunk[]): Uint8Array {
  const body = concat(
    ...chunks.flatMap(({ tag, data }) => [ascii(tag), le32(data.length), data, new Uint8Array(data.length & 1)]),
  );
  return concat(ascii('RIFF'), le32(4 + body.length), ascii('WEBP'), body);
}

/** A VP8X header chunk with these flags for a width × height canvas. */
export function vp8x(flags: number, width: number, height: number): Chunk {
  return { tag: 'VP8X', data: new Uint8Array([flags, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]) };
}

/** A minimal ICC header: 128 bytes with the colour space at 16–19 ('RGB ' unless told). */
export function iccProfile(space = 'RGB ', length = 300): Uint8Array {
  const icc = new Uint8Array(length);
  icc.set(le32(length).reverse(), 0);
  icc.set(ascii(space), 16);
  icc.set(ascii('acsp'), 36);
  return icc;
}

export const XMP = ascii('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:Description tiff:Orientation="6"/></x:xmpmeta>');

/** The still WebP with ICCP, EXIF (orientation) and XMP chunks, in an extended container. */
export function withMetadata(
  still: Uint8Array,
  width: number,
  height: number,
  parts: { icc?: Uint8Array; orientation?: number; xmp?: Uint8Array },
): Uint8Array {
  const image = chunksOf(still).filter((c) => ['ALPH', 'VP8 ', 'VP8L'].includes(c.tag));
  const alpha = image.some((c) => c.tag === 'ALPH') ? 0x10 : 0;
  const flags = alpha | (parts.icc ? 0x20 : 0) | (parts.orientation ? 0x08 : 0) | (parts.xmp ? 0x04 : 0);
  return riff([
    vp8x(flags, width, height),
    ...(parts.icc ? [{ tag: 'ICCP', data: parts.icc }] : []),
    ...image,
    ...(parts.orientation ? [{ tag: 'EXIF', data: exifTiff(parts.orientation) }] : []),
    ...(parts.xmp ? [{ tag: 'XMP ', data: parts.xmp }] : []),
  ]);
}

/** A two-frame animation (ANIM + ANMF chunks) of 16×16 lossy frames. */
export function animatedWebp(): Uint8Array {
  const frame = (colour: number) => {
    const image = {
      data: new Uint8Array(16 * 16 * 4).map((_, i) => (i % 4 === 3 ? 255 : colour)),
      width: 16,
      height: 16,
    };
    const vp8 = chunksOf(lossyWebp(image, 80)).find((c) => c.tag === 'VP8 ')!;
    const header = new Uint8Array([...le24(0), ...le24(0), ...le24(15), ...le24(15), ...le24(100), 0]);
    return {
      tag: 'ANMF',
      data: concat(header, ascii('VP8 '), le32(vp8.data.length), vp8.data, new Uint8Array(vp8.data.length & 1)),
    };
  };
  return riff([vp8x(0x02, 16, 16), { tag: 'ANIM', data: new Uint8Array([0, 0, 0, 0, 0, 0]) }, frame(40), frame(200)]);
}
