// The streaming WebP engine (wasm/src/sr_webp*.c, built by wasm/build.sh from libwebp into the same
// module as the JPEG engine): incremental decode handing out rows, the ring resampler, the encoder fed
// band by band (YUV for lossy, ARGB for lossless), and JPEG output through a JPEG job whose rows come
// from the WebP decoder. A compression runs in steps on an instance held alone (withWebpJobGivingWay,
// withJpegAsWebpGivingWay), giving way to the isolate's other requests between them, the encode
// suspended inside libwebp (src/sr_give_way.js); the one-call forms (withWebpJob) share the instance
// with the isolate's requests (wasm/instances.ts), so everything about one input happens in one call.
import type { EmscriptenInstance } from './emscripten.ts';
import {
  BorrowedInstance,
  EngineJob,
  type InputJobFunctions,
  withInputJob,
  withInputJobGivingWay,
} from './borrowed.ts';
import { giveWay, giveWayNow } from './give-way.ts';
import { JPEG_STEP_ROWS, JpegJob, jpegJobIn, jpegJobInGivingWay, slot, type JpegMarker } from './jpeg-engine.ts';
import { BatchRowReader, PULL_AGAIN } from './row-batches.ts';
import { readChunkedOutput } from './chunked-output.ts';

type Fn = (...args: number[]) => number;
interface EngineModule {
  _malloc: Fn;
  _free: Fn;
  [name: `_sr_${string}`]: Fn;
  /** Set for an encode that gives way (src/sr_give_way.js): the pixels done since the last call → a promise to wait for, or nothing. */
  srGiveWay?: ((pixels: number) => Promise<void> | undefined) | undefined;
  /** After an export returns: the promise of its result when it was suspended, else null. */
  srAsyncDone?: () => Promise<number> | null;
}

/** The engine refused the file or ran out of memory; `message` is libwebp's status or ours. */
export class WebpEngineError extends Error {}

export interface WebpInfo {
  width: number;
  height: number;
  hasAlpha: boolean;
  /** VP8L (true) or VP8 (false). */
  lossless: boolean;
  animated: boolean;
}

export interface EncodedWebp {
  bytes: Uint8Array;
  width: number;
  height: number;
}

/** The encoder's default effort (libwebp's `method`, 0–6): cwebp's and sharp's default. */
export const WEBP_METHOD = 4;

/**
 * A lossy WebP encode's cost per pixel of the picture in give-way.ts's pixels of row work (a JPEG row
 * decoded, resampled and encoded), so that the pixel slice spans about the same time in an encode as
 * in row work where the clock stands still: a 12 MP photo's encode at method 4 (about 3 s on this
 * machine) against its row work (about 0.25 s).
 */
export const WEBP_ENCODE_WORK_PER_PIXEL = 12;

/**
 * The same for a lossless (VP8L) encode: the 12 MP screenshot of the PNG bench at the lossless effort
 * took 4.6–5.5 s of CPU in Node (loaded machine), about 20 times the row work as measured above.
 */
export const WEBP_LOSSLESS_WORK_PER_PIXEL = 20;

/** The engine's WebP job constructor and destructor. */
const jobFunctions = (codec: EmscriptenInstance<EngineModule>): InputJobFunctions => ({
  create: codec.module._sr_webp_create!,
  destroy: codec.module._sr_webp_destroy!,
});

/** sr_webp_pull's answer while a turned frame is still being decoded (SRW_PULL_AGAIN, sr_webp.h). */
const SRW_PULL_AGAIN = -2;

// Offsets into sr_webp_info() (sr_webp.h).
const INFO = { width: 0, height: 1, alpha: 2, format: 3, animated: 4, length: 5 };

export class WebpJob extends EngineJob<EngineModule> {
  private features: WebpInfo | undefined;

  /** What the headers say (libwebp's WebPGetFeatures); read on first use. */
  get info(): WebpInfo {
    if (!this.features) {
      const ptr = this.call('info', this.job) >>> 0;
      if (!ptr) this.fail('header');
      const v = new Int32Array(this.codec.heap().buffer, ptr, INFO.length);
      this.features = {
        width: v[INFO.width]!,
        height: v[INFO.height]!,
        hasAlpha: v[INFO.alpha] !== 0,
        lossless: v[INFO.format] === 2,
        animated: v[INFO.animated] !== 0,
      };
    }
    return this.features;
  }

