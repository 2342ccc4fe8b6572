// A request body that is never read past a limit: refused unread when Content-Length is over it, held
// to it when it is within (a false length makes the body fail to read), and cut off the moment the
// streamed bytes pass the limit when the client sends no length.
import type { ApiError } from '../errors.ts';

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
  const length = declared === null ? NaN : Number(declared);
  if (Number.isSafeInteger(length) && length >= 0) {
    // A declared length within the limit: the runtime's own identity stream, which errors on any byte
    // past it, bounds the body with no JavaScript per chunk (the counting transform below made reading
    // a 1.6 MB upload take 11–29 ms instead of 3–7).
    return { stream: request.body.pipeThrough(new FixedLengthStream(length)), exceeded: () => false };
  }
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
