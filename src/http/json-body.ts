// Reads a JSON request body within a byte limit (body-limit.ts) and parses it; parseJsonBody checks it
// with the route's documented schema too.
import type { z } from 'zod';
import { limitedBody } from '../fetch/body-limit.ts';
import { ApiError, badRequestFrom } from '../errors.ts';

/** The body read as readJsonBody reads it and checked with `schema`: its data, or 400 naming the first issue. */
export async function parseJsonBody<S extends z.ZodType>(
  request: Request,
  schema: S,
  maxBytes: number,
  example: string,
): Promise<z.output<S>> {
  const parsed = schema.safeParse(await readJsonBody(request, maxBytes, example));
  if (!parsed.success) throw badRequestFrom(parsed.error.issues);
  return parsed.data;
}

export async function readJsonBody(request: Request, maxBytes: number, example: string): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
    throw new ApiError(
      'bad_request',
      `the request body must be JSON with Content-Type: application/json, such as ${example}`,
    );
  }
  const tooLarge = () =>
    new ApiError('payload_too_large', `the request body is over the limit of ${maxBytes} bytes`, {
      details: { max_bytes: maxBytes },
    });
  const body = limitedBody(request, maxBytes, tooLarge);
  if (!body) throw new ApiError('bad_request', `the request has no body; send JSON such as ${example}`);
  let text: string;
  try {
    text = await new Response(body.stream).text();
  } catch {
    if (body.exceeded()) throw tooLarge();
    // Only the client can make a body unreadable: it ended early, or ran past its Content-Length.
    throw new ApiError(
      'bad_request',
      `the request body could not be read in full (it ended early or differs from its Content-Length); send JSON such as ${example}`,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('bad_request', `the request body is not valid JSON; send JSON such as ${example}`);
  }
}
