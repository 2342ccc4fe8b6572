// The one way an outbound body is read (docs/using-the-api.md, "Fetching external URLs"): chunk by chunk as the stream
// yields them, counting the bytes the stream gives (the runtime has already undone Content-Encoding, so a
// gzip bomb counts at its decompressed size), and cancelling the body the moment the count passes the
// limit, so what the origin sends after that is never taken in. Each read races the caller's deadline:
// an origin may send its headers and then nothing.
import { ApiError } from '../errors.ts';
import { concatBytes } from '../bytes.ts';

export interface BoundedOptions {
  maxBytes: number;
  signal: AbortSignal;
  /**
   * What passing the limit means: `fail` (the default) throws OverLimit; `truncate` hands out the bytes up
   * to the limit and ends there, for readers that only ever want a prefix (a page's head, a note).
   */
  over?: 'fail' | 'truncate';
}

/** The body went past its limit; thrown once the body has been cancelled. */
export class OverLimit extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`the body is larger than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

export class BoundedStream {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array> | null;
  private readonly aborted: Promise<never>;
  private total = 0;
  private finished: boolean;
  private readonly options: BoundedOptions;

  constructor(body: ReadableStream<Uint8Array> | null, options: BoundedOptions) {
    this.options = options;
    this.reader = body?.getReader() ?? null;
    this.finished = body === null;
    this.aborted = new Promise<never>((_, reject) => {
      const fail = () => reject(new Error('deadline'));
      if (options.signal.aborted) fail();
      else options.signal.addEventListener('abort', fail, { once: true });
    });
    this.aborted.catch(() => {});
  }

  /** Bytes handed out so far. */
  get bytes(): number {
    return this.total;
  }

  /** The next chunk, null at the end; the deadline passing or the connection failing throws (body cancelled). */
  async next(): Promise<Uint8Array | null> {
    if (this.finished || this.reader === null) return null;
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await Promise.race([this.reader.read(), this.aborted]);
    } catch (err) {
      await this.cancel();
      throw err;
    }
    if (read.done) {
      this.finished = true;
      return null;
    }
    const room = this.options.maxBytes - this.total;
    if (read.value.byteLength <= room) {
      this.total += read.value.byteLength;
      // Exactly at the limit in `truncate`: nothing more is wanted, so the body goes now, not one read later.
      if (this.total === this.options.maxBytes && this.options.over === 'truncate') await this.cancel();
      return read.value;
    }
    await this.cancel();
    if (this.options.over !== 'truncate') throw new OverLimit(this.options.maxBytes);
    this.total += room;
    return read.value.subarray(0, room);
  }

  async cancel(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.reader?.cancel().catch(() => {});
  }
}

/** Every byte of the body, at most `maxBytes` of them (OverLimit past that), within the signal's deadline. */
export async function readBounded(response: Response, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  return readAll(new BoundedStream(response.body, { maxBytes, signal }));
}

/** The first `maxBytes` bytes of the body (all of it when shorter); the rest is never read. */
export async function readPrefix(response: Response, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
  return readAll(new BoundedStream(response.body, { maxBytes, signal, over: 'truncate' }));
}

async function readAll(stream: BoundedStream): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for (let chunk = await stream.next(); chunk !== null; chunk = await stream.next()) chunks.push(chunk);
  return concatBytes(chunks, stream.bytes);
}

/** The 502 of a body past its limit: the origin sent more than any answer of its kind may be. */
export function tooLargeFailure(url: URL, maxBytes: number): ApiError {
  return new ApiError('fetch_failed', `${url.host} answered with more than ${maxBytes} bytes, the most read`, {
    details: { reason: 'too_large', max_bytes: maxBytes },
  });
}

/**
 * The response again, its body read whole under the limit: for code that reads a Response itself (the
 * OpenID client library). Content-Encoding and Content-Length go, since they described the wire, not these bytes.
 */
export async function boundedResponse(response: Response, maxBytes: number, signal: AbortSignal): Promise<Response> {
  const bytes = await readBounded(response, maxBytes, signal);
  const headers = new Headers(response.headers);
  headers.delete('content-encoding');
  headers.delete('content-length');
  const nullBody = response.status === 204 || response.status === 304;
  return new Response(nullBody ? null : bytes, { status: response.status, statusText: response.statusText, headers });
}
