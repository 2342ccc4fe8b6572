// The JPEG XL encoder (wasm/src/sr_jxl.c, built by wasm/build-jxl.sh from libjxl): RGB(A) rows become a
// lossy JXL through libjxl's chunked-frame API, and a JPEG a lossless JXL that rebuilds it byte for byte.
// A module of its own, instantiated only by JXL output; its instances are pooled with the engine's, and
// their memories together stay within the pool's limit (instances.ts).
import createJxlModule from './codec/sr_jxl.js';
import jxlWasm from './codec/sr_jxl.wasm';
import { BorrowedInstance } from './borrowed.ts';
import { EmscriptenInstance, type EmscriptenFactory } from './emscripten.ts';
import { giveWayNow } from './give-way.ts';
import { pooledGrowthLimit, Slot } from './instances.ts';
import { JxlEngineError, JxlJpegRefusedError } from './jxl-error.ts';

type Fn = (...args: number[]) => number;
interface JxlModule {
  _malloc: Fn;
  _free: Fn;
  [name: `_sr_jxl_${string}`]: Fn;
  /** Set for an encode (src/sr_give_way.js): the work done since the last call → a promise to wait for, or nothing. */
  srGiveWay?: ((work: number) => Promise<void> | undefined) | undefined;
  /** After an encode returns: the promise of its result when it was suspended, else null. */
  srAsyncDone?: () => Promise<number> | null;
}

export { JxlEngineError, JxlJpegRefusedError };

/** Rows copied into the encoder per call. */
export const JXL_BAND_ROWS = 32;

export const jxlSlot = new Slot(
  'sr_jxl',
  () => new EmscriptenInstance(createJxlModule as EmscriptenFactory<JxlModule>, jxlWasm, pooledGrowthLimit),
  { pooled: true },
);

/**
 * One picture fed rows by a decoder that awaits between them: the instance is borrowed (alone: a suspended
 * encode keeps its stack in the instance) until `close`, which must be called; each method but `encode`
 * is synchronous and touches only this picture's memory.
 */
export class JxlRowEncoder extends BorrowedInstance<JxlModule> {
  private readonly encoder: number;
  private readonly rowBytes: number;
  private band = 0;
  private bandRows = 0;
  private rowsIn = 0;
  readonly width: number;
  readonly height: number;

  constructor(width: number, height: number, channels: 3 | 4) {
    super(jxlSlot, true);
    this.width = width;
    this.height = height;
    this.rowBytes = width * channels;
    this.encoder = this.own(this.call('create', width, height, channels) >>> 0, (ptr) => this.call('destroy', ptr));
    this.closeOnThrow(() => {
      if (!this.encoder) throw new JxlEngineError('out of memory for the picture');
      this.band = this.alloc(this.rowBytes * JXL_BAND_ROWS);
      if (!this.band) throw new JxlEngineError('out of memory for the rows');
    });
  }

  /** One row (at least width × channels bytes; the rest is ignored), upright, in order. */
  writeRow(row: Uint8Array): void {
    if (this.rowsIn + this.bandRows >= this.height) throw new JxlEngineError('more rows than the picture has');
    this.codec.heap().set(row.subarray(0, this.rowBytes), this.band + this.bandRows * this.rowBytes);
    if (++this.bandRows === JXL_BAND_ROWS) this.flush();
  }

  /**
   * The ICC profile describing the rows' colours (none: sRGB), and the EXIF (a TIFF block) and XMP to
   * write in boxes before the codestream (none: a bare codestream), copied into the encoder.
   */
  setMetadata(metadata: {
    icc?: Uint8Array | undefined;
    exif?: Uint8Array | undefined;
    xmp?: Uint8Array | undefined;
  }): void {
    this.copyInto('ICC profile', metadata.icc, (ptr, length) => this.call('icc', this.encoder, ptr, length));
    this.copyInto('EXIF', metadata.exif, (ptr, length) => this.call('metadata', this.encoder, 0, ptr, length));
    this.copyInto('XMP', metadata.xmp, (ptr, length) => this.call('metadata', this.encoder, 1, ptr, length));
  }

  private copyInto(what: string, bytes: Uint8Array | undefined, set: (ptr: number, length: number) => number): void {
    if (!bytes || bytes.length === 0) return;
    this.withCopy(
      bytes,
      () => new JxlEngineError(`out of memory for the ${what}`),
      (ptr) => this.check(set(ptr, bytes.length)),
    );
  }

  /**
   * Encodes the picture once every row is in, at a butteraugli distance and effort; again for another.
   * One libjxl call, suspended inside libjxl after a tile or group of its longest loops when the slice is
   * used up (give-way.ts; the work it is told is weighed in src/sr_jxl.c).
   */
  async encode(distance: number, effort: number): Promise<Uint8Array> {
    if (this.bandRows > 0) this.flush();
    const m = this.codec.module;
    m.srGiveWay = (work) => giveWayNow(work);
    try {
      let status = this.call('encode', this.encoder, distance, effort);
      const suspended = m.srAsyncDone?.();
      if (suspended) status = await suspended;
      this.check(status);
    } finally {
      m.srGiveWay = undefined;
    }
    return this.output();
  }

  private output(): Uint8Array {
    const ptr = this.call('output', this.encoder) >>> 0;
    const length = this.call('output_len', this.encoder) >>> 0;
    return this.codec.heap().slice(ptr, ptr + length);
  }

  private flush(): void {
    this.check(this.call('rows', this.encoder, this.band, this.bandRows));
    this.rowsIn += this.bandRows;
    this.bandRows = 0;
  }

  private call(name: string, ...args: number[]): number {
    return this.codec.module[`_sr_jxl_${name}`]!(...args);
  }

  private check(status: number): void {
    if (status === 0) return;
    const message = this.codec.string(this.call('message', this.encoder) >>> 0);
    throw new JxlEngineError(message || 'the JPEG XL encode failed');
  }
}

/**
 * A JPEG as a lossless JXL (in a container, with the `jbrd` box that rebuilds the JPEG byte for byte), in
 * one synchronous call. A JPEG libjxl refuses throws JxlJpegRefusedError with its reason.
 */
export function jpegToLosslessJxl(jpeg: Uint8Array, effort: number): Uint8Array {
  return jxlSlot.run((codec) => {
    const m = codec.module;
    const call = (name: string, ...args: number[]): number => m[`_sr_jxl_${name}`]!(...args);
    const encoder = call('create_empty') >>> 0;
    if (!encoder) throw new JxlEngineError('out of memory for the encoder');
    const input = m._malloc(Math.max(1, jpeg.length)) >>> 0;
    try {
      if (!input) throw new JxlEngineError('out of memory for the JPEG');
      codec.heap().set(jpeg, input);
      if (call('jpeg', encoder, input, jpeg.length, effort) !== 0) {
        const message = codec.string(call('message', encoder) >>> 0);
        throw /memory/i.test(message) ? new JxlEngineError(message) : new JxlJpegRefusedError(message);
      }
      const ptr = call('output', encoder) >>> 0;
      return codec.heap().slice(ptr, ptr + (call('output_len', encoder) >>> 0));
    } finally {
      if (input) m._free(input);
      call('destroy', encoder);
    }
  });
}
