// The AVIF decoder (wasm/src/sr_avifdec.c, built by wasm/build-avifdec.sh from libavif and dav1d): a module
// of its own, instantiated only when an AVIF comes in. The file is parsed, its AV1 items (a grid's cells,
// the alpha item) decoded one per call, each suspended inside dav1d at every superblock row to give way
// (patches/dav1d/, src/sr_give_way.js), and the picture read out as 8-bit RGBA rows in bands, so no RGBA
// frame is held. Its instances are pooled with the engine's (instances.ts).
import createAvifDecModule from './codec/sr_avifdec.js';
import avifDecWasm from './codec/sr_avifdec.wasm';
import { AvifDecodeError, AvifUnsupportedError } from './avifdec-error.ts';
import { BorrowedInstance } from './borrowed.ts';
import { EmscriptenInstance, type EmscriptenFactory } from './emscripten.ts';
import { giveWay, giveWayNow } from './give-way.ts';
import { pooledGrowthLimit, Slot } from './instances.ts';

type Fn = (...args: number[]) => number;
interface AvifDecModule {
  _malloc: Fn;
  _free: Fn;
  [name: `_sr_avifdec_${string}`]: Fn;
  /** Set for a decode step (src/sr_give_way.js): the pixels of the superblock row just decoded → a promise to wait for, or nothing. */
  srGiveWay?: ((pixels: number) => Promise<void> | undefined) | undefined;
  /** After a step returns: the promise of its result when it was suspended, else null. */
  srAsyncDone?: () => Promise<number> | null;
}

export { AvifDecodeError, AvifUnsupportedError };

/** Rows converted per call: even, so that every band but the last starts on a 4:2:0 chroma row. */
export const AVIF_DECODE_BAND_ROWS = 32;

/**
 * An AV1 pixel decoded, in give-way.ts's units (ENGINE_SLICE_PIXELS of the slowest row work is about
 * 40 ms): dav1d decodes about 5.5 MP/s here (a 12 MP frame in 2.2 s), some 9 times the row work's cost
 * per pixel, so a slice is about 220,000 AV1 pixels, 3-4 superblock rows of a 12 MP picture.
 */
export const AVIF_DECODE_WORK_PER_PIXEL = 9;

/** What sr_avifdec_info answers (the SR_INFO_* of sr_avifdec.c). */
const INFO = {
  width: 0,
  height: 1,
  depth: 2,
  yuvFormat: 3,
  alpha: 4,
  frames: 5,
  transforms: 6,
  primaries: 7,
  transfer: 8,
  matrix: 9,
  colour: 10,
  iccSize: 11,
  exifSize: 12,
  xmpSize: 13,
  codedWidth: 14,
  codedHeight: 15,
  repetitions: 16,
  durationMs: 17,
} as const;

/** How the colours reach the output (SR_COLOUR_*): as they are (sRGB or the file's ICC), Display P3 by nclx, or converted to sRGB. */
export type AvifColour = 'as-is' | 'display-p3' | 'to-srgb';
const COLOURS: AvifColour[] = ['as-is', 'display-p3', 'to-srgb'];

export interface AvifDecodedInfo {
  width: number;
  height: number;
  depth: number;
  alpha: boolean;
  frames: number;
  colour: AvifColour;
  /** nclx: colour primaries, transfer characteristics, matrix coefficients. */
  nclx: [number, number, number];
  /** A sequence's repetitions after the first play: -1 for ever, -2 unknown (no edit list). */
  repetitions: number;
}

export const avifDecSlot = new Slot(
  'sr_avifdec',
  () => new EmscriptenInstance(createAvifDecModule as EmscriptenFactory<AvifDecModule>, avifDecWasm, pooledGrowthLimit),
  { pooled: true },
);

/**
 * One AVIF being decoded: the instance is borrowed (alone: libavif's decoder keeps its state between the
 * steps) until `close`, which must be called.
 */
export class AvifDecoder extends BorrowedInstance<AvifDecModule> {
  private readonly decoder: number;
  readonly info: AvifDecodedInfo;
  private decoded = false;
  /** The band buffer in the instance's memory (0: none yet). */
  private band = 0;

  /**
   * `maxPixels`: what the boxes declare (the picture before its clean aperture), which the plan counted:
   * libavif and dav1d refuse a picture or an AV1 frame larger than that (a file whose AV1 data says more
   * than its boxes) before allocating it.
   */
  constructor(bytes: Uint8Array, maxPixels: number) {
    super(avifDecSlot, true);
    this.decoder = this.own(this.call('create', maxPixels) >>> 0, (ptr) => this.call('destroy', ptr));
    this.info = this.closeOnThrow(() => {
      if (!this.decoder) throw new AvifDecodeError('out of memory for the decoder');
      const input = this.copyIn(bytes);
      if (!input) throw new AvifDecodeError('out of memory for the file');
      const parsed = this.call('parse', this.decoder, input, bytes.length);
      if (parsed === -2) throw new AvifUnsupportedError(this.message());
      if (parsed !== 0) throw new AvifDecodeError(this.message());
      const at = (key: keyof typeof INFO) => this.call('info', this.decoder, INFO[key]);
      return {
        width: at('width'),
        height: at('height'),
        depth: at('depth'),
        alpha: at('alpha') === 1,
        frames: at('frames'),
        colour: COLOURS[at('colour')] ?? 'as-is',
        nclx: [at('primaries'), at('transfer'), at('matrix')],
        repetitions: at('repetitions'),
      };
    });
  }

