// PNG decoding in rows. The chunks before the image data (IHDR, PLTE, tRNS, the colour and metadata
// chunks) are read first; the IDAT data is then inflated a bounded piece at a time (png/inflate.ts: the
// window and INFLATE_STEP_BYTES, whatever the compression ratio), unfiltered row by row and handed on
// as 8-bit RGBA rows. Memory: two rows of the input and the inflater's pieces, whatever its height.
// Adam7 interlaced files are the exception: their passes are kept at one sample per byte (two at 16
// bits) until the last pass completes the rows.
import { PngError, readChunks, type Chunk } from './chunks.ts';
import { unfilter } from './filters.ts';
import { Inflater } from './inflate.ts';
import { giveWay } from '../../../wasm/give-way.ts';

export interface PngInfo {
  width: number;
  height: number;
  bitDepth: number;
  /** 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA. */
  colourType: number;
  interlaced: boolean;
  /** Samples per pixel: 1, 2, 3 or 4 (a palette index is one). */
  channels: number;
  /** Palette entries as RGBA (tRNS alpha applied), 4 bytes each. */
  palette: Uint8Array | null;
  /** tRNS of a grey or RGB image: the sample values (at the file's depth) that are transparent. */
  transparentKey: number[] | null;
  /** Whether any pixel can be less than opaque (an alpha channel or tRNS). */
  hasAlpha: boolean;
  /** The ancillary chunks, in order, for the metadata rules (png/metadata.ts). */
  ancillary: Chunk[];
  /** The image data, as the file cuts it (empty IDATs included). */
  idat: Uint8Array[];
}

const DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** Adam7: x start, y start, x step, y step of each pass. */
export const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

const u32 = (b: Uint8Array, at: number): number =>
  ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;

/** Reads the chunk list and the header chunks; no pixel yet. Throws PngError for what cannot be decoded. */
export function readPngInfo(bytes: Uint8Array): PngInfo {
  const chunks = readChunks(bytes);
  const ihdr = chunks[0];
  if (ihdr?.type !== 'IHDR' || ihdr.data.length !== 13) throw new PngError('it does not start with a valid IHDR chunk');
  const h = ihdr.data;
  const width = u32(h, 0);
  const height = u32(h, 4);
  const bitDepth = h[8]!;
  const colourType = h[9]!;
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff)
    throw new PngError('its header declares an impossible size');
  if (!DEPTHS[colourType]?.includes(bitDepth))
    throw new PngError(
      `its header declares bit depth ${bitDepth} with colour type ${colourType}, which PNG does not allow`,
    );
  if (h[10] !== 0 || h[11] !== 0 || h[12]! > 1)
    throw new PngError('its header declares an unknown compression, filter or interlace method');
  let palette: Uint8Array | null = null;
  let transparentKey: number[] | null = null;
  let trns: Uint8Array | null = null;
  const ancillary: Chunk[] = [];
  const idat: Uint8Array[] = [];
  let idatDone = false;
  for (const chunk of chunks.slice(1)) {
    if (chunk.type === 'IDAT') {
      if (idatDone) throw new PngError('its image data is split by other chunks');
      idat.push(chunk.data);
      continue;
    }
    if (idat.length > 0) idatDone = true;
    if (chunk.type === 'PLTE') {
      if (chunk.data.length % 3 !== 0 || chunk.data.length === 0 || chunk.data.length > 768)
        throw new PngError('its palette has an invalid length');
      palette = new Uint8Array((chunk.data.length / 3) * 4);
      for (let i = 0, o = 0; i < chunk.data.length; i += 3, o += 4) {
        palette[o] = chunk.data[i]!;
        palette[o + 1] = chunk.data[i + 1]!;
        palette[o + 2] = chunk.data[i + 2]!;
        palette[o + 3] = 255;
      }
    } else if (chunk.type === 'tRNS') {
      trns = chunk.data;
    } else if (chunk.type !== 'IEND' && chunk.type !== 'IHDR') {
      ancillary.push(chunk);
    }
  }
  if (idat.length === 0) throw new PngError('it has no image data');
  if (colourType === 3 && !palette) throw new PngError('it is a palette image without a palette');
  if (colourType !== 3) palette = null; // a suggested palette for a true-colour image is not needed
  if (trns) {
    if (colourType === 3)
      for (let i = 0; i < Math.min(trns.length, palette!.length / 4); i++) palette![i * 4 + 3] = trns[i]!;
    else if (colourType === 0 && trns.length >= 2) transparentKey = [(trns[0]! << 8) | trns[1]!];
    else if (colourType === 2 && trns.length >= 6)
      transparentKey = [0, 2, 4].map((i) => (trns[i]! << 8) | trns[i + 1]!);
  }
  const hasAlpha =
    colourType === 4 ||
    colourType === 6 ||
    transparentKey !== null ||
    (palette?.some((v, i) => i % 4 === 3 && v !== 255) ?? false);
  return {
    width,
    height,
    bitDepth,
    colourType,
    interlaced: h[12] === 1,
    channels: CHANNELS[colourType]!,
    palette,
    transparentKey,
    hasAlpha,
    ancillary,
    idat,
  };
}

