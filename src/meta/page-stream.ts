// The body of a page as UTF-8 for HTMLRewriter: capped at MAX_BODY_BYTES, decoded from the page's own
// encoding, ended early once the caller has what it needs, and bound to the fetch deadline.
import { ApiError } from '../http/errors.ts';
import { CHARSET_PRESCAN_BYTES, detectCharset } from './charset.ts';

export interface PageStreamOptions {
  contentType: string | null;
  maxBytes: number;
  signal: AbortSignal;
  /** Polled before each read: true once reading further cannot change the result. */
  enough: () => boolean;
  /** Turns the deadline passing or the connection failing mid-body into the error to answer with. */
  failure: (err: unknown) => ApiError;
}

export interface PageStream {
  encoding: string;
  stream: ReadableStream<Uint8Array>;
  /** Why reading failed, if it did: the rewriter may hand the stream's error on in other words. */
  failed: () => ApiError | undefined;
}

export async function utf8Page(body: ReadableStream<Uint8Array>, options: PageStreamOptions): Promise<PageStream> {
  const reader = body.getReader();
  let total = 0;
  let finished = false;
  let failed: ApiError | undefined;

  // Each read races the deadline: an origin may send its headers and then nothing.
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(new Error('deadline'));
    if (options.signal.aborted) fail();
    else options.signal.addEventListener('abort', fail, { once: true });
  });
  aborted.catch(() => {});
  const next = async (): Promise<Uint8Array | null> => {
    if (finished) return null;
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await Promise.race([reader.read(), aborted]);
    } catch (err) {
      failed = options.failure(err);
      await stop();
      throw failed;
    }
    const { done, value } = read;
    if (done) {
      finished = true;
      return null;
    }
    const room = options.maxBytes - total;
    const chunk = value.byteLength > room ? value.subarray(0, room) : value;
    total += chunk.byteLength;
    if (total >= options.maxBytes) await stop();
    return chunk;
  };
  const stop = async (): Promise<void> => {
    if (finished) return;
    finished = true;
    await reader.cancel().catch(() => {});
  };

  // The first bytes decide the encoding, so they are read before the stream starts.
  const prefix: Uint8Array[] = [];
  let prefixBytes = 0;
  while (prefixBytes < CHARSET_PRESCAN_BYTES) {
    const chunk = await next();
    if (chunk === null) break;
    prefix.push(chunk);
    prefixBytes += chunk.byteLength;
  }
  const head = concat(prefix, prefixBytes);
  const charset = detectCharset(head, options.contentType);
  const decoder = new TextDecoder(charset.encoding, { fatal: false, ignoreBOM: true });
  const encoder = new TextEncoder();
  let pending: Uint8Array | null = head.subarray(charset.bomLength);

  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const bytes = pending ?? (options.enough() ? (await stop(), null) : await next());
          pending = null;
          const text = bytes === null ? decoder.decode() : decoder.decode(bytes, { stream: true });
          if (text.length > 0) controller.enqueue(encoder.encode(text));
          if (bytes === null) return controller.close();
          if (text.length > 0) return;
        }
      } catch (err) {
        await stop();
        controller.error(err);
      }
    },
    async cancel() {
      await stop();
    },
  });
  return { encoding: charset.encoding, stream, failed: () => failed };
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
