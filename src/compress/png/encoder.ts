// PNG encoding in rows: rows are filtered in blocks of about BLOCK_BYTES, deflated by the runtime's
// native CompressionStream('deflate') and cut into IDAT chunks as the compressed bytes come out. For true
// colour and grey, each block is filtered two ways, libpng's adaptive heuristic (per row, the filter with
// the smallest sum of absolute values) and None, and the one that deflates smaller on its own goes on:
// the heuristic wins on photographs by half, None wins on screenshots and flat graphics by a quarter
// (measured on the bench's inputs), and both kinds meet inside one image. Palette rows are never
// filtered, as libpng advises. Memory: a block twice over, and the compressed output.
import { concatBytes } from '../../bytes.ts';
import { chunkBytes, PNG_SIGNATURE, type Chunk } from './chunks.ts';
import { filterRow } from './filters.ts';

export interface PngLayout {
  width: number;
  height: number;
  /** 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA; always 8 bits per sample, palette 1–8 bits per index. */
  colourType: 0 | 2 | 3 | 4 | 6;
  /** Palette entries as RGBA, 4 bytes each (palette only); alpha below 255 writes tRNS. */
  palette?: Uint8Array;
}

const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const;
/** Rows are filtered, tried and handed to the deflater in blocks of about this many bytes. */
const BLOCK_BYTES = 256 * 1024;
/** Compressed bytes are written out in IDAT chunks of about this size. */
const IDAT_BYTES = 64 * 1024;

/** The smallest palette bit depth for `entries` colours. */
export const paletteDepth = (entries: number): number => (entries <= 2 ? 1 : entries <= 4 ? 2 : entries <= 16 ? 4 : 8);

export class PngRowEncoder {
  private readonly layout: PngLayout;
  private readonly depth: number;
  private readonly stride: number;
  private readonly bpp: number;
  private readonly head: Uint8Array[];
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly draining: Promise<Uint8Array[]>;
  private row: Uint8Array;
  private prev: Uint8Array;
  private readonly scratch: Uint8Array;
  /** The block's rows filtered with None (always) and adaptively (true colour and grey). */
  private plain: Uint8Array;
  private adaptive: Uint8Array | null;
  private batchFill = 0;
  private rows = 0;
  /** The previous block's trial and write: the deflater works on it while the next block is filtered. */
  private inflight: Promise<void> = Promise.resolve();

  /** `chunks` (colour and metadata) are written after IHDR, before PLTE and the image data. */
  constructor(layout: PngLayout, chunks: Chunk[]) {
    this.layout = layout;
    const entries = layout.palette ? layout.palette.length / 4 : 0;
    this.depth = layout.colourType === 3 ? paletteDepth(entries) : 8;
    this.stride = Math.ceil((layout.width * CHANNELS[layout.colourType] * this.depth) / 8);
    this.bpp = Math.max(1, (CHANNELS[layout.colourType] * this.depth) >> 3);
    this.row = new Uint8Array(this.stride);
    this.prev = new Uint8Array(this.stride);
    this.scratch = new Uint8Array(this.stride);
    const block = Math.max(BLOCK_BYTES, this.stride + 1);
    this.plain = new Uint8Array(block);
    this.adaptive = layout.colourType === 3 ? null : new Uint8Array(block);
    this.head = [PNG_SIGNATURE, chunkBytes('IHDR', this.ihdr()), ...chunks.map((c) => chunkBytes(c.type, c.data))];
    if (layout.palette) this.head.push(...paletteChunks(layout.palette));
    const deflater = new CompressionStream('deflate');
    this.writer = deflater.writable.getWriter();
    this.draining = drainIntoIdat(deflater.readable as ReadableStream<Uint8Array>);
    this.draining.catch(() => undefined);
  }

  /** One row: RGBA (8 bits per sample) reduced to the layout's channels, or palette indices (one byte each). */
  async writeRow(pixels: Uint8Array): Promise<void> {
    const { width, colourType } = this.layout;
    const row = this.row;
    switch (colourType) {
      case 6:
        row.set(pixels.subarray(0, width * 4));
        break;
      case 2:
        for (let x = 0, o = 0; x < width; x++, o += 3) {
          row[o] = pixels[x * 4]!;
          row[o + 1] = pixels[x * 4 + 1]!;
          row[o + 2] = pixels[x * 4 + 2]!;
        }
        break;
      case 4:
        for (let x = 0; x < width; x++) {
          row[x * 2] = pixels[x * 4]!;
          row[x * 2 + 1] = pixels[x * 4 + 3]!;
        }
        break;
      case 0:
        for (let x = 0; x < width; x++) row[x] = pixels[x * 4]!;
        break;
      case 3:
        packIndices(pixels, width, this.depth, row);
        break;
    }
    if (this.batchFill + this.stride + 1 > this.plain.length) await this.flush();
    const at = this.batchFill;
    this.plain[at] = 0;
    this.plain.set(row, at + 1);
    if (this.adaptive)
      filterRow(row, this.prev, this.bpp, true, this.adaptive.subarray(at, at + this.stride + 1), this.scratch);
    this.batchFill += this.stride + 1;
    [this.row, this.prev] = [this.prev, this.row];
    this.rows++;
  }