  /**
   * Decodes into the encoder's picture at width × height (stored orientation; the picture is upright):
   * YUV 4:2:0 (+ alpha) for lossy output, ARGB for lossless. Encode it with `encode`, as often as needed.
   */
  fill(width: number, height: number, orientation: number, lossless: boolean): void {
    void this.info;
    this.check(this.call('fill', this.job, width, height, orientation, Number(lossless)), 'decode');
  }

  /**
   * Encodes the filled picture: lossy at `quality`, or lossless with `quality` as the effort. Lossy
   * uses libwebp's token buffer unless `lowMemory`; `tokenGrowthBytes` (0: unbounded) is how far the
   * instance's memory may grow while it does, past which the picture is encoded again in low-memory
   * mode (`lowMemory` in the result says which ran).
   */
  encode(
    quality: number,
    lossless: boolean,
    method = WEBP_METHOD,
    lowMemory = false,
    tokenGrowthBytes = 0,
  ): EncodedWebp & { lowMemory: boolean } {
    this.check(
      this.call('encode', this.job, quality, Number(lossless), method, Number(lowMemory), tokenGrowthBytes),
      'encode',
    );
    const ranLowMemory = this.call('result_low_memory', this.job) === 1;
    return { ...this.output(), lowMemory: ranLowMemory };
  }

  /**
   * `encode`, suspended where libwebp reports its progress (lossy: every macroblock row; lossless: every
   * percent of each of its phases) to give way to other requests (give-way.ts). The same bytes. The
   * instance must be this job's alone until it settles (withWebpJobGivingWay, withJpegAsWebpGivingWay):
   * a suspended encode's stack is kept in the instance.
   */
  async encodeGivingWay(
    quality: number,
    lossless: boolean,
    method = WEBP_METHOD,
    lowMemory = false,
    tokenGrowthBytes = 0,
  ): Promise<EncodedWebp & { lowMemory: boolean }> {
    const m = this.codec.module;
    const perPixel = lossless ? WEBP_LOSSLESS_WORK_PER_PIXEL : WEBP_ENCODE_WORK_PER_PIXEL;
    m.srGiveWay = (pixels) => giveWayNow(pixels * perPixel);
    let status: number;
    try {
      status = this.call('encode', this.job, quality, Number(lossless), method, Number(lowMemory), tokenGrowthBytes);
      const suspended = m.srAsyncDone?.();
      if (suspended) status = await suspended;
    } finally {
      m.srGiveWay = undefined;
    }
    this.check(status, 'encode');
    const ranLowMemory = this.call('result_low_memory', this.job) === 1;
    return { ...this.output(), lowMemory: ranLowMemory };
  }

  /** `fill` in steps (a slice of the input decoded, or a band of a turned frame's rows), giving way between them. */
  async fillGivingWay(width: number, height: number, orientation: number, lossless: boolean): Promise<void> {
    void this.info;
    this.check(this.call('fill_begin', this.job, width, height, orientation, Number(lossless)), 'decode');
    for (;;) {
      const more = this.call('fill_step', this.job);
      if (more < 0) this.fail('decode');
      await giveWay(this.stepWork);
      if (more === 0) return;
    }
  }

  /** fillFromJpeg in steps of JPEG_STEP_ROWS rows, giving way between them (its frame first, for an orientation). */
  async fillFromJpegGivingWay(jpeg: JpegJob, lossless: boolean): Promise<void> {
    if (jpeg.pixelOrientation !== 1) await jpeg.keepFrameGivingWay();
    this.check(this.call('fill_from_jpeg_begin', this.job, jpeg.pointer, Number(lossless)), 'decode');
    for (;;) {
      const more = this.call('fill_from_jpeg_step', this.job, jpeg.pointer, JPEG_STEP_ROWS);
      if (more < 0) this.fail('decode');
      await giveWay(jpeg.stepWork);
      if (more === 0) return;
    }
  }

  /** Fills the picture from a JPEG job whose pixels are set (its rows, upright): ARGB for lossless, YUV 4:2:0 for lossy. */
  fillFromJpeg(jpeg: JpegJob, lossless: boolean): void {
    this.check(this.call('fill_from_jpeg', this.job, jpeg.pointer, Number(lossless)), 'decode');
  }

  /** @internal WebpRowReader's steps: start pulling upright rows at width × height (stored). */
  pullBegin(width: number, height: number, orientation: number): void {
    this.check(this.call('pull_begin', this.job, width, height, orientation), 'decode');
  }

