// PNG files written by the tests themselves, independently of the service's encoder: any colour type,
// bit depth and interlace, palette and tRNS, chosen chunk cuts and extra chunks; and the 8-bit RGBA
// a correct decoder must give for them.
import { concatBytes } from '../../src/bytes.ts';
import { chunkBytes } from '../../src/compress/png/chunks.ts';
// The decoder's pass table: another decoder reads these interlaced files too (png-engine.test.ts), so a
// wrong table cannot pass by agreeing with itself.
import { ADAM7 } from '../../src/compress/png/decoder.ts';

export interface PngSpec {
  width: number;
  height: number;
  colourType: 0 | 2 | 3 | 4 | 6;
  bitDepth: 1 | 2 | 4 | 8 | 16;
  interlaced?: boolean;
  /** Palette RGB triples (colour type 3). */
  palette?: readonly (readonly [number, number, number])[] | number[][];
  /** Raw tRNS payload. */
  trns?: readonly number[];
  /** Chunks written before the image data. */
  before?: { type: string; data: Uint8Array }[];
  /** Cuts of the zlib stream into IDATs, in bytes (the rest goes in a last one); 0 makes an empty IDAT. */
  idatCuts?: number[];
}

const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const;

/** Deterministic samples: the value of channel `c` of pixel (x, y) at `depth` bits. */
export function sampleAt(x: number, y: number, c: number, depth: number, spec: PngSpec): number {
  const max = spec.colourType === 3 ? spec.palette!.length - 1 : (1 << depth) - 1;
  const v = (x * 37 + y * 101 + c * 53 + ((x * y) % 7) * 1009) % (max + 1);
  return v;
}

/** One chunk's bytes, as the service's own writer makes them. */
export const chunk = chunkBytes;

export const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));

export const cat = (...parts: Uint8Array[]): Uint8Array => concatBytes(parts);

export async function zlib(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The filtered scanlines (all passes), each row filtered with type (row index % 5). */
function scanlines(spec: PngSpec): Uint8Array {
  const ch = CHANNELS[spec.colourType];
  const bits = ch * spec.bitDepth;
  const bpp = Math.max(1, bits >> 3);
  const passes = spec.interlaced ? ADAM7 : [[0, 0, 1, 1]];
  const out: number[] = [];
  let rowIndex = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const w = Math.ceil(Math.max(0, spec.width - x0!) / dx!);
    const h = Math.ceil(Math.max(0, spec.height - y0!) / dy!);
    if (w === 0 || h === 0) continue;
    const stride = Math.ceil((w * bits) / 8);
    let prev = new Uint8Array(stride);
    for (let py = 0; py < h; py++) {
      const raw = new Uint8Array(stride);
      const y = y0! + py * dy!;
      for (let px = 0; px < w; px++) {
        const x = x0! + px * dx!;
        for (let c = 0; c < ch; c++) {
          const v = sampleAt(x, y, c, spec.bitDepth, spec);
          const i = px * ch + c;
          if (spec.bitDepth === 16) {
            raw[i * 2] = v >> 8;
            raw[i * 2 + 1] = v & 255;
          } else if (spec.bitDepth === 8) raw[i] = v;
          else raw[(i * spec.bitDepth) >> 3]! |= v << (8 - spec.bitDepth - ((i * spec.bitDepth) & 7));
        }
      }
      const f = rowIndex++ % 5;
      out.push(f);
      for (let i = 0; i < stride; i++) {
        const a = i >= bpp ? raw[i - bpp]! : 0,
          b = prev[i]!,
          c = i >= bpp ? prev[i - bpp]! : 0;
        const p = a + b - c,
          pa = Math.abs(p - a),
          pb = Math.abs(p - b),
          pc = Math.abs(p - c);
        const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f]!;
        out.push((raw[i]! - pred) & 255);
      }
      prev = raw;
    }
  }
  return Uint8Array.from(out);
}

