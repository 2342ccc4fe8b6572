// The streaming JPEG engine (wasm/src, built by wasm/build.sh from libjpeg-turbo): header and markers,
// row decode at a DCT scale, ring-buffer Lanczos3, row encode in three memory modes, and the lossless
// transcode. Everything about one input happens inside one `withJpegJob` call, synchronously, because
// the instance is shared by the isolate's requests (wasm/instances.ts); or, for the service's
// compressions, inside `withJpegJobGivingWay`, which holds an instance of its own and runs the decode
// and encode in steps, giving way to the isolate's other requests between them (give-way.ts).
import createJpegModule from './codec/sr_jpeg.js';
import jpegWasm from './codec/sr_jpeg.wasm';
import { EmscriptenInstance, type EmscriptenFactory } from './emscripten.ts';
import { pooledGrowthLimit, Slot } from './instances.ts';
import { readChunkedOutput } from './chunked-output.ts';
import {
  BorrowedInstance,
  EngineJob,
  type InputJobFunctions,
  withInputJob,
  withInputJobGivingWay,
} from './borrowed.ts';
import { giveWay } from './give-way.ts';
import { BatchRowReader } from './row-batches.ts';

type Fn = (...args: number[]) => number;
interface JpegModule {
  _malloc: Fn;
  _free: Fn;
  [name: `_sr_job_${string}`]: Fn;
}

/** libjpeg's J_COLOR_SPACE values, by name. */
const COLOR_SPACES = ['unknown', 'gray', 'rgb', 'ycbcr', 'cmyk', 'ycck'] as const;
export type JpegColorSpace = (typeof COLOR_SPACES)[number];

export interface JpegMarker {
  /** 0xE1 for APP1 (EXIF, XMP), 0xE2 for APP2 (ICC chunks, MPF). */
  code: number;
  data: Uint8Array;
}

export interface JpegInfo {
  width: number;
  height: number;
  components: number;
  colorSpace: JpegColorSpace;
  progressive: boolean;
  /** Sampling factors (h, v) per component. */
  sampling: [number, number][];
  maxSampling: [number, number];
  adobe: boolean;
  precision: number;
  arithmetic: boolean;
  markers: JpegMarker[];
}

/** Encoder modes by memory: see docs/image-engine.md, "The JPEG half". Values are the C enum's. */
export const ENCODE_MODES = { progressive: 0, two_pass: 1, stream: 2 } as const;
export type EncodeMode = keyof typeof ENCODE_MODES;

export interface EncodedJpeg {
  bytes: Uint8Array;
  width: number;
  height: number;
}

/** The engine refused the file or ran out of memory; `message` is libjpeg's or ours. */
export class JpegEngineError extends Error {}

/**
 * The engine's instances, shared with the WebP engine (webp-engine.ts): one module holds both. Pooled,
 * each growing only within what the pool's limit leaves (instances.ts).
 */
export const slot = new Slot(
  'sr_jpeg',
  () => new EmscriptenInstance(createJpegModule as EmscriptenFactory<JpegModule>, jpegWasm, pooledGrowthLimit),
  { pooled: true },
);

/** The engine's JPEG job constructor and destructor. */
const jobFunctions = (codec: EmscriptenInstance<JpegModule>): InputJobFunctions => ({
  create: codec.module._sr_job_create!,
  destroy: codec.module._sr_job_destroy!,
});

// Offsets into sr_job_info() (sr_jpeg.h).
const INFO = {
  width: 0,
  height: 1,
  components: 2,
  colorSpace: 3,
  progressive: 4,
  maxH: 5,
  maxV: 6,
  samp: 7,
  adobe: 15,
  markers: 17,
  precision: 18,
  arithmetic: 19,
  length: 20,
};

/** What the engine's two pixel encoders (whole image, rows) take, in the order its C functions take it. */
type PixelsEncoding = [
  width: number,
  height: number,
  components: number,
  quality: number,
  h: number,
  v: number,
  /** 0 baseline with optimised tables, 1 progressive; rows only: 2 streamed with the standard tables. */
  layout: 0 | 1 | 2,
];

const encodingArgs = (e: PixelsEncoding): number[] => [...e];

/**
 * Rows (or iMCU rows of a pass over the coefficients) per engine call of a job that gives way: small
 * enough that a call is a few milliseconds at the largest width, so the slice (give-way.ts) ends near
 * its mark; each call costs a crossing into the engine and a clock read.
 */
export const JPEG_STEP_ROWS = 16;

