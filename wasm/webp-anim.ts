// Animated WebP output (wasm/src/sr_webp_anim.c: libwebp's WebPAnimEncoder in the JPEG/WebP engine's
// module). Frames are given one at a time, whole, as RGBA at the canvas size; the encoder encodes each as
// it arrives and keeps only its canvases and the encoded frames, so a long animation never holds more
// than one source frame in the instance. Each call is synchronous: the caller gives way between frames.
// Animated WebP input (wasm/src/sr_webp_animdec.c: libwebp's WebPAnimDecoder) hands out the frames
// composed on the canvas, one per call, in the same module.
import { BorrowedInstance } from './borrowed.ts';
import { slot } from './jpeg-engine.ts';
import { WebpEngineError } from './webp-engine.ts';

type Fn = (...args: number[]) => number;
interface AnimModule {
  _malloc: Fn;
  _free: Fn;
  _sr_webp_anim_begin: Fn;
  _sr_webp_anim_frame: Fn;
  _sr_webp_anim_add: Fn;
  _sr_webp_anim_finish: Fn;
  _sr_webp_anim_output: Fn;
  _sr_webp_anim_output_len: Fn;
  _sr_webp_anim_message: Fn;
  _sr_webp_anim_destroy: Fn;
  _sr_webp_animdec_create: Fn;
  _sr_webp_animdec_info: Fn;
  _sr_webp_animdec_next: Fn;
  _sr_webp_animdec_destroy: Fn;
}

/**
 * The encoder refused a frame or ran out of memory; the message is libwebp's or ours. A WebP engine
 * error, so the API answers it as the other engines' (src/compress/engine-errors.ts: memory → 503).
 */
export class WebpAnimError extends WebpEngineError {}

export interface WebpAnimOptions {
  /** Times the animation plays (WebP's loop count): 0 for ever. */
  loop: number;
  /** libwebp's quality (lossy), or the effort (lossless). */
  quality: number;
  lossless: boolean;
  method: number;
}

export class WebpAnimEncoder extends BorrowedInstance<AnimModule> {
  private readonly enc: number;
  private readonly bytes: number;

  constructor(width: number, height: number, options: WebpAnimOptions) {
    super(slot);
    const m = this.codec.module;
    this.bytes = width * height * 4;
    const { loop, quality, lossless, method } = options;
    this.enc = this.own(m._sr_webp_anim_begin(width, height, loop, quality, Number(lossless), method) >>> 0, (ptr) =>
      m._sr_webp_anim_destroy(ptr),
    );
    if (!this.enc) {
      this.close(true);
      throw new WebpAnimError('out of memory for the animated WebP encoder');
    }
  }

  /** The next frame's pixels (RGBA, width × height), to fill before `add`: a view of the instance's memory, valid until the next call. */
  frame(): Uint8Array {
    const ptr = this.codec.module._sr_webp_anim_frame(this.enc) >>> 0;
    return this.codec.heap().subarray(ptr, ptr + this.bytes);
  }

  /** Encodes the frame filled through `frame`, shown from `timestampMs` (the sum of the earlier frames' durations). */
  add(timestampMs: number): void {
    this.closeOnThrow(() => this.check(this.codec.module._sr_webp_anim_add(this.enc, timestampMs)));
  }

  /** Ends the last frame at `endMs` and answers the file (a copy: the instance's memory is freed by close). */
  finish(endMs: number): Uint8Array {
    return this.closeOnThrow(() => {
      const m = this.codec.module;
      this.check(m._sr_webp_anim_finish(this.enc, endMs));
      const ptr = m._sr_webp_anim_output(this.enc) >>> 0;
      return this.codec.heap().slice(ptr, ptr + (m._sr_webp_anim_output_len(this.enc) >>> 0));
    });
  }

  private check(status: number): void {
    if (status === 0) return;
    const ptr = this.codec.module._sr_webp_anim_message(this.enc) >>> 0;
    const heap = this.codec.heap();
    let end = ptr;
    while (heap[end] !== 0) end++;
    throw new WebpAnimError(new TextDecoder().decode(heap.subarray(ptr, end)));
  }
}

/** What sr_webp_animdec_info answers (SR_ANIM_* of sr_webp_animdec.c). */
const ANIM_INFO = { width: 0, height: 1, frames: 2, loop: 3, duration: 4 } as const;

/**
 * An animated WebP's frames, each composed on its canvas as a player shows it (blend and disposal), as
 * RGBA. The file is copied into the instance, which the decoder reads until `close` (to call once).
 */
export class WebpAnimDecoder extends BorrowedInstance<AnimModule> {
  private readonly dec: number;
  readonly width: number;
  readonly height: number;
  /** Frames the file has. */
  readonly frames: number;
  /** Times the animation plays (WebP's loop count): 0 for ever. */
  readonly loop: number;

  constructor(bytes: Uint8Array) {
    super(slot);
    const m = this.codec.module;
    const input = this.copyIn(bytes);
    if (!input) {
      this.close(true);
      throw new WebpAnimError('out of memory for the animated WebP');
    }
    this.dec = this.own(m._sr_webp_animdec_create(input, bytes.length) >>> 0, (ptr) => m._sr_webp_animdec_destroy(ptr));
    if (!this.dec) {
      this.close(true);
      throw new WebpAnimError('its frames cannot be read');
    }
    const at = (key: keyof typeof ANIM_INFO) => m._sr_webp_animdec_info(this.dec, ANIM_INFO[key]);
    this.width = at('width');
    this.height = at('height');
    this.frames = at('frames');
    this.loop = at('loop');
  }

  /**
   * The next frame on the canvas (width × height RGBA: a view of the instance's memory, valid until the
   * next call) and its duration in ms; null after the last. A frame whose data is broken throws.
   */
  next(): { canvas: Uint8Array; durationMs: number } | null {
    return this.closeOnThrow(() => {
      const m = this.codec.module;
      const ptr = m._sr_webp_animdec_next(this.dec) >>> 0;
      if (!ptr) {
        if (this.given < this.frames) throw new WebpAnimError(`frame ${this.given + 1} cannot be decoded`);
        return null;
      }
      this.given++;
      const canvas = this.codec.heap().subarray(ptr, ptr + this.width * this.height * 4);
      return { canvas, durationMs: m._sr_webp_animdec_info(this.dec, ANIM_INFO.duration) };
    });
  }

  private given = 0;
}