  /** @internal up to `max` rows at `ptr`; the count, 0 at the end, or PULL_AGAIN (a turned frame's decode went a step further). */
  pull(ptr: number, max: number): number {
    const n = this.call('pull', this.job, ptr, max);
    if (n === SRW_PULL_AGAIN) return PULL_AGAIN;
    if (n < 0) this.fail('decode');
    return n;
  }

  /** @internal the work (input pixels decoded) of the last fill step or pull, for giveWay. */
  get stepWork(): number {
    return this.call('step_work', this.job) >>> 0;
  }

  /** Frees the picture once its last encode is read. */
  freePicture(): void {
    this.call('free_picture', this.job);
  }

  /** The decoded pixels at width × height (stored), turned upright: RGB, or RGBA when the input has alpha. */
  frame(width: number, height: number, orientation: number): { data: Uint8Array; channels: 3 | 4 } {
    void this.info;
    const ptr = this.call('frame', this.job, width, height, orientation) >>> 0;
    if (!ptr) this.fail('decode');
    const channels = this.info.hasAlpha ? 4 : 3;
    try {
      return { data: this.codec.heap().slice(ptr, ptr + width * height * channels), channels };
    } finally {
      this.codec.module._free(ptr);
    }
  }

  /**
   * Runs `fn` on a JPEG job whose pixels are this WebP at width × height (stored), RGB with alpha
   * flattened onto white, written in `orientation`; the JPEG job's encoders, markers and frame apply.
   */
  withJpeg<R>(width: number, height: number, orientation: number, fn: (job: JpegJob) => R): R {
    void this.info;
    const jpeg = this.call('jpeg_job', this.job, width, height, orientation) >>> 0;
    if (!jpeg) throw new WebpEngineError('out of memory for the JPEG job');
    try {
      return fn(new JpegJob(this.codec as never, jpeg));
    } finally {
      this.call('after_jpeg', this.job);
    }
  }

  /** withJpeg for `fn` that awaits (its encode and frame in steps, the rows pulled from this decoder as they go). */
  async withJpegGivingWay<R>(
    width: number,
    height: number,
    orientation: number,
    fn: (job: JpegJob) => Promise<R>,
  ): Promise<R> {
    void this.info;
    const jpeg = this.call('jpeg_job', this.job, width, height, orientation) >>> 0;
    if (!jpeg) throw new WebpEngineError('out of memory for the JPEG job');
    try {
      return await fn(new JpegJob(this.codec as never, jpeg));
    } finally {
      this.call('after_jpeg', this.job);
    }
  }

  /** @internal the row-fed encoder: a picture of width × height, channels 3 (RGB) or 4 (RGBA). */
  beginRows(width: number, height: number, channels: 3 | 4, lossless: boolean): void {
    this.check(this.call('rows_begin', this.job, width, height, channels, Number(lossless)), 'encode');
  }

  /** @internal takes whole rows (a multiple of width × channels bytes). */
  pushRows(rows: Uint8Array, rowBytes: number): void {
    const m = this.codec.module;
    const ptr = m._malloc(Math.max(1, rows.length));
    if (!ptr) throw new WebpEngineError('out of memory for the rows');
    try {
      this.codec.heap().set(rows, ptr);
      this.check(this.call('rows_push', this.job, ptr, Math.floor(rows.length / rowBytes), rowBytes), 'encode');
    } finally {
      m._free(ptr);
    }
  }

  private output(): EncodedWebp {
    return readChunkedOutput(this.codec, (name, ...args) => this.call(name, ...args), this.job);
  }

  private call(name: string, ...args: number[]): number {
    return this.codec.module[`_sr_webp_${name}`]!(...args);
  }

  private check(status: number, what: string): void {
    if (status !== 0) this.fail(what);
  }

  private fail(what: string): never {
    const message = this.codec.string(this.call('message', this.job) >>> 0);
    throw new WebpEngineError(message || `the WebP ${what} failed`);
  }
}

/**
 * Runs `fn` on a WebP job over `input`, in the shared engine instance. The input is copied into the
 * engine once (the decoder reads a growing prefix of that copy, never a second one); the job and the
 * copy are freed when `fn` returns or throws.
 */
export function withWebpJob<R>(input: Uint8Array, fn: (job: WebpJob) => R): R {
  return slot.run((instance) => {
    const codec = instance as unknown as EmscriptenInstance<EngineModule>;
    const outOfMemory = (what: string) => new WebpEngineError(`out of memory for the ${what}`);
    return withInputJob(codec, input, jobFunctions(codec), outOfMemory, (jobPtr) => fn(new WebpJob(codec, jobPtr)));
  });
}

