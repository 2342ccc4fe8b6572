// GIFs written by the tests: a small GIF encoder (LZW as GIF encoders write it, interlacing, local colour
// tables, graphic control extensions, the NETSCAPE2.0 loop) and the pixels each frame should show, so the
// decoder is checked against what was meant rather than against another decoder. Pure TypeScript: the
// Node tests use it too, beside sharp.

export type Rgb = [number, number, number];

export interface GifFrameSpec {
  left?: number;
  top?: number;
  width: number;
  height: number;
  /** One colour index a pixel, row by row in display order. */
  indices: Uint8Array;
  /** A local colour table (padded to a power of two). */
  palette?: Rgb[];
  interlaced?: boolean;
  transparentIndex?: number;
  disposal?: 0 | 1 | 2 | 3;
  delayCs?: number;
  /** Omit the graphic control extension altogether. */
  noControl?: boolean;
  /** Keep coding with the full table instead of clearing it (GIF's "deferred clear"). */
  deferredClear?: boolean;
}

export interface GifSpec {
  width: number;
  height: number;
  palette?: Rgb[];
  frames: GifFrameSpec[];
  /** NETSCAPE2.0 loop count (0: forever); none when left out. */
  loop?: number;
  version?: '87a' | '89a';
}

const u16 = (v: number): number[] => [v & 0xff, (v >> 8) & 0xff];

/** The table size field (n: 2^(n+1) entries) and the table padded to that many entries. */
function colourTable(palette: Rgb[]): { sizeBits: number; bytes: number[] } {
  let sizeBits = 0;
  while (2 << sizeBits < palette.length) sizeBits++;
  const bytes: number[] = [];
  for (let i = 0; i < 2 << sizeBits; i++) bytes.push(...(palette[i] ?? [0, 0, 0]));
  return { sizeBits, bytes };
}

/**
 * GIF LZW of `indices` (omggif's scheme: a clear code first, another whenever the table is full; with
 * `deferredClear`, none: the full table is used as it is to the end).
 */
export function lzwEncode(indices: Uint8Array, minCodeSize: number, deferredClear = false): Uint8Array {
  const out: number[] = [];
  let bits = 0;
  let count = 0;
  const clear = 1 << minCodeSize;
  const eoi = clear + 1;
  let next = eoi + 1;
  let size = minCodeSize + 1;
  let table = new Map<number, number>();
  const emit = (code: number) => {
    bits |= code << count;
    count += size;
    while (count >= 8) {
      out.push(bits & 0xff);
      bits >>>= 8;
      count -= 8;
    }
  };
  emit(clear);
  let prefix = indices[0]!;
  for (let i = 1; i < indices.length; i++) {
    const k = indices[i]!;
    const key = (prefix << 8) | k;
    const code = table.get(key);
    if (code !== undefined) {
      prefix = code;
      continue;
    }
    emit(prefix);
    if (next < 4096) {
      if (next >= 1 << size) size++;
      table.set(key, next++);
    } else if (!deferredClear) {
      emit(clear);
      next = eoi + 1;
      size = minCodeSize + 1;
      table = new Map();
    }
    prefix = k;
  }
  emit(prefix);
  emit(eoi);
  if (count > 0) out.push(bits & 0xff);
  return Uint8Array.from(out);
}

/** Data cut into sub-blocks of at most 255 bytes, with the terminator. */
export function subBlocks(data: Uint8Array): number[] {
  const out: number[] = [];
  for (let at = 0; at < data.length; at += 255) {
    const piece = data.subarray(at, at + 255);
    out.push(piece.length, ...piece);
  }
  out.push(0);
  return out;
}

/** The display rows of an interlaced frame in the order they are stored. */
export function interlacedOrder(height: number): number[] {
  const rows: number[] = [];
  for (const [start, step] of [
    [0, 8],
    [4, 8],
    [2, 4],
    [1, 2],
  ] as const)
    for (let y = start; y < height; y += step) rows.push(y);
  return rows;
}