export class JpegJob extends EngineJob<JpegModule> {
  private header: JpegInfo | undefined;
  private channelCount = 0;
  private outW = 0;
  private outH = 0;
  private orientation = 1;

  /** @internal the job's address in the engine, for the WebP engine's calls that read it. */
  get pointer(): number {
    return this.job;
  }

  /** The EXIF orientation setPixels was given (1: the rows are upright as stored). */
  get pixelOrientation(): number {
    return this.orientation;
  }

  /** What the engine's last step did, in pixels of row work (give-way.ts). */
  get stepWork(): number {
    return this.call('step_work', this.job) >>> 0;
  }

  /** What the header says; read on first use, before any pixel. */
  get info(): JpegInfo {
    if (!this.header) {
      this.check(this.call('header', this.job), 'header');
      this.header = this.readInfo();
      this.call('close_header', this.job);
    }
    return this.header;
  }

  /** Decode at scaleNum/8 (1–8) and resample to width × height (stored orientation, before `orientation`). */
  setPixels(scaleNum: number, width: number, height: number, orientation: number): void {
    void this.info;
    this.check(this.call('set_pixels', this.job, scaleNum, width, height, orientation), 'pixel settings');
    this.channelCount = this.call('channels', this.job);
    this.outW = width;
    this.outH = height;
    this.orientation = orientation;
  }

  /** Keeps a box of the upright output alone, for the row puller (JpegRowReader); after setPixels. */
  setWindow(box: RowWindow): void {
    this.check(this.call('set_window', this.job, box.x, box.y, box.width, box.height), 'window');
  }

  /** 1 (grey) or 3 (RGB): what the pixels are after setPixels. */
  get channels(): number {
    return this.channelCount;
  }

  /** Queues a marker segment for every output written after this. */
  addMarker(code: number, data: Uint8Array): void {
    this.withBytes(data, (ptr) => this.check(this.call('add_marker', this.job, code, ptr, data.length), 'marker'));
  }

  /** Forgets the queued markers. */
  clearMarkers(): void {
    this.call('clear_markers', this.job);
  }

  /** Encodes the pixels upright; subsample = 4:2:0 chroma. */
  encode(quality: number, subsample: boolean, mode: EncodeMode): EncodedJpeg {
    this.check(this.call('encode', this.job, quality, Number(subsample), ENCODE_MODES[mode]), 'encode');
    return this.output();
  }

  /**
   * `encode` in steps of JPEG_STEP_ROWS rows, giving way between them (give-way.ts), the same bytes: the
   * job's instance must be its own meanwhile (withJpegJobGivingWay), since the encoder's trellis keeps
   * state in the module between steps.
   */
  async encodeGivingWay(quality: number, subsample: boolean, mode: EncodeMode): Promise<EncodedJpeg> {
    // Orientations 3-8 encode from the frame: filled here in steps, or by the encode in one call.
    if (this.orientation >= 3) await this.keepFrameGivingWay();
    this.check(this.call('encode_begin', this.job, quality, Number(subsample), ENCODE_MODES[mode]), 'encode');
    await this.steps('encode_step', 'encode');
    return this.output();
  }

  /** `keepFrame` in steps, giving way between them. */
  async keepFrameGivingWay(): Promise<void> {
    await this.steps('fill_step', 'decode');
  }

  /** @internal runs the engine's stepped call until it is done: 1 more, 0 done, -1 failed. */
  async steps(name: string, what: string, ...args: number[]): Promise<void> {
    for (;;) {
      const more = this.call(name, this.job, ...args, JPEG_STEP_ROWS);
      if (more < 0) this.check(more, what);
      await giveWay(this.stepWork);
      if (more === 0) return;
    }
  }

  /** The lossless rewrite, turned upright on the DCT blocks. */
  transcode(orientation: number, progressive: boolean): EncodedJpeg {
    this.check(this.call('transcode', this.job, orientation, Number(progressive)), 'transcode');
    return this.output();
  }

  /** `transcode` in steps (reading the coefficients, then every pass of the output), giving way between them. */
  async transcodeGivingWay(orientation: number, progressive: boolean): Promise<EncodedJpeg> {
    this.check(this.call('transcode_begin', this.job, orientation, Number(progressive)), 'transcode');
    await this.steps('transcode_step', 'transcode');
    return this.output();
  }

  /** @internal encodePixelsJpeg's call, on a job without input. */
  encodeWholePixels(ptr: number, ...encoding: PixelsEncoding): Uint8Array {
    this.check(this.call('encode_pixels', this.job, ptr, ...encodingArgs(encoding)), 'encode');
    return this.output().bytes;
  }

