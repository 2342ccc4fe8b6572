// A GIF's structure, read without decoding a pixel: the logical screen and its global colour table, and
// for each frame its rectangle, colour table, interlacing, the graphic control extension before it
// (transparency index, disposal method, delay), and where its LZW data lies; the NETSCAPE2.0 loop count.
// Sub-blocks are skipped by their lengths, so a 10 MB file is walked in a few milliseconds. The limits
// (frames, frame pixels, LZW data per frame) are checked against what this walk counts, before decoding.
import {
  GIF_LZW_ALLOWANCE_BYTES,
  MAX_GIF_FRAME_PIXELS,
  MAX_GIF_FRAMES,
  MAX_GIF_LZW_BYTES_PER_PIXEL,
} from '../limits.ts';

/** The file cannot be decoded; the message says why (the pipeline answers 422). */
export class GifError extends Error {}

/** 0 and 1 leave the frame in place, 2 clears its rectangle to transparent, 3 restores what was there before it. */
export type Disposal = 0 | 1 | 2 | 3;

export interface GifFrame {
  /** The frame's rectangle on the logical screen (it may reach past the screen's edges: clipped when drawn). */
  left: number;
  top: number;
  width: number;
  height: number;
  interlaced: boolean;
  /** The colour table that applies: the frame's local one, else the global one; RGB triplets. */
  palette: Uint8Array;
  transparentIndex: number | null;
  disposal: Disposal;
  /** The graphic control extension's delay, in milliseconds as written (hundredths of a second × 10). */
  delayMs: number;
  minCodeSize: number;
  /** Offset of the first sub-block (its length byte) of the LZW data, and the data's bytes in all. */
  dataAt: number;
  dataBytes: number;
}

export interface GifInfo {
  /** The logical screen. */
  width: number;
  height: number;
  /** The frames in order: all of them up to MAX_GIF_FRAMES (`frameCount` counts every one). */
  frames: GifFrame[];
  frameCount: number;
  /** Σ over frames of max(screen, rectangle) pixels: the MAX_GIF_FRAME_PIXELS measure. */
  framePixels: number;
  /** NETSCAPE2.0 loop count (0: forever), or null when the file has none (played once). */
  loopCount: number | null;
  /** Why the file is not whole (cut inside a block), or null. A missing trailer after whole frames is tolerated. */
  defect: string | null;
}

const u16le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8);
const ascii = (b: Uint8Array, at: number, n: number): string =>
  String.fromCharCode(...b.subarray(at, Math.min(b.length, at + n)));

const EXTENSION = 0x21;
const IMAGE = 0x2c;
const TRAILER = 0x3b;
const GRAPHIC_CONTROL = 0xf9;
const APPLICATION = 0xff;

