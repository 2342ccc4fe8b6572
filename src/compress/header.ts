// Reads what a file declares about itself — dimensions, EXIF orientation, completeness — from its
// structure alone, before any pixel is decoded: a decompression bomb is refused for the cost of
// reading a few headers.
import { orientationFromApp1, orientationFromTiff, type Orientation } from './exif.ts';
import { crc32 } from './crc32.ts';
import type { InputFormat } from './formats.ts';
import { MAX_JPEG_SCANS } from './limits.ts';
import {
  firstFrameHasAlpha,
  firstFrameIndexBytes,
  GifError,
  gifLimitBreach,
  readGifStructure,
} from './gif/structure.ts';
import { AvifError, readAvifStructure } from './avif-input/structure.ts';
import { avifDecoderBytes, avifSequenceBytes } from './avif-input/memory.ts';
import { animationLimitBreach } from './anim/limits.ts';
import { webpAnimDecoderBytes } from './anim/memory.ts';
import { readHeicStructure } from './heic-input/structure.ts';
import { heicDecoderBytes } from './heic-input/memory.ts';

export interface ImageHeader {
  width: number;
  height: number;
  orientation: Orientation;
  hasAlphaChannel: boolean;
  /** Why the file cannot be a whole image (truncated, malformed), or null when it looks whole. */
  defect: string | null;
  /** JPEG only: what the frame header says, for the memory estimate made before decoding. */
  jpeg?: JpegFrame;
  /** WebP only: whether the image is VP8L (lossless), which its decoder holds whole. */
  webp?: { lossless: boolean };
  /** PNG only: what IHDR says, for the memory estimate. */
  png?: PngFrame;
  /** GIF only: what its structure says, for the memory estimate and the GIF limits. */
  gif?: GifHeader;
  /** AVIF only: what its boxes say, for the memory estimate and X-Frames. */
  avif?: AvifHeader;
  /** HEIC only: what its boxes say, for the decoder and the memory estimate. */
  heic?: HeicHeader;
  /** An animated WebP or an AVIF sequence (more than one frame): for the plan and the animation limits. */
  animation?: AnimationHeader;
}

export interface AnimationHeader {
  frames: number;
  /** What the file is over of the animation limits (frames, frame pixels), or null: refused 422 `image_too_large`. */
  overLimit: string | null;
  /**
   * What decoding frames holds besides the still decoder the plan counts: an animated WebP's decoder (it
   * has no still one), an AVIF sequence's reference pictures (avif-input/memory.ts).
   */
  decoderBytes: number;
}

export interface HeicHeader {
  /** The picture's pixels as coded (its ispe, or its tile's where larger): the most the decoder is let decode. */
  codedPixels: number;
  /** The clean aperture's rectangle in the coded picture (the whole picture without `clap`). */
  crop: { x: number; y: number; width: number; height: number };
  /** What the decoder holds while rows are read out (heic-input/memory.ts). */
  decoderBytes: number;
  /** One picture, not a grid of tiles: decoded whole (heic-input/memory.ts `HEIC_SINGLE_PICTURE_MAX_PIXELS`). */
  singlePicture: boolean;
}

export interface AvifHeader {
  /** Images in a sequence; 1 for a still. */
  frames: number;
  /** Bits per sample of the AV1 coding (8, 10 or 12). */
  depth: number;
  /** The picture's pixels before its clean aperture (its ispe): the most the decoder is let decode. */
  codedPixels: number;
  /** A grid's cells (1: not a grid). */
  cells: number;
  /** What the decoder holds while rows are read out (avif-input/memory.ts). */
  decoderBytes: number;
}

export interface GifHeader {
  frames: number;
  /** The first frame's rectangle width (a row of its indices) and its interlaced indices held whole (0: none). */
  rowBytes: number;
  indexBytes: number;
  /** What the file is over of the GIF limits (frames, frame pixels), or null: refused 422 `image_too_large`. */
  overLimit: string | null;
}

export interface PngFrame {
  bitDepth: number;
  colourType: number;
  interlaced: boolean;
}