  /** The whole file, once every row was written. */
  async finish(): Promise<Uint8Array> {
    if (this.rows !== this.layout.height)
      throw new Error(`the PNG encoder got ${this.rows} rows of ${this.layout.height}`);
    await this.flush();
    await this.inflight;
    await this.writer.close();
    const idat = await this.draining;
    return concatBytes([...this.head, ...idat, chunkBytes('IEND', new Uint8Array(0))]);
  }

  /** Gives up: the deflater is stopped and its output dropped. */
  abort(): void {
    this.writer.abort().catch(() => undefined);
  }

  /** Hands the block on (after the previous one is through) and starts a fresh one. */
  private async flush(): Promise<void> {
    if (this.batchFill === 0) return;
    const plain = this.plain.subarray(0, this.batchFill);
    const adaptive = this.adaptive?.subarray(0, this.batchFill);
    // The deflater may keep the buffer it is given: fresh ones follow.
    this.plain = new Uint8Array(this.plain.length);
    if (this.adaptive) this.adaptive = new Uint8Array(this.adaptive.length);
    this.batchFill = 0;
    await this.inflight;
    this.inflight = this.choose(plain, adaptive).then((chosen) => this.writer.write(chosen));
    // A failure surfaces at the next flush or at finish; until then it must not go unhandled.
    this.inflight.catch(() => undefined);
  }

  /**
   * The variant that deflates smaller, on the whole block (judging by its first quarter cost 3–5 % of
   * a screenshot's bytes, and saved no measurable time: the deflater is the bottleneck either way).
   */
  private async choose(plain: Uint8Array, adaptive: Uint8Array | undefined): Promise<Uint8Array> {
    if (!adaptive) return plain;
    const [a, b] = await Promise.all([deflatedSize(plain), deflatedSize(adaptive)]);
    return b < a ? adaptive : plain;
  }

  private ihdr(): Uint8Array {
    const out = new Uint8Array(13);
    const view = new DataView(out.buffer);
    view.setUint32(0, this.layout.width);
    view.setUint32(4, this.layout.height);
    out[8] = this.depth;
    out[9] = this.layout.colourType;
    return out;
  }
}

function packIndices(indices: Uint8Array, width: number, depth: number, out: Uint8Array): void {
  if (depth === 8) {
    out.set(indices.subarray(0, width));
    return;
  }
  out.fill(0);
  const perByte = 8 / depth;
  for (let x = 0; x < width; x++) out[(x / perByte) | 0]! |= indices[x]! << (8 - depth * ((x % perByte) + 1));
}

/** PLTE, and tRNS up to the last entry that is not opaque. */
function paletteChunks(palette: Uint8Array): Uint8Array[] {
  const entries = palette.length / 4;
  const plte = new Uint8Array(entries * 3);
  let lastAlpha = -1;
  for (let i = 0; i < entries; i++) {
    plte.set(palette.subarray(i * 4, i * 4 + 3), i * 3);
    if (palette[i * 4 + 3] !== 255) lastAlpha = i;
  }
  const out = [chunkBytes('PLTE', plte)];
  if (lastAlpha >= 0)
    out.push(
      chunkBytes(
        'tRNS',
        Uint8Array.from({ length: lastAlpha + 1 }, (_, i) => palette[i * 4 + 3]!),
      ),
    );
  return out;
}

/** Reads the deflater's output and cuts it into IDAT chunks of about IDAT_BYTES. */
async function drainIntoIdat(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const emit = () => {
    chunks.push(chunkBytes('IDAT', concatBytes(pending, pendingBytes)));
    pending = [];
    pendingBytes = 0;
  };
  for await (const part of stream) {
    pending.push(part);
    pendingBytes += part.length;
    if (pendingBytes >= IDAT_BYTES) emit();
  }
  if (pendingBytes > 0 || chunks.length === 0) emit();
  return chunks;
}

/** Bytes `data` deflates to on its own (the trial of a block's filtering). */
async function deflatedSize(data: Uint8Array): Promise<number> {
  let size = 0;
  for await (const part of new Blob([data])
    .stream()
    .pipeThrough(new CompressionStream('deflate-raw')) as ReadableStream<Uint8Array>)
    size += part.length;
  return size;
}
