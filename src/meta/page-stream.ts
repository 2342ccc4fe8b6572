// A page's bytes as a UTF-8 stream for HTMLRewriter: decoded from the page's own encoding, ended early
// once the caller has what it needs.

export interface Utf8StreamOptions {
  encoding: string;
  /** Bytes of a byte order mark at the start, to skip. */
  bomLength: number;
  /** Polled before each read: true once reading further cannot change the result. */
  enough: () => boolean;
  /** Called when reading ends early, so the network read can be cancelled. */
  stop: () => Promise<void>;
}

export function utf8Stream(
  next: () => Promise<Uint8Array | null>,
  options: Utf8StreamOptions,
): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder(options.encoding, { fatal: false, ignoreBOM: true });
  const encoder = new TextEncoder();
  let skip = options.bomLength;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          let bytes = options.enough() ? (await options.stop(), null) : await next();
          if (bytes !== null && skip > 0) {
            const cut = Math.min(skip, bytes.byteLength);
            skip -= cut;
            bytes = bytes.subarray(cut);
          }
          const text = bytes === null ? decoder.decode() : decoder.decode(bytes, { stream: true });
          if (text.length > 0) controller.enqueue(encoder.encode(text));
          if (bytes === null) return controller.close();
          if (text.length > 0) return;
        }
      } catch (err) {
        await options.stop();
        controller.error(err);
      }
    },
    async cancel() {
      await options.stop();
    },
  });
}

/** Drives a rewritten page to its end: nothing of it is wanted, reading it is what runs the handlers. */
export async function drain(rewritten: Response, failed: () => Error | undefined): Promise<void> {
  const reader = rewritten.body!.getReader();
  try {
    while (!(await reader.read()).done) {
      // drain
    }
  } catch (err) {
    throw failed() ?? err;
  }
}
