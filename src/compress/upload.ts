// Reads a multipart upload without trusting it: refused unread when Content-Length is over the limit,
// cut off the moment the streamed body passes it or its reading deadline, and parsed by the runtime's own
// multipart parser.
import { limitedBody } from '../fetch/body-limit.ts';
import { ApiError, givenTwice } from '../errors.ts';
import { MAX_IMAGE_BYTES, MULTIPART_OVERHEAD_BYTES } from './limits.ts';

export const MAX_BODY_BYTES = MAX_IMAGE_BYTES + MULTIPART_OVERHEAD_BYTES;

export const tooLarge = (): ApiError =>
  new ApiError(
    'payload_too_large',
    `the upload is over the limit: images up to ${MAX_IMAGE_BYTES / 1024 / 1024} MB (${MAX_IMAGE_BYTES} bytes)`,
    {
      param: 'image',
      details: { max_bytes: MAX_IMAGE_BYTES },
    },
  );

const HOW_TO = 'send multipart/form-data with the file in a part named "image", e.g. curl -F image=@photo.jpg';

export const requestTimeout = (deadlineMs: number): ApiError =>
  new ApiError(
    'request_timeout',
    `the upload did not arrive within ${deadlineMs / 1000} s of its start: send the whole body within that time`,
    { details: { timeout_ms: deadlineMs } },
  );

/**
 * `deadlineMs`: how long the body may take to arrive (UPLOAD_READ_TIMEOUT_MS), after which the read is
 * cut off with 408 `request_timeout`: a request trickled for minutes must neither outlive the unit of
 * the month it reserved nor hold a connection and its buffers. `limit`: the body's most bytes and the
 * error past them; an image upload's by default.
 */
export async function readMultipart(
  request: Request,
  deadlineMs: number,
  limit: { bytes: number; error: () => ApiError } = { bytes: MAX_BODY_BYTES, error: tooLarge },
): Promise<FormData> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;.*boundary=/i.test(type)) {
    throw new ApiError('bad_request', `the request body must be multipart/form-data: ${HOW_TO}`);
  }
  const body = limitedBody(request, limit.bytes, limit.error);
  if (!body) throw new ApiError('bad_request', `the request has no body: ${HOW_TO}`, { param: 'image' });
  const parsed = new Response(body.stream, { headers: { 'content-type': type } }).formData();
  // Settled, it is answered below; its failure once the deadline has answered is of no interest.
  parsed.catch(() => undefined);
  // The deadline answers while the parser still waits: workerd then closes the connection (the
  // answer says Connection: close), so the rest of the body is never read.
  let timer: ReturnType<typeof setTimeout> | null = null;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(requestTimeout(deadlineMs)), deadlineMs);
  });
  try {
    return await Promise.race([parsed, late]);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'request_timeout') throw err;
    if (body.exceeded()) throw limit.error();
    throw new ApiError('bad_request', `the multipart body could not be parsed: ${HOW_TO}`);
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

/** The parts as an object for the schema: a repeated part is an error, not a silent pick. */
export function partsOf(form: FormData): Record<string, File | string> {
  const parts: Record<string, File | string> = {};
  for (const [name, value] of form) {
    if (Object.hasOwn(parts, name)) throw givenTwice(name);
    parts[name] = value;
  }
  return parts;
}

export async function imageBytes(file: File): Promise<Uint8Array> {
  if (file.size > MAX_IMAGE_BYTES) throw tooLarge();
  return new Uint8Array(await file.arrayBuffer());
}