export interface JpegFrame {
  progressive: boolean;
  components: number;
  /** Stored samples per pixel over all components: 1.5 for 4:2:0 YCbCr, 3 for 4:4:4, 1 for grey. */
  samplesPerPixel: number;
  /** 8×8 blocks of all components the frame declares (without the padding of interleaved MCUs). */
  blocks: number;
  /** The fewest bits of coded data a block can take in this kind of frame; 0 where there is no bound (arithmetic coding). */
  minBitsPerBlock: number;
  /** Arithmetic-coded (SOF9–11, 13–15): libjxl's lossless transcode takes Huffman-coded frames only. */
  arithmetic: boolean;
}

/** The structure is too broken to even find the dimensions. */
export class MalformedImage extends Error {}

/** A well-formed file of a kind the service does not take: 415, not 422. */
export class UnsupportedImage extends Error {}

export function readHeader(format: InputFormat, bytes: Uint8Array): ImageHeader {
  switch (format) {
    case 'jpeg':
      return readJpeg(bytes);
    case 'png':
      return readPng(bytes);
    case 'webp':
      return readWebp(bytes);
    case 'gif':
      return readGif(bytes);
    case 'avif':
      return readAvif(bytes);
    case 'heic':
      return readHeic(bytes);
  }
}

const u16 = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;
const u32 = (b: Uint8Array, at: number): number =>
  ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;
const u24le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
const u32le = (b: Uint8Array, at: number): number =>
  (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const tag = (b: Uint8Array, at: number): string => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

// ---- JPEG: walk the marker segments; the entropy-coded data after each SOS runs to the next marker.

const SOF_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);
const EOI = 0xd9;
const SOS = 0xda;