export function makeGif(spec: GifSpec): Uint8Array {
  const bytes: number[] = [...'GIF'].map((c) => c.charCodeAt(0));
  bytes.push(...[...(spec.version ?? '89a')].map((c) => c.charCodeAt(0)));
  const global = spec.palette ? colourTable(spec.palette) : null;
  bytes.push(...u16(spec.width), ...u16(spec.height), global ? 0xf0 | global.sizeBits : 0, 0, 0);
  if (global) bytes.push(...global.bytes);
  if (spec.loop !== undefined) {
    bytes.push(0x21, 0xff, 11, ...[...'NETSCAPE2.0'].map((c) => c.charCodeAt(0)), 3, 1, ...u16(spec.loop), 0);
  }
  for (const frame of spec.frames) {
    if (!frame.noControl) {
      const flags = ((frame.disposal ?? 0) << 2) | (frame.transparentIndex !== undefined ? 1 : 0);
      bytes.push(0x21, 0xf9, 4, flags, ...u16(frame.delayCs ?? 0), frame.transparentIndex ?? 0, 0);
    }
    const local = frame.palette ? colourTable(frame.palette) : null;
    const flags = (local ? 0x80 | local.sizeBits : 0) | (frame.interlaced ? 0x40 : 0);
    bytes.push(0x2c, ...u16(frame.left ?? 0), ...u16(frame.top ?? 0), ...u16(frame.width), ...u16(frame.height), flags);
    if (local) bytes.push(...local.bytes);
    const entries = 2 << (local ?? global)!.sizeBits;
    const minCodeSize = Math.max(2, Math.log2(entries));
    let stored = frame.indices;
    if (frame.interlaced) {
      stored = new Uint8Array(frame.indices.length);
      for (const [i, y] of interlacedOrder(frame.height).entries())
        stored.set(frame.indices.subarray(y * frame.width, (y + 1) * frame.width), i * frame.width);
    }
    bytes.push(minCodeSize, ...subBlocks(lzwEncode(stored, minCodeSize, frame.deferredClear)));
  }
  bytes.push(0x3b);
  return Uint8Array.from(bytes);
}

/**
 * What the screen shows after each frame, composed as browsers do: a transparent screen, a frame's
 * transparent pixels leaving what is under them, disposal 2 clearing to transparent, 3 restoring.
 */
export function expectedFrames(spec: GifSpec): Uint8Array[] {
  const canvas = new Uint8Array(spec.width * spec.height * 4);
  const shown: Uint8Array[] = [];
  for (const frame of spec.frames) {
    const palette = frame.palette ?? spec.palette!;
    const before = canvas.slice();
    for (let y = 0; y < frame.height; y++) {
      for (let x = 0; x < frame.width; x++) {
        const sx = (frame.left ?? 0) + x;
        const sy = (frame.top ?? 0) + y;
        if (sx >= spec.width || sy >= spec.height) continue;
        const index = frame.indices[y * frame.width + x]!;
        if (index === frame.transparentIndex) continue;
        const [r, g, b] = palette[index] ?? [0, 0, 0];
        canvas.set([r, g, b, 255], (sy * spec.width + sx) * 4);
      }
    }
    shown.push(canvas.slice());
    const inRect = (sx: number, sy: number) =>
      sx >= (frame.left ?? 0) &&
      sx < (frame.left ?? 0) + frame.width &&
      sy >= (frame.top ?? 0) &&
      sy < (frame.top ?? 0) + frame.height;
    for (let sy = 0; sy < spec.height; sy++) {
      for (let sx = 0; sx < spec.width; sx++) {
        if (!inRect(sx, sy)) continue;
        const i = (sy * spec.width + sx) * 4;
        if (frame.disposal === 2) canvas.fill(0, i, i + 4);
        else if (frame.disposal === 3) canvas.set(before.subarray(i, i + 4), i);
      }
    }
  }
  return shown;
}

/** A w×h frame's indices from a function of the pixel. */
export function indicesOf(width: number, height: number, at: (x: number, y: number) => number): Uint8Array {
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) out[y * width + x] = at(x, y);
  return out;
}

/** A palette of `n` distinct colours, spread over the cube. */
export function spreadPalette(n: number): Rgb[] {
  return Array.from({ length: n }, (_, i): Rgb => [(i * 67) % 256, (i * 131 + 40) % 256, (i * 29 + 200) % 256]);
}