  /** The file's ICC profile, EXIF (its TIFF block) and XMP, copied out (empty when absent). */
  metadata(): { icc: Uint8Array; exif: Uint8Array; xmp: Uint8Array } {
    const copy = (name: 'icc' | 'exif' | 'xmp', size: keyof typeof INFO) => {
      const length = this.call('info', this.decoder, INFO[size]);
      if (length <= 0) return new Uint8Array(0);
      const ptr = this.call(name, this.decoder) >>> 0;
      return this.codec.heap().slice(ptr, ptr + length);
    };
    return { icc: copy('icc', 'iccSize'), exif: copy('exif', 'exifSize'), xmp: copy('xmp', 'xmpSize') };
  }

  /**
   * Decodes the first image, one AV1 item (a grid cell, the alpha item) per step, each step suspended
   * inside dav1d at the end of a superblock row when the slice is used up (give-way.ts): a superblock row
   * (64 or 128 pixel rows) is the longest the isolate is held. The instance is this object's alone
   * (borrowed exclusive): a suspended step keeps its stack in the instance.
   */
  async decode(): Promise<void> {
    if (this.decoded) return;
    await this.steps();
    this.decoded = true;
  }

  /**
   * A sequence's next image, decoded as the first is (`decode`; the first on the first call), whose rows
   * `rows` then reads: its display time in ms.
   */
  async nextImage(): Promise<number> {
    if (this.decoded) await this.steps();
    else await this.decode();
    return this.call('info', this.decoder, INFO.durationMs);
  }

  /**
   * Display P3 converted to sRGB in the rows instead of passed through (for an output without its ICC
   * profile: animated WebP); `info.colour` says what the rows are then.
   */
  toSrgb(): void {
    this.info.colour = COLOURS[this.call('to_srgb', this.decoder)] ?? 'as-is';
  }

  private async steps(): Promise<void> {
    const m = this.codec.module;
    m.srGiveWay = (pixels) => giveWayNow(pixels * AVIF_DECODE_WORK_PER_PIXEL);
    try {
      for (;;) {
        let r = this.call('step', this.decoder);
        const suspended = m.srAsyncDone?.();
        if (suspended) r = await suspended;
        if (r < 0) throw new AvifDecodeError(this.message());
        // Between items: the parse of the next one and libavif's stitching, measured by the clock.
        await giveWay();
        if (r !== 1) break;
      }
    } catch (err) {
      this.close(true);
      throw err;
    } finally {
      m.srGiveWay = undefined;
    }
  }

  /** Every row, top to bottom, as RGBA (the view is reused: copy what must outlive the call). */
  async rows(sink: (row: Uint8Array) => void | Promise<void>): Promise<void> {
    await this.decode();
    const { width, height } = this.info;
    const rowBytes = width * 4;
    // One band buffer for every image of a sequence: what `alloc` takes is freed only by close.
    this.band ||= this.closeOnThrow(() => {
      const ptr = this.alloc(rowBytes * AVIF_DECODE_BAND_ROWS);
      if (!ptr) throw new AvifDecodeError('out of memory for the rows');
      return ptr;
    });
    const buffer = this.band;
    const band = new Uint8Array(rowBytes * AVIF_DECODE_BAND_ROWS);
    for (let y = 0; y < height; y += AVIF_DECODE_BAND_ROWS) {
      const n = Math.min(AVIF_DECODE_BAND_ROWS, height - y);
      this.closeOnThrow(() => {
        if (this.call('rows', this.decoder, buffer, y, n, 4) !== 0) throw new AvifDecodeError(this.message());
      });
      band.set(this.codec.heap().subarray(buffer, buffer + n * rowBytes));
      for (let r = 0; r < n; r++) await sink(band.subarray(r * rowBytes, (r + 1) * rowBytes));
      await giveWay(n * width);
    }
  }

  private message(): string {
    const ptr = this.call('message', this.decoder) >>> 0;
    const heap = this.codec.heap();
    let end = ptr;
    while (heap[end] !== 0) end++;
    return new TextDecoder().decode(heap.subarray(ptr, end)) || 'the decoder failed';
  }

  private call(name: string, ...args: number[]): number {
    return this.codec.module[`_sr_avifdec_${name}`]!(...args);
  }
}
