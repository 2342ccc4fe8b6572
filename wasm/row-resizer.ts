// The engine's Lanczos3 ring resampler (wasm/src/sr_resize.c, WebAssembly SIMD) for rows decoded
// outside it: the PNG engine's. Twice as fast as the same filter in TypeScript, and its ring lives in
// the engine's memory. The instance is borrowed for the resizer's life (rows arrive between awaits);
// each call is synchronous, and `close` must be called, as with JpegRowEncoder.
import { BorrowedInstance } from './borrowed.ts';
import { slot } from './jpeg-engine.ts';

type Fn = (...args: number[]) => number;
interface ResizerModule {
  _malloc: Fn;
  _free: Fn;
  _sr_resizer_new: Fn;
  _sr_resizer_push_row: Fn;
  _sr_resizer_pull_row: Fn;
  _sr_resizer_free: Fn;
}

export class EngineRowResizer extends BorrowedInstance<ResizerModule> {
  private readonly resizer: number;
  private readonly inRow: number;
  private readonly outRow: number;
  private readonly inBytes: number;
  private readonly outBytes: number;

  /** RGBA rows (4 channels) of inW pixels in, of outW out; `premultiply` weights colour by alpha. */
  constructor(inW: number, inH: number, outW: number, outH: number, premultiply: boolean) {
    super(slot);
    const m = this.codec.module;
    this.inBytes = inW * 4;
    this.outBytes = outW * 4;
    const resizer = m._sr_resizer_new(inW, inH, outW, outH, 4, Number(premultiply));
    this.resizer = this.own(resizer, (ptr) => m._sr_resizer_free(ptr));
    this.inRow = this.alloc(this.inBytes);
    this.outRow = this.alloc(this.outBytes);
    if (!this.resizer || !this.inRow || !this.outRow) {
      this.close(true);
      throw new RangeError('out of memory for the resampler');
    }
  }

  /** Takes the next input row (RGBA, 8 bits per sample). */
  push(row: Uint8Array): void {
    this.codec.heap().set(row.subarray(0, this.inBytes), this.inRow);
    this.codec.module._sr_resizer_push_row(this.resizer, this.inRow);
  }

  /** Writes the next output row into `out` (RGBA) if its input rows are all in; false otherwise. */
  pull(out: Uint8Array): boolean {
    if (!this.codec.module._sr_resizer_pull_row(this.resizer, this.outRow)) return false;
    out.set(this.codec.heap().subarray(this.outRow, this.outRow + this.outBytes));
    return true;
  }
}
