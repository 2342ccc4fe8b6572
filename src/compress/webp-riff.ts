// The WebP container (RIFF) around the engine's bitstreams: the input's metadata chunks read, the
// output's written. libwebp's encoder writes a bare VP8/VP8L (or VP8X + ALPH + VP8 with alpha) file;
// the metadata rules (ICC kept, EXIF and XMP only with metadata=keep, orientation reset to 1) are
// applied here, and the "never bigger" rewrite re-packs the input's own image chunks without the rest.
import { exifUpright, type ImageMetadata, type MetadataMode, xmpUpright } from './metadata.ts';
import type { JpegMarker } from '../../wasm/jpeg-engine.ts';
import { concatBytes } from '../bytes.ts';

export interface RiffChunk {
  tag: string;
  data: Uint8Array;
}

/** The chunks that make the image itself: everything else is metadata or animation. */
const IMAGE_CHUNKS = new Set(['ALPH', 'VP8 ', 'VP8L']);
const VP8X_ICC = 0x20;
const VP8X_ALPHA = 0x10;
const VP8X_EXIF = 0x08;
const VP8X_XMP = 0x04;
/** ICC profiles split into APP2 segments of at most this payload (65535 − 2 length − 14 signature bytes). */
const ICC_SEGMENT_BYTES = 65519;

const u32le = (b: Uint8Array, at: number): number =>
  (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** The top-level chunks after "RIFF....WEBP", as far as the file holds whole ones. */
export function riffChunks(b: Uint8Array): RiffChunk[] {
  const chunks: RiffChunk[] = [];
  const end = Math.min(b.length, 8 + u32le(b, 4));
  for (let at = 12; at + 8 <= end; ) {
    const size = u32le(b, at + 4);
    if (at + 8 + size > end) break;
    chunks.push({
      tag: String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!),
      data: b.subarray(at + 8, at + 8 + size),
    });
    at += 8 + size + (size & 1);
  }
  return chunks;
}

const EXIF_PREFIX = ascii('Exif\0\0');

/** The input's metadata that the output keeps under `mode`. An ICC profile for anything but RGB is dropped. */
export function webpMetadata(input: Uint8Array, mode: MetadataMode): ImageMetadata {
  const out: ImageMetadata = {};
  for (const { tag, data } of riffChunks(input)) {
    if (tag === 'ICCP' && data.length >= 20 && String.fromCharCode(...data.subarray(16, 20)) === 'RGB ') out.icc = data;
    if (mode !== 'keep') continue;
    if (tag === 'EXIF') {
      // exifUpright reads a JPEG APP1 payload; some writers keep that "Exif\0\0" prefix in WebP too.
      const prefixed = EXIF_PREFIX.every((c, i) => data[i] === c);
      const fixed = exifUpright(prefixed ? data : concatBytes([EXIF_PREFIX, data]));
      out.exif = fixed.subarray(EXIF_PREFIX.length);
    }
    if (tag === 'XMP ') out.xmp = xmpUpright(data);
  }
  return out;
}

/** The metadata as JPEG APPn segments: ICC in APP2 chunks, EXIF and XMP in APP1. */
export function jpegMarkersOf(meta: ImageMetadata): JpegMarker[] {
  const markers: JpegMarker[] = [];
  if (meta.exif) markers.push({ code: 0xe1, data: concatBytes([EXIF_PREFIX, meta.exif]) });
  if (meta.xmp) markers.push({ code: 0xe1, data: concatBytes([ascii('http://ns.adobe.com/xap/1.0/\0'), meta.xmp]) });
  if (meta.icc) {
    const count = Math.ceil(meta.icc.length / ICC_SEGMENT_BYTES);
    for (let i = 0; i < count && count <= 255; i++) {
      const part = meta.icc.subarray(i * ICC_SEGMENT_BYTES, (i + 1) * ICC_SEGMENT_BYTES);
      markers.push({ code: 0xe2, data: concatBytes([ascii('ICC_PROFILE\0'), new Uint8Array([i + 1, count]), part]) });
    }
  }
  return markers;
}

/**
 * A WebP file of the image chunks in `bitstream` (an encoder's output or an input) with `meta`: the
 * bare file when there is no metadata and no VP8X is needed, else VP8X, ICCP, the image, EXIF, XMP.
 */
export function packWebp(bitstream: Uint8Array, meta: ImageMetadata, width: number, height: number): Uint8Array {
  const chunks = riffChunks(bitstream);
  const image = chunks.filter((c) => IMAGE_CHUNKS.has(c.tag));
  const vp8l = image.find((c) => c.tag === 'VP8L');
  const alpha =
    image.some((c) => c.tag === 'ALPH') ||
    (vp8l !== undefined && vp8l.data.length >= 5 && ((u32le(vp8l.data, 1) >>> 28) & 1) === 1);
  const needsVp8x =
    meta.icc !== undefined || meta.exif !== undefined || meta.xmp !== undefined || image.some((c) => c.tag === 'ALPH');
  const body: RiffChunk[] = [];
  if (needsVp8x) {
    const vp8x = new Uint8Array(10);
    vp8x[0] =
      (meta.icc ? VP8X_ICC : 0) | (alpha ? VP8X_ALPHA : 0) | (meta.exif ? VP8X_EXIF : 0) | (meta.xmp ? VP8X_XMP : 0);
    for (let i = 0; i < 3; i++) {
      vp8x[4 + i] = ((width - 1) >> (8 * i)) & 0xff;
      vp8x[7 + i] = ((height - 1) >> (8 * i)) & 0xff;
    }
    body.push({ tag: 'VP8X', data: vp8x });
    if (meta.icc) body.push({ tag: 'ICCP', data: meta.icc });
  }
  body.push(...image);
  if (meta.exif) body.push({ tag: 'EXIF', data: meta.exif });
  if (meta.xmp) body.push({ tag: 'XMP ', data: meta.xmp });
  const parts: Uint8Array[] = [];
  for (const { tag, data } of body) {
    parts.push(ascii(tag), le32(data.length), data);
    if (data.length & 1) parts.push(new Uint8Array(1));
  }
  const payload = concatBytes(parts);
  return concatBytes([ascii('RIFF'), le32(4 + payload.length), ascii('WEBP'), payload]);
}

/**
 * An extended WebP (an animation: VP8X first) carrying `icc`: VP8X's ICC flag set and an ICCP chunk after
 * it, where the container wants it; the other chunks as they were.
 */
export function withIccProfile(webp: Uint8Array, icc: Uint8Array): Uint8Array {
  const chunks = riffChunks(webp);
  const [vp8x, ...rest] = chunks;
  if (vp8x?.tag !== 'VP8X') return webp;
  const flags = vp8x.data.slice();
  flags[0]! |= VP8X_ICC;
  const parts: Uint8Array[] = [];
  for (const { tag, data } of [
    { tag: 'VP8X', data: flags },
    { tag: 'ICCP', data: icc },
    ...rest.filter((c) => c.tag !== 'ICCP'),
  ]) {
    parts.push(ascii(tag), le32(data.length), data);
    if (data.length & 1) parts.push(new Uint8Array(1));
  }
  const payload = concatBytes(parts);
  return concatBytes([ascii('RIFF'), le32(4 + payload.length), ascii('WEBP'), payload]);
}

function le32(n: number): Uint8Array {
  return new Uint8Array([n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]);
}