  /** @internal JpegRowEncoder's steps, on a job without input. */
  rowsBegin(...encoding: PixelsEncoding): void {
    this.check(this.call('rows_begin', this.job, ...encodingArgs(encoding)), 'encode');
  }

  /** @internal */
  rowsWrite(ptr: number, count: number): void {
    this.check(this.call('rows_write', this.job, ptr, count), 'encode');
  }

  /** @internal */
  rowsFinish(): Uint8Array {
    this.check(this.call('rows_finish', this.job), 'encode');
    return this.output().bytes;
  }

  /** @internal rowsFinish in steps (a progressive file's later scans), giving way between them. */
  async rowsFinishGivingWay(): Promise<Uint8Array> {
    await this.steps('rows_finish_step', 'encode');
    return this.output().bytes;
  }

  /** Decodes every row into the job's frame (as stored) and returns a copy: width × height × channels. */
  frame(): Uint8Array {
    this.check(this.call('decode_frame', this.job), 'decode');
    const ptr = this.call('frame', this.job) >>> 0;
    return this.codec.heap().slice(ptr, ptr + this.frameBytes());
  }

  /** Keeps the decoded frame in the engine, so that repeated encodes (target_kb) decode once. */
  keepFrame(): void {
    this.check(this.call('decode_frame', this.job), 'decode');
  }

  /**
   * Rows the last decoding run produced at its DCT scale, where it finished or stopped: a file whose
   * data ends early stops at the rows its data holds. Rows a window skipped are not counted.
   */
  get rowsDecoded(): number {
    return this.call('rows_decoded', this.job);
  }

  private frameBytes(): number {
    return this.outW * this.outH * this.channelCount;
  }

  private output(): EncodedJpeg {
    return readChunkedOutput(this.codec, (name, ...args) => this.call(name, ...args), this.job);
  }

  private readInfo(): JpegInfo {
    const ptr = this.call('info', this.job) >>> 0;
    const v = Array.from(new Int32Array(this.codec.heap().buffer, ptr, INFO.length));
    const components = v[INFO.components]!;
    const sampling: [number, number][] = [];
    for (let c = 0; c < Math.min(components, 4); c++) sampling.push([v[INFO.samp + c * 2]!, v[INFO.samp + c * 2 + 1]!]);
    const markers: JpegMarker[] = [];
    const triple = this.codec.module._malloc(12);
    try {
      for (let i = 0; i < v[INFO.markers]!; i++) {
        if (this.call('marker', this.job, i, triple) !== 0) break;
        const [code, at, len] = new Int32Array(this.codec.heap().buffer, triple, 3) as unknown as [
          number,
          number,
          number,
        ];
        markers.push({ code, data: this.codec.heap().slice(at >>> 0, (at >>> 0) + len) });
      }
    } finally {
      this.codec.module._free(triple);
    }
    return {
      width: v[INFO.width]!,
      height: v[INFO.height]!,
      components,
      colorSpace: COLOR_SPACES[v[INFO.colorSpace]!] ?? 'unknown',
      progressive: v[INFO.progressive] !== 0,
      sampling,
      maxSampling: [v[INFO.maxH]!, v[INFO.maxV]!],
      adobe: v[INFO.adobe] !== 0,
      precision: v[INFO.precision]!,
      arithmetic: v[INFO.arithmetic] !== 0,
      markers,
    };
  }

  private call(name: string, ...args: number[]): number {
    return this.codec.module[`_sr_job_${name}`]!(...args);
  }

  private withBytes<R>(data: Uint8Array, fn: (ptr: number) => R): R {
    const ptr = this.codec.module._malloc(Math.max(1, data.length));
    if (!ptr) throw new JpegEngineError('out of memory');
    try {
      this.codec.heap().set(data, ptr);
      return fn(ptr);
    } finally {
      this.codec.module._free(ptr);
    }
  }

  /** @internal throws the engine's message when `status` is not 0. */
  check(status: number, what: string): void {
    if (status === 0) return;
    const message = this.codec.string(this.call('message', this.job) >>> 0);
    throw new JpegEngineError(message || `the JPEG ${what} failed`);
  }
}

/**
 * Runs `fn` on a job over `input`, in the shared engine instance. The input is copied into the engine
 * once; the job and the copy are freed when `fn` returns or throws.
 */
