// The AVIF encoder (wasm/src/sr_avif.c, built by wasm/build-avif.sh from libavif and libaom): RGB(A) rows
// handed in even-row bands become a 4:2:0 picture held as YUV, encoded (again, for a size target) as one
// image or a grid of cells, with the input's ICC profile, EXIF and XMP. A cell is one libaom call, suspended
// inside it after every superblock row to give way (patches/aom/, src/sr_give_way.js). A module of its own,
// instantiated only by AVIF output; its instances are pooled with the engine's, and their memories together
// stay within the pool's limit (instances.ts).
import createAvifModule from './codec/sr_avif.js';
import avifWasm from './codec/sr_avif.wasm';
import { AvifEngineError } from './avif-error.ts';
import { AVIF_SCREEN_FLAT_SHARE, AVIF_WORK_PER_PIXEL, avifGrid, avifSettings, flatPixels } from './avif-settings.ts';
import { BorrowedInstance } from './borrowed.ts';
import { giveWay, giveWayNow } from './give-way.ts';
import { EmscriptenInstance, type EmscriptenFactory } from './emscripten.ts';
import { pooledGrowthLimit, Slot } from './instances.ts';

type Fn = (...args: number[]) => number;
interface AvifModule {
  _malloc: Fn;
  _free: Fn;
  [name: `_sr_avif_${string}`]: Fn;
  /** Set for a cell's encode (src/sr_give_way.js): the pixels of the superblock row just encoded → a promise to wait for, or nothing. */
  srGiveWay?: ((pixels: number) => Promise<void> | undefined) | undefined;
  /** After a call returns: the promise of its result when it was suspended, else null. */
  srAsyncDone?: () => Promise<number> | null;
}

export { AvifEngineError };

/**
 * Rows copied into the encoder per call: even, since every band but the last must start on an even row
 * (4:2:0 pairs rows for chroma).
 */
export const AVIF_BAND_ROWS = 32;

export const avifSlot = new Slot(
  'sr_avif',
  () => new EmscriptenInstance(createAvifModule as EmscriptenFactory<AvifModule>, avifWasm, pooledGrowthLimit),
  { pooled: true },
);

/**
 * One picture fed rows by a decoder that awaits between them: the instance is borrowed until `close`,
 * which must be called; each method is synchronous and touches only this picture's memory. Rows are
 * gathered into a band of AVIF_BAND_ROWS in the engine and converted to YUV band by band, so no RGB(A)
 * frame is held.
 */
export class AvifRowEncoder extends BorrowedInstance<AvifModule> {
  private readonly encoder: number;
  private readonly rowBytes: number;
  private band = 0;
  private bandRows = 0;
  private rowsIn = 0;
  /** Pixels equal to their left neighbour so far, counted only with intra block copy (AVIF_SCREEN_FLAT_SHARE). */
  private flat = 0;
  private optionsSet = false;
  readonly width: number;
  readonly height: number;
  readonly channels: 3 | 4;
  /** Intra block copy on (AVIF_SCREEN_OPTIONS, its own grid): only where the plan counts its hash. */
  readonly intrabc: boolean;

  /** `depth`: the coded picture's bits a sample, 8 or 10 (AVIF_DEPTH), as the memory plan chose. */
  constructor(width: number, height: number, channels: 3 | 4, intrabc = false, depth: 8 | 10 = 8) {
    // Exclusive: a cell's encode suspended inside libaom keeps its stack in the instance.
    super(avifSlot, true);
    this.width = width;
    this.height = height;
    this.channels = channels;
    this.intrabc = intrabc;
    this.rowBytes = width * channels;
    const grid = avifGrid(width, height, intrabc);
    const encoder = this.call('create', width, height, channels, grid.cols, grid.rows, depth) >>> 0;
    this.encoder = this.own(encoder, (ptr) => this.call('destroy', ptr));
    this.closeOnThrow(() => {
      if (!this.encoder) throw new AvifEngineError('out of memory for the picture');
      this.band = this.alloc(this.rowBytes * AVIF_BAND_ROWS);
      if (!this.band) throw new AvifEngineError('out of memory for the rows');
    });
  }

  /** One row (at least width × channels bytes; the rest is ignored), upright, in order. */
  writeRow(row: Uint8Array): void {
    if (this.rowsIn + this.bandRows >= this.height) throw new AvifEngineError('more rows than the picture has');
    if (this.intrabc) this.flat += flatPixels(row, this.width, this.channels);
    this.codec.heap().set(row.subarray(0, this.rowBytes), this.band + this.bandRows * this.rowBytes);
    if (++this.bandRows === AVIF_BAND_ROWS) this.flush();
  }

