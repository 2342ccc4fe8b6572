// Animated WebP output (wasm/src/sr_webp_anim.c: libwebp's WebPAnimEncoder in the JPEG/WebP engine's
// module). Frames are given one at a time, whole, as RGBA at the canvas size; the encoder encodes each as
// it arrives and keeps only its canvases and the encoded frames, so a long animation never holds more
// than one source frame in the instance. Each call is synchronous: the caller gives way between frames.
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