/** Bytes of one filtered row of `width` pixels (filter byte excluded). */
const strideOf = (info: PngInfo, width: number): number => Math.ceil((width * info.channels * info.bitDepth) / 8);
const bppOf = (info: PngInfo): number => Math.max(1, (info.channels * info.bitDepth) >> 3);

/**
 * Decodes `info`'s image data and calls `onRow` with each row, top to bottom, as 8-bit RGBA (one
 * buffer reused: copy what must outlive the call), or for a palette image with `indices`, as its
 * palette indices, one byte each. Waits for `onRow`'s promise before the next row.
 */
export async function decodeRows(
  info: PngInfo,
  onRow: (row: Uint8Array, y: number) => void | Promise<void>,
  options: { indices?: boolean } = {},
): Promise<void> {
  const indices = options.indices === true && info.colourType === 3;
  const rgba = new Uint8Array(info.width * 4);
  const samples =
    info.bitDepth === 16 ? new Uint16Array(info.width * info.channels) : new Uint8Array(info.width * info.channels);
  const passes = info.interlaced
    ? ADAM7.map(([x0, y0, dx, dy]) => ({
        x0,
        y0,
        dx,
        dy,
        w: Math.ceil(Math.max(0, info.width - x0) / dx),
        h: Math.ceil(Math.max(0, info.height - y0) / dy),
      })).filter((p) => p.w > 0 && p.h > 0)
    : [{ x0: 0, y0: 0, dx: 1, dy: 1, w: info.width, h: info.height }];
  // Interlaced: every pass is scattered into a frame of samples; rows go out once the last pass is in.
  const frame = info.interlaced
    ? info.bitDepth === 16
      ? new Uint16Array(info.width * info.height * info.channels)
      : new Uint8Array(info.width * info.height * info.channels)
    : null;
  const bpp = bppOf(info);
  const maxStride = strideOf(info, info.width);
  let row = new Uint8Array(maxStride + 1);
  let prev = new Uint8Array(maxStride + 1);
  let pass = 0;
  let y = 0;
  let fill = 0;
  let stride = strideOf(info, passes[0]!.w);

  const rowDone = async (): Promise<void> => {
    const p = passes[pass]!;
    const line = row.subarray(1, stride + 1);
    const filter = row[0]!;
    if (filter > 4) throw new PngError(`a row has the unknown filter type ${filter}`);
    unfilter(filter, line, prev.subarray(1, stride + 1), bpp);
    unpack(line, p.w, info, samples);
    if (frame) {
      const ch = info.channels;
      const base = (p.y0 + y * p.dy) * info.width;
      for (let x = 0; x < p.w; x++) {
        const to = (base + p.x0 + x * p.dx) * ch;
        for (let c = 0; c < ch; c++) frame[to + c] = samples[x * ch + c]!;
      }
    } else if (indices) {
      await onRow(samples as Uint8Array, y);
    } else {
      toRgba(samples, info, rgba);
      await onRow(rgba, y);
    }
    [row, prev] = [prev, row];
    fill = 0;
    await giveWay(p.w);
    if (++y === p.h) {
      y = 0;
      prev.fill(0);
      if (++pass < passes.length) stride = strideOf(info, passes[pass]!.w);
    }
  };

  // Pulled a piece at a time, and only until the last row: whatever follows it is never inflated, so a
  // small file cannot make us inflate gigabytes, nor hold more than one piece of what it inflates to.
  const inflater = new Inflater(info.idat);
  while (pass < passes.length) {
    let data: Uint8Array;
    try {
      data = inflater.read();
    } catch (err) {
      if (!(err instanceof PngError)) throw err;
      throw new PngError(
        pass === 0 && y === 0 && fill === 0
          ? 'its image data is not a valid zlib stream'
          : 'its image data is corrupt or truncated',
      );
    }
    if (data.length === 0) break;
    for (let at = 0; at < data.length && pass < passes.length; ) {
      const take = Math.min(stride + 1 - fill, data.length - at);
      row.set(data.subarray(at, at + take), fill);
      fill += take;
      at += take;
      if (fill === stride + 1) await rowDone();
    }
  }
  if (pass < passes.length) throw new PngError('its image data ends before the last row');
  if (frame) {
    for (let fy = 0; fy < info.height; fy++) {
      const n = info.width * info.channels;
      const line = frame.subarray(fy * n, (fy + 1) * n);
      if (indices) {
        await onRow(line as Uint8Array, fy);
        await giveWay(info.width);
        continue;
      }
      toRgba(line, info, rgba);
      await onRow(rgba, fy);
      await giveWay(info.width);
    }
  }
}