/**
 * withWebpJob for `fn` that awaits, giving way to the isolate's other requests: the instance is held for
 * this alone until `fn` settles (instances.ts, borrow's `exclusive`), since a stepped fill or a JPEG
 * encode keeps its state there between steps (the JPEG trellis in the module's globals) and a suspended
 * WebP encode its stack.
 */
export async function withWebpJobGivingWay<R>(input: Uint8Array, fn: (job: WebpJob) => Promise<R>): Promise<R> {
  const { instance, release } = slot.borrow(true);
  const codec = instance as unknown as EmscriptenInstance<EngineModule>;
  let failed = true;
  try {
    const outOfMemory = (what: string) => new WebpEngineError(`out of memory for the ${what}`);
    const result = await withInputJobGivingWay(codec, input, jobFunctions(codec), outOfMemory, (jobPtr) =>
      fn(new WebpJob(codec, jobPtr)),
    );
    failed = false;
    return result;
  } finally {
    release(failed);
  }
}

/** What a JPEG input becomes: decoded at scaleNum/8, resampled to width × height (as stored), turned by `orientation`. */
export interface JpegPixels {
  scaleNum: number;
  width: number;
  height: number;
  orientation: number;
}

/**
 * WebP output of a JPEG: the JPEG engine's rows fill the WebP encoder's picture as they are decoded
 * (no frame, unless the orientation needs one), then the input and the JPEG job are freed, so that the
 * encoder reuses their memory, and `fn` encodes the picture (as often as a size target needs).
 */
export function withJpegAsWebp<R>(
  input: Uint8Array,
  pixels: JpegPixels,
  lossless: boolean,
  fn: (job: WebpJob, markers: JpegMarker[]) => R,
): R {
  return withPictureJob((job, instance) => {
    let markers: JpegMarker[] = [];
    jpegJobIn(instance, input, (jpeg) => {
      jpeg.setPixels(pixels.scaleNum, pixels.width, pixels.height, pixels.orientation);
      job.fillFromJpeg(jpeg, lossless);
      markers = jpeg.info.markers;
    });
    return fn(job, markers);
  });
}

/**
 * withJpegAsWebp giving way to the isolate's other requests: the instance is held for this alone until
 * `fn` settles (instances.ts, borrow's `exclusive`), the rows go into the picture in steps, and `fn`
 * encodes with `encodeGivingWay`.
 */
export async function withJpegAsWebpGivingWay<R>(
  input: Uint8Array,
  pixels: JpegPixels,
  lossless: boolean,
  fn: (job: WebpJob, markers: JpegMarker[]) => Promise<R>,
): Promise<R> {
  const { instance, release } = slot.borrow(true);
  const codec = instance as unknown as EmscriptenInstance<EngineModule>;
  let failed = true;
  const jobPtr = codec.module._sr_webp_create!(0, 0);
  try {
    if (!jobPtr) throw new WebpEngineError('out of memory for the job');
    const job = new WebpJob(codec, jobPtr);
    let markers: JpegMarker[] = [];
    await jpegJobInGivingWay(instance, input, async (jpeg) => {
      jpeg.setPixels(pixels.scaleNum, pixels.width, pixels.height, pixels.orientation);
      await job.fillFromJpegGivingWay(jpeg, lossless);
      markers = jpeg.info.markers;
    });
    const result = await fn(job, markers);
    failed = false;
    return result;
  } finally {
    codec.module._sr_webp_destroy!(jobPtr);
    release(failed);
  }
}

/**
 * Runs `fn` on a WebP job without input (its picture is filled by the caller), in the shared engine
 * instance, which `fn` may also use; the job is freed when `fn` returns or throws.
 */
function withPictureJob<R>(fn: (job: WebpJob, instance: Parameters<typeof jpegJobIn>[0]) => R): R {
  return slot.run((instance) => {
    const codec = instance as unknown as EmscriptenInstance<EngineModule>;
    const jobPtr = codec.module._sr_webp_create!(0, 0);
    try {
      if (!jobPtr) throw new WebpEngineError('out of memory for the job');
      return fn(new WebpJob(codec, jobPtr), instance);
    } finally {
      codec.module._sr_webp_destroy!(jobPtr);
    }
  });
}

