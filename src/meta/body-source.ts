// The body of a fetched page as raw chunks: capped at a byte limit, each read raced against the fetch
// deadline, and kept (when asked) so that a page whose encoding changes can be read again from the start.
import type { ApiError } from '../http/errors.ts';
import { concatBytes } from '../bytes.ts';

export interface BodySourceOptions {
  maxBytes: number;
  signal: AbortSignal;
  /** Turns the deadline passing or the connection failing mid-body into the error to answer with. */
  failure: (err: unknown) => ApiError;
}

export class BodySource {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly aborted: Promise<never>;
  private total = 0;
  private finished = false;
  private error: ApiError | undefined;
  /** Every chunk read while keeping is on (from the start until a reading says otherwise). */
  private readonly kept: Uint8Array[] = [];
  private keeping = true;

  private readonly options: BodySourceOptions;

  constructor(body: ReadableStream<Uint8Array>, options: BodySourceOptions) {
    this.options = options;
    this.reader = body.getReader();
    // Each read races the deadline: an origin may send its headers and then nothing.
    this.aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(new Error('deadline'));
      if (options.signal.aborted) fail();
      else options.signal.addEventListener('abort', fail, { once: true });
    });
    this.aborted.catch(() => {});
  }

  /** Why reading failed, if it did: the rewriter may hand the stream's error on in other words. */
  failed(): ApiError | undefined {
    return this.error;
  }

  /** Everything kept so far, in one buffer. */
  keptBytes(): Uint8Array {
    return concatBytes(this.kept);
  }

  /**
   * A reader of the page from the start, going on with the network after what was kept. With
   * `keepReading`, what it reads is kept too, for one more reading.
   */
  replay(keepReading: boolean): () => Promise<Uint8Array | null> {
    this.keeping = keepReading;
    let i = 0;
    return async () => {
      if (i < this.kept.length) return this.kept[i++]!;
      const chunk = await this.next();
      if (chunk !== null && this.keeping) i++;
      return chunk;
    };
  }

  async next(): Promise<Uint8Array | null> {
    if (this.finished) return null;
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await Promise.race([this.reader.read(), this.aborted]);
    } catch (err) {
      this.error = this.options.failure(err);
      await this.stop();
      throw this.error;
    }
    if (read.done) {
      this.finished = true;
      return null;
    }
    const room = this.options.maxBytes - this.total;
    const chunk = read.value.byteLength > room ? read.value.subarray(0, room) : read.value;
    this.total += chunk.byteLength;
    if (this.total >= this.options.maxBytes) await this.stop();
    if (this.keeping) this.kept.push(chunk);
    return chunk;
  }

  /** Reads until at least `bytes` have come (or the body ends), returning the chunks. */
  async readAtLeast(bytes: number): Promise<Uint8Array[]> {
    const chunks: Uint8Array[] = [];
    let length = 0;
    while (length < bytes) {
      const chunk = await this.next();
      if (chunk === null) break;
      chunks.push(chunk);
      length += chunk.byteLength;
    }
    return chunks;
  }

  async stop(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.reader.cancel().catch(() => {});
  }
}
