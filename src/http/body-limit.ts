// A request body that is never read past a limit: refused unread when Content-Length is over it, cut
// off the moment the streamed bytes pass it (a client may send no length, or a false one).
import type { ApiError } from './errors.ts';

export interface LimitedBody {
  stream: ReadableStream<Uint8Array>;
  /** True once the stream was cut off for passing the limit: a parser's failure then means "too large". */
  exceeded: () => boolean;
}

/** Null when the request has no body; throws `tooLarge()` when its declared length is over the limit. */
export function limitedBody(request: Request, maxBytes: number, tooLarge: () => ApiError): LimitedBody | null {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge();
  if (!request.body) return null;
  let received = 0;
  let exceeded = false;
  const stream = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        if (received > maxBytes) {
          exceeded = true;
          controller.error(tooLarge());
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return { stream, exceeded: () => exceeded };
}