export interface RowEncoding {
  /** 3 (RGB) or 4 (RGBA): what each row holds. */
  channels: 3 | 4;
  /** Lossy quality, or the lossless effort. */
  quality: number;
  lossless: boolean;
  method?: number;
}

/**
 * The row-fed WebP encoder for other decoders (a PNG decoded in rows, `format=webp&lossless=true`):
 * `produce` pushes the image's rows in order, any number at a time, synchronously; the lossy picture
 * holds YUV 4:2:0 (1.5 bytes per pixel, + 1 with alpha), the lossless one ARGB (4).
 */
export function encodeRowsWebp(
  width: number,
  height: number,
  options: RowEncoding,
  produce: (push: (rows: Uint8Array) => void) => void,
): EncodedWebp {
  return withPictureJob((job) => {
    job.beginRows(width, height, options.channels, options.lossless);
    const rowBytes = width * options.channels;
    produce((rows) => {
      if (rows.length % rowBytes !== 0) throw new RangeError(`rows must be whole: a multiple of ${rowBytes} bytes`);
      job.pushRows(rows, rowBytes);
    });
    return job.encode(options.quality, options.lossless, options.method ?? WEBP_METHOD);
  });
}

/**
 * The row-fed WebP encoder for a decoder that awaits between rows (a PNG decoded in rows): like
 * encodeRowsWebp, but the instance is borrowed until `close`, which must be called; each method is
 * synchronous and touches only this job's memory. `encode` may run again (a size target's search).
 */
export class WebpRowEncoder extends BorrowedInstance<EngineModule> {
  private readonly job: WebpJob;
  private readonly rowBytes: number;

  constructor(width: number, height: number, channels: 3 | 4, lossless: boolean) {
    // Alone on its instance: a lossy encode suspended at libwebp's progress hook keeps its stack there.
    super(slot, true);
    this.rowBytes = width * channels;
    const jobPtr = this.newJob(jobFunctions(this.codec));
    this.job = this.closeOnThrow(() => {
      if (!jobPtr) throw new WebpEngineError('out of memory for the job');
      const job = new WebpJob(this.codec, jobPtr);
      job.beginRows(width, height, channels, lossless);
      return job;
    });
  }

  /** Whole rows (a multiple of width × channels bytes). */
  write(rows: Uint8Array): void {
    this.job.pushRows(rows, this.rowBytes);
  }

  /** Encodes the picture once every row is in; arguments as WebpJob.encode. */
  encode(...args: Parameters<WebpJob['encode']>): EncodedWebp {
    return this.job.encode(...args);
  }

  /** `encode` suspended at libwebp's progress reports, giving way to other requests (WebpJob.encodeGivingWay). */
  encodeGivingWay(...args: Parameters<WebpJob['encodeGivingWay']>): Promise<EncodedWebp & { lowMemory: boolean }> {
    return this.job.encodeGivingWay(...args);
  }
}

/**
 * A WebP's pixels pulled in batches of upright rows (RGB, or RGBA when it has alpha) by a consumer
 * that awaits between them (the PNG writer): decoded and resampled to width × height (as stored) as
 * for the encoders; an orientation other than 1 fills a frame once and reads it turned.
 */
export class WebpRowReader extends BatchRowReader<EngineModule> {
  private readonly job: WebpJob;
  readonly width: number;
  readonly height: number;
  readonly channels: 3 | 4;

  private readonly stored: { width: number; height: number };
  private readonly orientation: number;

  constructor(input: Uint8Array, stored: { width: number; height: number }, orientation: number) {
    super(slot);
    this.stored = stored;
    this.orientation = orientation;
    const jobPtr = this.newJob(jobFunctions(this.codec), input);
    [this.width, this.height] = orientation >= 5 ? [stored.height, stored.width] : [stored.width, stored.height];
    [this.job, this.channels] = this.closeOnThrow(() => {
      if (!jobPtr) throw new WebpEngineError('out of memory for the input');
      const job = new WebpJob(this.codec, jobPtr);
      return [job, job.info.hasAlpha ? 4 : 3] as const;
    });
    this.takeBatchBuffer(() => new WebpEngineError('out of memory for the rows'));
  }

  protected pullBegin(): void {
    this.job.pullBegin(this.stored.width, this.stored.height, this.orientation);
  }

  protected pull(ptr: number, max: number): number {
    return this.job.pull(ptr, max);
  }

  protected override pullWork(): number {
    return this.job.stepWork;
  }
}