export async function makePng(spec: PngSpec): Promise<Uint8Array> {
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, spec.width);
  view.setUint32(4, spec.height);
  ihdr.set([spec.bitDepth, spec.colourType, 0, 0, spec.interlaced ? 1 : 0], 8);
  const z = await zlib(scanlines(spec));
  const idats: Uint8Array[] = [];
  let at = 0;
  for (const cut of spec.idatCuts ?? []) {
    idats.push(chunk('IDAT', z.subarray(at, at + cut)));
    at += cut;
  }
  idats.push(chunk('IDAT', z.subarray(at)));
  return cat(
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    chunk('IHDR', ihdr),
    ...(spec.before ?? []).map((c) => chunk(c.type, c.data)),
    ...(spec.palette ? [chunk('PLTE', Uint8Array.from(spec.palette.flat()))] : []),
    ...(spec.trns ? [chunk('tRNS', Uint8Array.from(spec.trns))] : []),
    ...idats,
    chunk('IEND', new Uint8Array(0)),
  );
}

/** What a decoder must give for `spec`, as 8-bit RGBA (16 bits rounded, low depths scaled to 255). */
export function expectedRgba(spec: PngSpec): Uint8Array {
  const ch = CHANNELS[spec.colourType];
  const d = spec.bitDepth;
  const scale = (v: number) => (d === 16 ? Math.round(v / 257) : d === 8 ? v : Math.round((v * 255) / ((1 << d) - 1)));
  const out = new Uint8Array(spec.width * spec.height * 4);
  const key =
    spec.trns && spec.colourType !== 3
      ? Array.from({ length: spec.trns.length / 2 }, (_, i) => (spec.trns![i * 2]! << 8) | spec.trns![i * 2 + 1]!)
      : null;
  for (let y = 0; y < spec.height; y++) {
    for (let x = 0; x < spec.width; x++) {
      const s = Array.from({ length: ch }, (_, c) => sampleAt(x, y, c, d, spec));
      let px: number[];
      if (spec.colourType === 3) {
        const [r, g, b] = spec.palette![s[0]!]!;
        px = [r, g, b, spec.trns?.[s[0]!] ?? 255];
      } else if (spec.colourType === 0)
        px = [scale(s[0]!), scale(s[0]!), scale(s[0]!), key && s[0] === key[0] ? 0 : 255];
      else if (spec.colourType === 4) px = [scale(s[0]!), scale(s[0]!), scale(s[0]!), scale(s[1]!)];
      else if (spec.colourType === 2) px = [...s.map(scale), key && s.every((v, i) => v === key[i]) ? 0 : 255];
      else px = s.map(scale);
      out.set(px, (y * spec.width + x) * 4);
    }
  }
  return out;
}

/** IHDR's width, height, bit depth and colour type of a PNG. */
export function ihdrOf(png: Uint8Array): { width: number; height: number; bitDepth: number; colourType: number } {
  const view = new DataView(png.buffer, png.byteOffset);
  return { width: view.getUint32(16), height: view.getUint32(20), bitDepth: png[24]!, colourType: png[25]! };
}

/** The chunk types of a PNG, in order, with their payloads. */
export function chunksOf(png: Uint8Array): { type: string; data: Uint8Array }[] {
  const view = new DataView(png.buffer, png.byteOffset);
  const out: { type: string; data: Uint8Array }[] = [];
  for (let at = 8; at + 12 <= png.length; ) {
    const length = view.getUint32(at);
    out.push({ type: String.fromCharCode(...png.subarray(at + 4, at + 8)), data: png.slice(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  return out;
}

/**
 * A zlib bomb as a PNG (issue 47): `size`×`size` 16-bit RGBA of zeros, every row filter None, deflated
 * as it is made so the 8 bytes a pixel never exist at once: 10000×10000 is 800 MB of rows in 0.8 MB.
 */
export async function zeroPng(size: number): Promise<Uint8Array> {
  const deflater = new CompressionStream('deflate');
  const compressed = new Response(deflater.readable).arrayBuffer();
  const writer = deflater.writable.getWriter();
  const row = new Uint8Array(1 + size * 8);
  for (let y = 0; y < size; y++) await writer.write(row);
  await writer.close();
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, size);
  new DataView(ihdr.buffer).setUint32(4, size);
  ihdr.set([16, 6, 0, 0, 0], 8);
  return cat(
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    chunk('IHDR', ihdr),
    chunk('IDAT', new Uint8Array(await compressed)),
    chunk('IEND', new Uint8Array(0)),
  );
}
