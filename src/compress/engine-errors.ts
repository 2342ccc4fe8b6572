// The engine's refusals as the API's errors, for every path that runs it: the file's faults are 422
// unprocessable_image, running short of memory (the pool's limit, wasm/instances.ts) is 503 overloaded;
// never a 500.
import { JpegEngineError } from '../../wasm/jpeg-engine.ts';
import { WebpEngineError } from '../../wasm/webp-engine.ts';
import { ApiError } from '../errors.ts';

function refusal(err: unknown, input: 'JPEG' | 'WebP'): unknown {
  if (!(err instanceof JpegEngineError) && !(err instanceof WebpEngineError)) return err;
  if (/memory/i.test(err.message)) {
    return new ApiError('overloaded', 'the service ran short of memory for this image; retry in a moment', {
      headers: { 'Retry-After': '2' },
    });
  }
  return new ApiError('unprocessable_image', `the ${input} could not be decoded: ${err.message.replace(/\.$/, '')}`, {
    param: 'image',
  });
}

/** Runs `fn`; the engine's errors become the API's. */
export function inEngine<R>(input: 'JPEG' | 'WebP', fn: () => R): R {
  try {
    return fn();
  } catch (err) {
    throw refusal(err, input);
  }
}

/** inEngine for work with awaits (rows pulled by the PNG writer). */
export async function inEngineAsync<R>(input: 'JPEG' | 'WebP', fn: () => Promise<R>): Promise<R> {
  try {
    return await fn();
  } catch (err) {
    throw refusal(err, input);
  }
}
