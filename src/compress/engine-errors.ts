// The engine's refusals as the API's errors, for every path that runs it: the file's faults are 422
// unprocessable_image, running short of memory (the pool's limit, wasm/instances.ts) is 503 overloaded;
// never a 500. The AVIF encoder only ever sees rows the decoders made, so every refusal of its is of
// resources (libaom reports a failed allocation as an unknown error): 503. So does the JPEG XL encoder's
// (its lossless JPEG transcode's refusals are the caller's: jxl/jxl-path.ts answers them with 422).
import { AvifEngineError } from '../../wasm/avif-error.ts';
import { JxlEngineError } from '../../wasm/jxl-error.ts';
import { JpegEngineError } from '../../wasm/jpeg-engine.ts';
import { WebpEngineError } from '../../wasm/webp-engine.ts';
import { ApiError } from '../errors.ts';

export type EngineInput = 'JPEG' | 'WebP' | 'PNG' | 'GIF' | 'AVIF' | 'HEIC';

/** Running short of memory (the pool's limit): 503 overloaded, to retry, never the caller's fault. */
const ranShortOfMemory = (): ApiError =>
  new ApiError('overloaded', 'the service ran short of memory for this image; retry in a moment', {
    headers: { 'Retry-After': '2' },
  });

function refusal(err: unknown, input: EngineInput): unknown {
  const encoder = err instanceof AvifEngineError || err instanceof JxlEngineError;
  if (!(err instanceof JpegEngineError) && !(err instanceof WebpEngineError) && !encoder) return err;
  if (encoder || /memory/i.test(err.message)) return ranShortOfMemory();
  return new ApiError('unprocessable_image', `the ${input} could not be decoded: ${err.message.replace(/\.$/, '')}`, {
    param: 'image',
  });
}

/** Runs `fn`; the engine's errors become the API's. */
export function inEngine<R>(input: EngineInput, fn: () => R): R {
  try {
    return fn();
  } catch (err) {
    throw refusal(err, input);
  }
}

/** inEngine for work with awaits (rows pulled by the PNG writer). */
export async function inEngineAsync<R>(input: EngineInput, fn: () => Promise<R>): Promise<R> {
  try {
    return await fn();
  } catch (err) {
    throw refusal(err, input);
  }
}

/**
 * Runs `work`, whose errors (thrown now or, for a promise, on its rejection) `translate` turns into what is
 * thrown instead: the decoders written in TypeScript (GIF, the AVIF box reader) use it with their own errors.
 */
export function translatingErrors<T>(work: () => T, translate: (err: unknown) => unknown): T {
  const refuse = (err: unknown): never => {
    throw translate(err);
  };
  try {
    const result = work();
    return (result instanceof Promise ? result.catch(refuse) : result) as T;
  } catch (err) {
    return refuse(err);
  }
}

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Runs `work` of a HEIF-family decoder module (AVIF, HEIC), its refusals as the API's (thrown now or, for a
 * promise, later): what it cannot represent is 415, running short of memory 503, any other fault 422.
 */
export function heifDecoding<T>(
  format: 'AVIF' | 'HEIC',
  errors: { unsupported: ErrorClass; decode: ErrorClass },
  work: () => T,
): T {
  return translatingErrors(work, (err) => {
    if (err instanceof errors.unsupported)
      return new ApiError('unsupported_media_type', `this ${format} is not supported: ${err.message}`, {
        param: 'image',
      });
    if (!(err instanceof errors.decode)) return err;
    if (/out of memory/i.test(err.message)) return ranShortOfMemory();
    return heifUnprocessable(format, err.message);
  });
}

/** 422 for a HEIF-family file the decoder cannot read, or whose picture contradicts its boxes. */
export const heifUnprocessable = (format: 'AVIF' | 'HEIC', message: string): ApiError =>
  new ApiError('unprocessable_image', `the ${format} cannot be decoded: ${message}`, { param: 'image' });