export function withJpegJob<R>(input: Uint8Array, fn: (job: JpegJob) => R): R {
  return slot.run((codec) => jpegJobIn(codec, input, fn));
}

/**
 * Runs `fn`, which awaits (the job's *GivingWay methods), on a job over `input` in an engine instance
 * held for it alone until `fn` settles (instances.ts, borrow's `exclusive`): between the job's steps
 * other requests run, on other instances. The input, the job and the hold are let go when `fn` settles.
 */
export async function withJpegJobGivingWay<R>(input: Uint8Array, fn: (job: JpegJob) => Promise<R>): Promise<R> {
  const { instance: codec, release } = slot.borrow(true);
  let failed = true;
  try {
    const result = await jpegJobInGivingWay(codec, input, fn);
    failed = false;
    return result;
  } finally {
    release(failed);
  }
}

/** @internal withJpegJobGivingWay's body, in an instance the caller holds alone (the WebP engine's JPEG input). */
export function jpegJobInGivingWay<R>(
  codec: EmscriptenInstance<JpegModule>,
  input: Uint8Array,
  fn: (job: JpegJob) => Promise<R>,
): Promise<R> {
  const outOfMemory = (what: string) => new JpegEngineError(`out of memory for the ${what}`);
  return withInputJobGivingWay(codec, input, jobFunctions(codec), outOfMemory, (jobPtr) =>
    fn(new JpegJob(codec, jobPtr)),
  );
}

/** @internal withJpegJob's body, in an instance the caller already holds (the WebP engine's JPEG input). */
export function jpegJobIn<R>(codec: EmscriptenInstance<JpegModule>, input: Uint8Array, fn: (job: JpegJob) => R): R {
  const outOfMemory = (what: string) => new JpegEngineError(`out of memory for the ${what}`);
  return withInputJob(codec, input, jobFunctions(codec), outOfMemory, (jobPtr) => fn(new JpegJob(codec, jobPtr)));
}

/** A box of upright pixels. */
export interface RowWindow {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * A JPEG's pixels pulled in batches of upright rows by a consumer that awaits between them (the PNG
 * writer): decoded at scaleNum/8 and resampled to width × height (as stored) like the encoders' rows;
 * an orientation other than 1 fills the engine's frame once and reads it turned. With a `window` (a box
 * of the upright resampled image: a crop), only its rows are handed out, and the engine decodes only
 * what they take (sr_job_set_window): the same pixels as the whole image's.
 */
export class JpegRowReader extends BatchRowReader<JpegModule> {
  private readonly jobPtr: number;
  private readonly job: JpegJob;
  readonly width: number;
  readonly height: number;
  readonly channels: number;

  constructor(
    input: Uint8Array,
    scaleNum: number,
    width: number,
    height: number,
    orientation: number,
    window?: RowWindow,
  ) {
    super(slot);
    this.jobPtr = this.newJob(jobFunctions(this.codec), input);
    [this.width, this.height] = window
      ? [window.width, window.height]
      : orientation >= 5
        ? [height, width]
        : [width, height];
    [this.job, this.channels] = this.closeOnThrow(() => {
      if (!this.jobPtr) throw new JpegEngineError('out of memory for the input');
      const job = new JpegJob(this.codec, this.jobPtr);
      job.setPixels(scaleNum, width, height, orientation);
      if (window) job.setWindow(window);
      return [job, job.channels] as const;
    });
    this.takeBatchBuffer(() => new JpegEngineError('out of memory for the rows'));
  }

  /** The input's APPn and COM segments (its ICC profile, for an output that carries it). */
  get markers(): JpegMarker[] {
    return this.job.info.markers;
  }

  /** Rows the last pass decoded at the DCT scale (JpegJob.rowsDecoded): a window's skipped rows are not. */
  get rowsDecoded(): number {
    return this.job.rowsDecoded;
  }

  protected pullBegin(): void {
    this.guard(() => this.call('pull_begin', this.jobPtr));
  }

  protected pull(ptr: number, max: number): number {
    return this.guard(() => this.call('pull', this.jobPtr, ptr, max));
  }

  /** A step that returned -1 throws the engine's message. */
  private guard(step: () => number): number {
    const result = step();
    if (result < 0) this.job.check(result, 'decode');
    return result;
  }

  private call(name: string, ...args: number[]): number {
    return this.codec.module[`_sr_job_${name}`]!(...args);
  }
}