// SOF2, SOF6, SOF10 and SOF14 are progressive; the decoder keeps every coefficient of those in memory.
const PROGRESSIVE_SOF = new Set([0xc2, 0xc6, 0xca, 0xce]);
const ARITHMETIC_SOF = new Set([0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/**
 * The fewest bits of entropy-coded data one block takes in a Huffman-coded frame, by SOF marker: every
 * Huffman code is at least 1 bit, a sequential scan codes a DC category and at least one AC symbol (EOB
 * or coefficients) per block (2 bits), and a progressive file's DC scan one DC category per block of
 * every component (1 bit; its AC scans can cover thousands of blocks with one end-of-band run). The
 * engine holds the same bound (SR_MIN_BITS_PER_BLOCK_* in wasm/src/sr_job.c); it is checked here as
 * well so that a file whose data cannot cover its frame is refused before memory is reserved for it.
 * Arithmetic-coded frames (SOF9–11) can take less than a bit per block and have no entry.
 */
export const JPEG_MIN_BITS_PER_BLOCK: ReadonlyMap<number, number> = new Map([
  [0xc0, 2],
  [0xc1, 2],
  [0xc2, 1],
]);

/** Components and their sampling factors from a SOF payload (after the length). */
function jpegFrame(b: Uint8Array, at: number, end: number, marker: number): JpegFrame {
  const components = b[at + 9] ?? 0;
  const factors: [number, number][] = [];
  for (let i = 0; i < components && at + 10 + i * 3 + 2 <= end; i++) {
    const hv = b[at + 11 + i * 3]!;
    factors.push([Math.max(1, hv >> 4), Math.max(1, hv & 15)]);
  }
  const maxH = Math.max(1, ...factors.map(([h]) => h));
  const maxV = Math.max(1, ...factors.map(([, v]) => v));
  const samplesPerPixel = factors.reduce((sum, [h, v]) => sum + (h * v) / (maxH * maxV), 0) || components;
  const width = u16(b, at + 7);
  const height = u16(b, at + 5);
  const blocks = factors.reduce(
    (sum, [h, v]) => sum + Math.ceil(Math.ceil((width * h) / maxH) / 8) * Math.ceil(Math.ceil((height * v) / maxV) / 8),
    0,
  );
  return {
    progressive: PROGRESSIVE_SOF.has(marker),
    components,
    samplesPerPixel,
    blocks,
    minBitsPerBlock: JPEG_MIN_BITS_PER_BLOCK.get(marker) ?? 0,
    arithmetic: ARITHMETIC_SOF.has(marker),
  };
}

/** Why the coded data cannot be the image the frame declares, or null when it may be. */
function jpegDataDefect(frame: JpegFrame | undefined, width: number, height: number, dataBytes: number): string | null {
  if (!frame || dataBytes * 8 >= frame.blocks * frame.minBitsPerBlock) return null;
  return `the JPEG is truncated: its ${dataBytes} bytes of image data cannot hold the ${width}×${height} pixels its header declares`;
}

function readJpeg(b: Uint8Array): ImageHeader {
  let width = 0;
  let height = 0;
  let jpeg: JpegFrame | undefined;
  let scans = 0;
  let orientation: Orientation | null = null;
  let at = 2; // after SOI
  let sawScan = false;
  // Entropy-coded bytes of the scans seen so far, and where the current scan's data began (-1: none open).
  let dataBytes = 0;
  let scanFrom = -1;
  while (at < b.length) {
    if (b[at] !== 0xff) {
      if (!sawScan) throw new MalformedImage('a JPEG marker was expected');
      // Entropy-coded data: the next marker is an 0xFF not followed by 0x00 (stuffing) or RSTn.
      const next = b.indexOf(0xff, at);
      if (next < 0) break;
      at = next;
      continue;
    }
    const marker = b[at + 1];
    if (marker === undefined) break;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0x00 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      if (!sawScan && marker === 0x00) throw new MalformedImage('a JPEG marker was expected');
      at += 2;
      continue;
    }
    if (scanFrom >= 0) {
      dataBytes += at - scanFrom;
      scanFrom = -1;
    }
    if (marker === EOI) {
      if (!sawScan) break;
      return {
        width,
        height,
        orientation: orientation ?? 1,
        hasAlphaChannel: false,
        defect: jpegDataDefect(jpeg, width, height, dataBytes),
        jpeg,
      };
    }
    if (at + 4 > b.length) break;
    const length = u16(b, at + 2);
    if (length < 2) throw new MalformedImage('a JPEG segment has an impossible length');
    const end = at + 2 + length;
    if (SOF_MARKERS.has(marker)) {
      if (end > b.length) break;
      height = u16(b, at + 5);
      width = u16(b, at + 7);
      if (width === 0 || height === 0) throw new MalformedImage('the JPEG frame declares no width or height');
      jpeg = jpegFrame(b, at, end, marker);
    } else if (marker === 0xe1 && orientation === null && end <= b.length) {
      orientation = orientationFromApp1(b.subarray(at + 4, end));
    } else if (marker === SOS) {
      if (width === 0) throw new MalformedImage('the JPEG has image data before its frame header');
      sawScan = true;
      // Each scan of a progressive file is a pass over every coefficient: thousands of tiny scans
      // would cost minutes of CPU for a small file.
      if (++scans > MAX_JPEG_SCANS) throw new MalformedImage(`the JPEG has more than ${MAX_JPEG_SCANS} scans`);
      scanFrom = end;
    }
    at = end;
  }
  if (width === 0) throw new MalformedImage('the JPEG ends before its frame header');
  if (scanFrom >= 0) dataBytes += Math.max(0, b.length - scanFrom);
  const defect =
    jpegDataDefect(jpeg, width, height, dataBytes) ?? 'the JPEG is truncated: it ends before its end-of-image marker';
  return { width, height, orientation: orientation ?? 1, hasAlphaChannel: false, defect, jpeg };
}

// ---- PNG: IHDR first; eXIf, if any, before the image data; IEND last.

const CRITICAL_CHUNKS = new Set(['IHDR', 'PLTE', 'IDAT', 'IEND']);

function readPng(b: Uint8Array): ImageHeader {
  if (b.length < 33 || tag(b, 12) !== 'IHDR') throw new MalformedImage('the PNG does not start with its IHDR header');
  const width = u32(b, 16);
  const height = u32(b, 20);
  if (width === 0 || height === 0) throw new MalformedImage('the PNG header declares no width or height');
  const colourType = b[25]!;
  const png: PngFrame = { bitDepth: b[24]!, colourType, interlaced: b[28] === 1 };
  let hasAlphaChannel = colourType === 4 || colourType === 6;
  let orientation: Orientation = 1;
  // What the chunks read so far say, with the defect found (null: none) when the walk stops.
  const header = (defect: string | null): ImageHeader => ({ width, height, orientation, hasAlphaChannel, png, defect });
  let at = 8;
  while (at + 8 <= b.length) {
    const length = u32(b, at);
    const type = tag(b, at + 4);
    const end = at + 12 + length;
    if (end > b.length) break;
    // Checked here, from the header alone, so a damaged critical chunk is refused before any memory is
    // reserved for it (png/chunks.ts checks every chunk again as the decoder reads them).
    if (CRITICAL_CHUNKS.has(type) && crc32(b.subarray(at + 4, at + 8 + length)) !== u32(b, at + 8 + length)) {
      return header(`the PNG is corrupt: its ${type} chunk fails its checksum`);
    }
    if (type === 'tRNS') hasAlphaChannel = true;
    else if (type === 'eXIf') orientation = orientationFromTiff(b.subarray(at + 8, at + 8 + length));
    else if (type === 'IEND') return header(null);
    at = end;
  }
  return header('the PNG is truncated: it ends before its IEND chunk');
}

// ---- WebP: RIFF container; the first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended).

function readWebp(b: Uint8Array): ImageHeader {
  if (b.length < 30) throw new MalformedImage('the WebP is too short to hold a header');
  const riffEnd = 8 + u32le(b, 4);
  let defect: string | null = riffEnd > b.length ? 'the WebP is truncated: shorter than its RIFF header says' : null;
  const first = tag(b, 12);
  let width: number;
  let height: number;
  let hasAlphaChannel = false;
  let orientation: Orientation = 1;
  let animation: AnimationHeader | undefined;
  if (first === 'VP8 ') {
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a)
      throw new MalformedImage('the WebP lossy frame has no start code');
    width = (b[26]! | (b[27]! << 8)) & 0x3fff;
    height = (b[28]! | (b[29]! << 8)) & 0x3fff;
  } else if (first === 'VP8L') {
    if (b[20] !== 0x2f) throw new MalformedImage('the WebP lossless stream has no signature');
    const bits = u32le(b, 21);
    width = (bits & 0x3fff) + 1;
    height = ((bits >>> 14) & 0x3fff) + 1;
    hasAlphaChannel = ((bits >>> 28) & 1) === 1;
  } else if (first === 'VP8X') {
    const flags = b[20]!;
    hasAlphaChannel = (flags & 0x10) !== 0;
    width = u24le(b, 24) + 1;
    height = u24le(b, 27) + 1;
    if (flags & 0x02) {
      const frames = countChunks(b, Math.min(riffEnd, b.length), 'ANMF');
      if (frames === 0 && defect === null) defect = 'the animated WebP has no frames';
      animation = {
        frames,
        overLimit: animationLimitBreach('animated WebP', frames, width, height),
        decoderBytes: webpAnimDecoderBytes(width, height, b.length),
      };
    }
    if (flags & 0x08) orientation = webpExifOrientation(b, Math.min(riffEnd, b.length));
  } else {
    throw new MalformedImage(`the WebP starts with an unknown chunk "${first.replace(/[^\x20-\x7e]/g, '?')}"`);
  }
  if (width === 0 || height === 0) throw new MalformedImage('the WebP declares no width or height');
  defect ??= webpChunksDefect(b, Math.min(riffEnd, b.length));
  const lossless = first === 'VP8L' || (first === 'VP8X' && hasChunk(b, Math.min(riffEnd, b.length), 'VP8L'));
  return {
    width,
    height,
    orientation,
    hasAlphaChannel,
    defect,
    webp: { lossless },
    ...(animation ? { animation } : {}),
  };
}

