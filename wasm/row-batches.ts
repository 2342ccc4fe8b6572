// Rows copied out of an engine in batches, for a consumer that awaits between rows (the PNG writer):
// each pull is one synchronous call into the engine, which writes up to READ_BATCH rows into the
// reader's buffer; they are copied out before the next call, since other requests may run on the
// instance meanwhile.
import { BorrowedInstance, type EngineHeap } from './borrowed.ts';
import { giveWay } from './give-way.ts';

/** Rows a row reader (JPEG or WebP) copies out of the engine per call. */
export const READ_BATCH = 32;

/** `pull`'s answer for a call that did a step of work but has no rows yet (a turned WebP's frame being decoded). */
export const PULL_AGAIN = -1;

/**
 * A decoder's pixels pulled in batches of upright rows (width × channels bytes each). The instance is
 * borrowed until `close`, which must be called; `rows` may run again (a second pass decodes again).
 */
export abstract class BatchRowReader<M extends EngineHeap> extends BorrowedInstance<M> {
  abstract readonly width: number;
  abstract readonly height: number;
  abstract readonly channels: number;
  private buffer = 0;

  /** Takes the batch buffer once width and channels are known; throws `outOfMemory` (closed) when it does not fit. */
  protected takeBatchBuffer(outOfMemory: () => Error): void {
    this.buffer = this.alloc(this.width * this.channels * READ_BATCH);
    if (this.buffer) return;
    this.close(true);
    throw outOfMemory();
  }

  /** Starts (or restarts) the decode at the first upright row. */
  protected abstract pullBegin(): void;
  /** Up to `max` rows written at `ptr`: their count, 0 at the end, or PULL_AGAIN; throws the engine's error. */
  protected abstract pull(ptr: number, max: number): number;

  /** The work (pixels) of a pull that answered PULL_AGAIN, for giveWay. */
  protected pullWork(): number {
    return 0;
  }

  /** Every upright row, in order (the view is reused by the next batch). */
  async rows(sink: (row: Uint8Array) => void | Promise<void>): Promise<void> {
    this.pullBegin();
    const rowBytes = this.width * this.channels;
    const batch = new Uint8Array(rowBytes * READ_BATCH);
    for (;;) {
      const n = this.pull(this.buffer, READ_BATCH);
      if (n === 0) return;
      if (n === PULL_AGAIN) {
        await giveWay(this.pullWork());
        continue;
      }
      batch.set(this.codec.heap().subarray(this.buffer, this.buffer + n * rowBytes));
      for (let r = 0; r < n; r++) await sink(batch.subarray(r * rowBytes, (r + 1) * rowBytes));
      await giveWay(n * this.width);
    }
  }
}