  /**
   * What the output carries beside the pixels (each copied into the encoder): the ICC profile describing
   * the rows' colours (none: sRGB), EXIF (its TIFF block) and XMP, whose orientation the caller has reset
   * to 1 since the rows are upright.
   */
  setMetadata(metadata: { icc?: Uint8Array; exif?: Uint8Array; xmp?: Uint8Array }): void {
    for (const [name, bytes] of [
      ['icc', metadata.icc],
      ['exif', metadata.exif],
      ['xmp', metadata.xmp],
    ] as const) {
      if (!bytes || bytes.length === 0) continue;
      this.withCopy(
        bytes,
        () => new AvifEngineError(`out of memory for the ${name.toUpperCase()} metadata`),
        (ptr) => this.check(this.call(name, this.encoder, ptr, bytes.length)),
      );
    }
  }

  /**
   * An HDR gain map written beside the picture (ISO 21496-1: a 'tmap' item; the picture stays the SDR
   * rendition), split into the picture's grid: `pixels` 8-bit, 1 or 3 channels, any size; `metadata` its 17
   * numbers (AvifGainMapMetadata's order), `quality` libavif's for the map.
   */
  setGainMap(
    map: { pixels: Uint8Array; width: number; height: number; channels: 1 | 3 },
    metadata: readonly number[],
    quality: number,
  ): void {
    const noRoom = () => new AvifEngineError('out of memory for the gain map');
    // The engine's malloc aligns to 8, as the doubles need.
    const numbers = new Uint8Array(new Float64Array(metadata).buffer);
    this.withCopy(map.pixels, noRoom, (pixels) =>
      this.withCopy(numbers, noRoom, (values) =>
        this.check(this.call('gain_map', this.encoder, pixels, map.width, map.height, map.channels, values, quality)),
      ),
    );
  }

  /**
   * Encodes the picture once every row is in, at libavif's quality (0–100: the caller maps the API's,
   * src/compress/quality-scale.ts); again for another quality (`search`: a size target's, at
   * AVIF_SEARCH_SPEED).
   * Cell by cell, each suspended inside libaom after a superblock row when the slice is used up
   * (give-way.ts): a superblock row of a cell (AVIF_MAX_CELL_SIDE says how long) is the longest the
   * isolate is held.
   */
  async encode(quality: number, search = false): Promise<Uint8Array> {
    if (this.bandRows > 0) this.flush();
    const screen = this.flat >= AVIF_SCREEN_FLAT_SHARE * this.width * this.height;
    const settings = avifSettings(quality, this.width, this.height, search, this.intrabc, screen);
    // The encoder keeps its libaom settings for every later encode (a size target's search): they are
    // the same at every quality.
    if (!this.optionsSet) for (const [key, value] of settings.options) this.option(key, value);
    this.optionsSet = true;
    this.check(this.call('encode_begin', this.encoder, settings.quality, settings.speed));
    const m = this.codec.module;
    m.srGiveWay = (pixels) => giveWayNow(pixels * AVIF_WORK_PER_PIXEL);
    try {
      for (;;) {
        let left = this.call('encode_cell', this.encoder);
        const suspended = m.srAsyncDone?.();
        if (suspended) left = await suspended;
        this.check(left < 0 ? -1 : 0);
        // Between cells: the padding of the next and what the clock says.
        await giveWay();
        if (left === 0) break;
      }
    } finally {
      m.srGiveWay = undefined;
    }
    this.check(this.call('encode_finish', this.encoder));
    const ptr = this.call('output', this.encoder) >>> 0;
    const length = this.call('output_len', this.encoder) >>> 0;
    return this.codec.heap().slice(ptr, ptr + length);
  }

  private flush(): void {
    this.check(this.call('rows', this.encoder, this.band, this.bandRows));
    this.rowsIn += this.bandRows;
    this.bandRows = 0;
  }

  /** A libaom setting (aomenc's name and value), as C strings in the engine for the one call. */
  private option(key: string, value: string): void {
    const bytes = new TextEncoder().encode(`${key}\0${value}\0`);
    this.withCopy(
      bytes,
      () => new AvifEngineError('out of memory for an option'),
      (ptr) => {
        if (this.call('option', this.encoder, ptr, ptr + key.length + 1) !== 0)
          throw new AvifEngineError(`the encoder refused the setting ${key}=${value}`);
      },
    );
  }

  private call(name: string, ...args: number[]): number {
    return this.codec.module[`_sr_avif_${name}`]!(...args);
  }

  private check(status: number): void {
    if (status === 0) return;
    const message = this.codec.string(this.call('message', this.encoder) >>> 0);
    throw new AvifEngineError(message || 'the AVIF encode failed');
  }
}