function webpExifOrientation(b: Uint8Array, end: number): Orientation {
  for (let at = 12; at + 8 <= end; at += 8 + u32le(b, at + 4) + (u32le(b, at + 4) & 1)) {
    if (tag(b, at) === 'EXIF') {
      const payload = b.subarray(at + 8, Math.min(end, at + 8 + u32le(b, at + 4)));
      // Some writers keep JPEG's "Exif\0\0" prefix in front of the TIFF block.
      return orientationFromApp1(payload) ?? orientationFromTiff(payload);
    }
  }
  return 1;
}

function countChunks(b: Uint8Array, end: number, name: string): number {
  let n = 0;
  for (let at = 12; at + 8 <= end; at += 8 + u32le(b, at + 4) + (u32le(b, at + 4) & 1)) if (tag(b, at) === name) n++;
  return n;
}

function hasChunk(b: Uint8Array, end: number, name: string): boolean {
  for (let at = 12; at + 8 <= end; at += 8 + u32le(b, at + 4) + (u32le(b, at + 4) & 1))
    if (tag(b, at) === name) return true;
  return false;
}

function webpChunksDefect(b: Uint8Array, end: number): string | null {
  for (let at = 12; at < end; ) {
    if (at + 8 > end) return 'the WebP is truncated inside a chunk header';
    const size = u32le(b, at + 4);
    if (at + 8 + size > end) return `the WebP is truncated: its ${tag(b, at).trim()} chunk is incomplete`;
    at += 8 + size + (size & 1);
  }
  return null;
}