export interface PixelEncoding {
  quality: number;
  /** Luma sampling (h, v); chroma is 1 × 1: [2, 2] is 4:2:0, [2, 1] 4:2:2, [1, 2] 4:4:0, [4, 1] 4:1:1, [1, 1] 4:4:4. */
  sampling?: [number, number];
  progressive?: boolean;
  /**
   * Rows only (JpegRowEncoder): a baseline file with the standard Huffman tables, written as the rows
   * come, without the coefficient buffer optimised tables and progressive scans need (a few % more bytes).
   */
  stream?: boolean;
  markers?: JpegMarker[];
}

/**
 * Encodes whole pixels (1 grey, 3 RGB, or 4 CMYK with Adobe's inverted inks, written as YCCK) with any
 * sampling: the fixtures the decoder's tests need, made by the engine itself.
 */
export function encodePixelsJpeg(
  pixels: Uint8Array,
  width: number,
  height: number,
  components: 1 | 3 | 4,
  options: PixelEncoding,
): Uint8Array {
  if (pixels.length !== width * height * components)
    throw new RangeError(`expected ${width * height * components} bytes, got ${pixels.length}`);
  return slot.run((codec) => {
    const m = codec.module;
    const jobPtr = m._sr_job_create!(0, 0);
    const pixelPtr = m._malloc(pixels.length);
    try {
      if (!jobPtr || !pixelPtr) throw new JpegEngineError('out of memory');
      codec.heap().set(pixels, pixelPtr);
      const job = new JpegJob(codec, jobPtr);
      for (const marker of options.markers ?? []) job.addMarker(marker.code, marker.data);
      const [h, v] = options.sampling ?? [2, 2];
      return job.encodeWholePixels(
        pixelPtr,
        width,
        height,
        components,
        options.quality,
        h,
        v,
        options.progressive ? 1 : 0,
      );
    } finally {
      m._sr_job_destroy!(jobPtr);
      m._free(pixelPtr);
    }
  });
}

/** Rows copied into the engine per call of a row encoder. */
const ROW_BATCH = 32;

/**
 * A JPEG written from rows that arrive over time (from a decoder outside the engine, which awaits):
 * the engine holds its encoder's state, never the pixels. Each method is synchronous; the instance is
 * borrowed until `finish` or `abort`, and one of them must be called.
 */
export class JpegRowEncoder extends BorrowedInstance<JpegModule> {
  private readonly job: JpegJob;
  private readonly buffer: number;
  private readonly rowBytes: number;

  constructor(width: number, height: number, components: 1 | 3, options: PixelEncoding) {
    // Alone on its instance: the trellis's rates live in the module's globals from one row to the next,
    // and the finish runs in steps with other requests between them.
    super(slot, true);
    this.rowBytes = width * components;
    this.buffer = this.alloc(this.rowBytes * ROW_BATCH);
    const jobPtr = this.newJob(jobFunctions(this.codec));
    this.job = this.closeOnThrow(() => {
      if (!jobPtr || !this.buffer) throw new JpegEngineError('out of memory');
      const job = new JpegJob(this.codec, jobPtr);
      for (const marker of options.markers ?? []) job.addMarker(marker.code, marker.data);
      const [h, v] = options.sampling ?? [2, 2];
      const layout = options.stream ? 2 : options.progressive ? 1 : 0;
      job.rowsBegin(width, height, components, options.quality, h, v, layout);
      return job;
    });
  }

  /** Whole rows, one after another (width × components bytes each). */
  write(rows: Uint8Array): void {
    if (rows.length % this.rowBytes !== 0)
      throw new RangeError(`rows must be whole: a multiple of ${this.rowBytes} bytes`);
    this.closeOnThrow(() => {
      for (let at = 0; at < rows.length; at += this.rowBytes * ROW_BATCH) {
        const batch = rows.subarray(at, Math.min(rows.length, at + this.rowBytes * ROW_BATCH));
        this.codec.heap().set(batch, this.buffer);
        this.job.rowsWrite(this.buffer, batch.length / this.rowBytes);
      }
    });
  }

  finish(): Uint8Array {
    const bytes = this.closeOnThrow(() => this.job.rowsFinish());
    this.close(false);
    return bytes;
  }

  /** `finish` in steps (a progressive file's scans), giving way to other requests between them. */
  async finishGivingWay(): Promise<Uint8Array> {
    let bytes: Uint8Array;
    try {
      bytes = await this.job.rowsFinishGivingWay();
    } catch (err) {
      this.close(true);
      throw err;
    }
    this.close(false);
    return bytes;
  }

  /** Gives the engine back without an output (the caller failed). */
  abort(): void {
    this.close(false);
  }
}
