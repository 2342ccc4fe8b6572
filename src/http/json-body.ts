// Reads a JSON request body without trusting it: refused unread when Content-Length is over the limit,
// cut off the moment the streamed body passes it.
import { ApiError } from './errors.ts';

export async function readJsonBody(request: Request, maxBytes: number, example: string): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new ApiError('bad_request', `the request body must be JSON with Content-Type: application/json, such as ${example}`);
  }
  const tooLarge = () =>
    new ApiError('payload_too_large', `the request body is over the limit of ${maxBytes} bytes`, { details: { max_bytes: maxBytes } });
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge();
  if (!request.body) throw new ApiError('bad_request', `the request has no body; send JSON such as ${example}`);

  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const text = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false }).decode(await new Blob(chunks).arrayBuffer());
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('bad_request', `the request body is not valid JSON; send JSON such as ${example}`);
  }
}