// ---- GIF: the logical screen, then extensions and images to the trailer (gif/structure.ts).

function readGif(b: Uint8Array): ImageHeader {
  let info;
  try {
    info = readGifStructure(b);
  } catch (err) {
    if (err instanceof GifError) throw new MalformedImage(err.message);
    throw err;
  }
  const first = info.frames[0];
  return {
    width: info.width,
    height: info.height,
    orientation: 1,
    hasAlphaChannel: firstFrameHasAlpha(info),
    defect: info.defect,
    gif: {
      frames: info.frameCount,
      rowBytes: first?.width ?? 0,
      indexBytes: firstFrameIndexBytes(info),
      overLimit: gifLimitBreach(info),
    },
  };
}

// ---- AVIF: ISOBMFF boxes; the primary item's properties (avif-input/structure.ts).

/** A HEIF-family file's structure, its box reader's faults as MalformedImage. */
function heifStructure<T>(read: (b: Uint8Array) => T, b: Uint8Array): T {
  try {
    return read(b);
  } catch (err) {
    if (err instanceof AvifError) throw new MalformedImage(err.message);
    throw err;
  }
}

function readAvif(b: Uint8Array): ImageHeader {
  const info = heifStructure(readAvifStructure, b);
  return {
    width: info.width,
    height: info.height,
    orientation: info.orientation,
    hasAlphaChannel: info.alpha,
    defect: info.defect,
    avif: {
      frames: info.frames,
      depth: info.av1.depth,
      codedPixels: info.codedWidth * info.codedHeight,
      cells: info.cell.count,
      decoderBytes: avifDecoderBytes(info),
    },
    ...(info.frames > 1
      ? {
          animation: {
            frames: info.frames,
            overLimit: animationLimitBreach('AVIF sequence', info.frames, info.width, info.height),
            decoderBytes: avifSequenceBytes(info),
          },
        }
      : {}),
  };
}

// ---- HEIC: the same HEIF boxes as AVIF's, with HEVC items (heic-input/structure.ts).

function readHeic(b: Uint8Array): ImageHeader {
  const info = heifStructure(readHeicStructure, b);
  return {
    width: info.width,
    height: info.height,
    orientation: info.orientation,
    hasAlphaChannel: info.alpha,
    defect: info.defect,
    heic: {
      // A grid of one tile is padded past the picture (heif-enc 1.15's for an odd side or one under 64 px), and
      // libheif's limit applies to every item's ispe: the tile's too.
      codedPixels: Math.max(info.codedWidth * info.codedHeight, info.cell.width * info.cell.height),
      crop: info.crop ?? { x: 0, y: 0, width: info.width, height: info.height },
      decoderBytes: heicDecoderBytes(info),
      singlePicture: info.cell.count === 1,
    },
  };
}