/** One sample per element from a raw row: sub-byte samples unpacked, 16-bit ones joined. */
function unpack(line: Uint8Array, width: number, info: PngInfo, out: Uint8Array | Uint16Array): void {
  const n = width * info.channels;
  const depth = info.bitDepth;
  if (depth === 8) {
    out.set(line.subarray(0, n));
  } else if (depth === 16) {
    for (let i = 0; i < n; i++) out[i] = (line[i * 2]! << 8) | line[i * 2 + 1]!;
  } else {
    const perByte = 8 / depth;
    const mask = (1 << depth) - 1;
    for (let i = 0; i < n; i++) out[i] = (line[(i / perByte) | 0]! >> (8 - depth * ((i % perByte) + 1))) & mask;
  }
}

/** 16 bits to 8, rounded to nearest: v / 257. */
const to8 = (v: number): number => ((v + 128) / 257) | 0;

/** Samples of one row to 8-bit RGBA: palette looked up, grey spread, 16 bits rounded, tRNS applied. */
function toRgba(s: Uint8Array | Uint16Array, info: PngInfo, out: Uint8Array): void {
  const w = info.width;
  const key = info.transparentKey;
  switch (info.colourType) {
    case 3: {
      const pal = info.palette!;
      const entries = pal.length / 4;
      for (let x = 0; x < w; x++) {
        const i = s[x]!;
        // An index past the palette is an error in the file; black, as libpng's tolerant mode gives.
        if (i < entries) out.set(pal.subarray(i * 4, i * 4 + 4), x * 4);
        else out.set([0, 0, 0, 255], x * 4);
      }
      return;
    }
    case 0: {
      const depth = info.bitDepth;
      const scale = depth === 16 ? 0 : 255 / ((1 << depth) - 1);
      for (let x = 0; x < w; x++) {
        const v = s[x]!;
        const g = depth === 16 ? to8(v) : Math.round(v * scale);
        out[x * 4] = out[x * 4 + 1] = out[x * 4 + 2] = g;
        out[x * 4 + 3] = key && v === key[0] ? 0 : 255;
      }
      return;
    }
    case 4:
      if (info.bitDepth === 8) {
        for (let x = 0, i = 0, o = 0; x < w; x++, i += 2, o += 4) {
          out[o] = out[o + 1] = out[o + 2] = s[i]!;
          out[o + 3] = s[i + 1]!;
        }
        return;
      }
      for (let x = 0; x < w; x++) {
        const g = info.bitDepth === 16 ? to8(s[x * 2]!) : s[x * 2]!;
        out[x * 4] = out[x * 4 + 1] = out[x * 4 + 2] = g;
        out[x * 4 + 3] = info.bitDepth === 16 ? to8(s[x * 2 + 1]!) : s[x * 2 + 1]!;
      }
      return;
    case 2:
      if (info.bitDepth === 8 && !key) {
        for (let x = 0, i = 0, o = 0; x < w; x++, i += 3, o += 4) {
          out[o] = s[i]!;
          out[o + 1] = s[i + 1]!;
          out[o + 2] = s[i + 2]!;
          out[o + 3] = 255;
        }
        return;
      }
      for (let x = 0; x < w; x++) {
        const r = s[x * 3]!,
          g = s[x * 3 + 1]!,
          b = s[x * 3 + 2]!;
        if (info.bitDepth === 16) {
          out[x * 4] = to8(r);
          out[x * 4 + 1] = to8(g);
          out[x * 4 + 2] = to8(b);
        } else {
          out[x * 4] = r;
          out[x * 4 + 1] = g;
          out[x * 4 + 2] = b;
        }
        out[x * 4 + 3] = key && r === key[0] && g === key[1] && b === key[2] ? 0 : 255;
      }
      return;
    default:
      if (info.bitDepth === 8) out.set(s.subarray(0, w * 4));
      else for (let i = 0; i < w * 4; i++) out[i] = to8(s[i]!);
  }
}