/** Whether the bytes start with a GIF signature (87a or 89a). */
const isGif = (b: Uint8Array): boolean => b.length >= 6 && (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a');

class Truncated extends Error {}

/** Reads the structure; throws GifError when it is not a GIF this service can decode. */
export function readGifStructure(b: Uint8Array): GifInfo {
  if (!isGif(b)) throw new GifError('it does not start with GIF87a or GIF89a');
  if (b.length < 13) throw new GifError('it ends inside its logical screen descriptor');
  const width = u16le(b, 6);
  const height = u16le(b, 8);
  if (width === 0 || height === 0) throw new GifError('its logical screen declares no width or height');
  const packed = b[10]!;
  let at = 13;
  let globalPalette: Uint8Array | null = null;
  if (packed & 0x80) {
    const size = 3 * (2 << (packed & 7));
    if (at + size > b.length) throw new GifError('it ends inside its global colour table');
    globalPalette = b.subarray(at, at + size);
    at += size;
  }
  const info: GifInfo = { width, height, frames: [], frameCount: 0, framePixels: 0, loopCount: null, defect: null };
  // The graphic control extension applies to the next image only.
  let control: { transparentIndex: number | null; disposal: Disposal; delayMs: number } | null = null;

  /** Skips sub-blocks from `from`; returns the offset after the terminator and the data bytes. */
  const subBlocks = (from: number): [end: number, bytes: number] => {
    let p = from;
    let bytes = 0;
    for (;;) {
      if (p >= b.length) throw new Truncated();
      const n = b[p]!;
      if (n === 0) return [p + 1, bytes];
      bytes += n;
      p += 1 + n;
    }
  };

  try {
    while (at < b.length) {
      const introducer = b[at]!;
      if (introducer === TRAILER) break;
      if (introducer === EXTENSION) {
        if (at + 2 > b.length) throw new Truncated();
        const label = b[at + 1]!;
        const body = at + 2;
        if (label === GRAPHIC_CONTROL && b[body] === 4) {
          if (body + 6 > b.length) throw new Truncated();
          const flags = b[body + 1]!;
          const method = (flags >> 2) & 7;
          control = {
            // Methods 4–7 are undefined: drawn as "leave in place", as browsers do.
            disposal: (method <= 3 ? method : 1) as Disposal,
            delayMs: u16le(b, body + 2) * 10,
            transparentIndex: flags & 1 ? b[body + 4]! : null,
          };
        } else if (label === APPLICATION && b[body] === 11 && body + 12 <= b.length) {
          const name = ascii(b, body + 1, 11);
          const data = body + 12;
          if (
            (name === 'NETSCAPE2.0' || name === 'ANIMEXTS1.0') &&
            b[data] === 3 &&
            b[data + 1] === 1 &&
            data + 4 <= b.length
          )
            info.loopCount = u16le(b, data + 2);
        } else if (label === 0x01) {
          // A plain text extension takes the graphic control extension before it; no browser draws its text.
          control = null;
        }
        at = subBlocks(body)[0];
        continue;
      }
      if (introducer !== IMAGE) {
        throw new GifError(
          `a block starts with the unknown byte 0x${introducer.toString(16).padStart(2, '0')} at offset ${at}`,
        );
      }
      if (at + 10 > b.length) throw new Truncated();
      const frame = {
        left: u16le(b, at + 1),
        top: u16le(b, at + 3),
        width: u16le(b, at + 5),
        height: u16le(b, at + 7),
      };
      const flags = b[at + 9]!;
      at += 10;
      let palette = globalPalette;
      if (flags & 0x80) {
        const size = 3 * (2 << (flags & 7));
        if (at + size > b.length) throw new Truncated();
        palette = b.subarray(at, at + size);
        at += size;
      }
      const n = info.frameCount + 1;
      if (frame.width === 0 || frame.height === 0) throw new GifError(`frame ${n} declares no width or height`);
      if (!palette) throw new GifError(`frame ${n} has no colour table (neither its own nor a global one)`);
      if (at >= b.length) throw new Truncated();
      const minCodeSize = b[at]!;
      if (minCodeSize < 1 || minCodeSize > 8)
        throw new GifError(
          `frame ${n} declares an LZW code size of ${minCodeSize} (it must be 1 to 8; GIF writers use 2 to 8)`,
        );
      const dataAt = at + 1;
      const [end, dataBytes] = subBlocks(dataAt);
      const pixels = frame.width * frame.height;
      if (dataBytes > pixels * MAX_GIF_LZW_BYTES_PER_PIXEL + GIF_LZW_ALLOWANCE_BYTES)
        throw new GifError(
          `frame ${n} carries ${dataBytes} bytes of image data, more than its ${frame.width}×${frame.height} pixels can need ` +
            `(at most ${MAX_GIF_LZW_BYTES_PER_PIXEL} a pixel and ${GIF_LZW_ALLOWANCE_BYTES} more)`,
        );
      info.frameCount = n;
      info.framePixels += Math.max(width * height, pixels);
      if (info.frames.length < MAX_GIF_FRAMES) {
        info.frames.push({
          ...frame,
          interlaced: (flags & 0x40) !== 0,
          palette,
          transparentIndex: control?.transparentIndex ?? null,
          disposal: control?.disposal ?? 0,
          delayMs: control?.delayMs ?? 0,
          minCodeSize,
          dataAt,
          dataBytes,
        });
      }
      control = null;
      at = end;
    }
  } catch (err) {
    if (!(err instanceof Truncated)) throw err;
    info.defect = 'the GIF is truncated: it ends inside a block';
    return info;
  }
  if (info.frameCount === 0) info.defect = 'the GIF has no image';
  return info;
}

/** What the file is over, as a sentence, or null when it is within the GIF limits. */
export function gifLimitBreach(info: GifInfo): string | null {
  if (info.frameCount > MAX_GIF_FRAMES) return `the GIF has ${info.frameCount} frames; the limit is ${MAX_GIF_FRAMES}`;
  if (info.framePixels > MAX_GIF_FRAME_PIXELS)
    return (
      `the GIF's ${info.frameCount} frame${info.frameCount === 1 ? '' : 's'} come to ${(info.framePixels / 1e6).toFixed(1)} megapixels ` +
      `(each counts the larger of its ${info.width}×${info.height} screen and its own rectangle); the limit is ${MAX_GIF_FRAME_PIXELS / 1e6} megapixels of frames`
    );
  return null;
}

/** The part of a frame's rectangle inside the screen: columns [x0, x1) and rows [y0, y1) of the screen. */
export function visibleRect(info: { width: number; height: number }, frame: GifFrame) {
  const x0 = Math.min(frame.left, info.width);
  const y0 = Math.min(frame.top, info.height);
  return {
    x0,
    y0,
    x1: Math.min(frame.left + frame.width, info.width),
    y1: Math.min(frame.top + frame.height, info.height),
  };
}

/** Whether the first frame shows transparency: where it does not cover the screen, or where its transparency index is. */
export function firstFrameHasAlpha(info: GifInfo): boolean {
  const first = info.frames[0];
  if (!first) return true;
  const covers = first.left === 0 && first.top === 0 && first.width >= info.width && first.height >= info.height;
  return !covers || first.transparentIndex !== null;
}

/** Bytes the first frame's decoding holds besides its rows: an interlaced frame's visible indices. */
export function firstFrameIndexBytes(info: GifInfo): number {
  const frame = info.frames[0];
  if (!frame?.interlaced) return 0;
  const { x0, x1, y0, y1 } = visibleRect(info, frame);
  return (x1 - x0) * (y1 - y0);
}

/** Display rows of a frame of `height` rows in the order its data gives them (interlaced: the four passes). */
export function rowOrder(height: number, interlaced: boolean): Uint32Array {
  const order = new Uint32Array(height);
  if (!interlaced) {
    for (let y = 0; y < height; y++) order[y] = y;
    return order;
  }
  let i = 0;
  for (const [start, step] of INTERLACE_PASSES) for (let y = start; y < height; y += step) order[i++] = y;
  return order;
}

/** Interlaced GIF: each pass's first row and step. */
const INTERLACE_PASSES = [
  [0, 8],
  [4, 8],
  [2, 4],
  [1, 2],
] as const;
