// The body of a fetched page as raw chunks, read by the shared bounded reader (src/fetch/bounded-read.ts:
// cut at the byte limit, each read raced against the fetch deadline), and kept (when asked) so that a
// page whose encoding changes can be read again from the start. A page past the limit is not an error:
// extraction uses its first MAX_BODY_BYTES, so the reader truncates there instead of failing.
import type { ApiError } from '../errors.ts';
import { concatBytes } from '../bytes.ts';
import { BoundedStream } from '../fetch/bounded-read.ts';

export interface BodySourceOptions {
  maxBytes: number;
  signal: AbortSignal;
  /** Turns the deadline passing or the connection failing mid-body into the error to answer with. */
  failure: (err: unknown) => ApiError;
}

export class BodySource {
  private readonly stream: BoundedStream;
  private error: ApiError | undefined;
  /** Every chunk read while keeping is on (from the start until a reading says otherwise). */
  private readonly kept: Uint8Array[] = [];
  private keeping = true;

  private readonly options: BodySourceOptions;

  constructor(body: ReadableStream<Uint8Array>, options: BodySourceOptions) {
    this.options = options;
    this.stream = new BoundedStream(body, { maxBytes: options.maxBytes, signal: options.signal, over: 'truncate' });
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
    let chunk: Uint8Array | null;
    try {
      chunk = await this.stream.next();
    } catch (err) {
      this.error = this.options.failure(err);
      throw this.error;
    }
    if (chunk !== null && this.keeping) this.kept.push(chunk);
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

  stop(): Promise<void> {
    return this.stream.cancel();
  }
}
