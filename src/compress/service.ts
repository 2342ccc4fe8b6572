// The compression use case, one sequence for every caller (POST /compress and the console's Try it,
// signed image URLs, the landing sample): with a unit of the month reserved by the caller, read the
// input, check and plan it from its header, admit it by memory, run the engine, and spend the unit
// before the image is answered, so no compression is ever served uncharged; give the unit back on any
// failure. Plain values in, the result out: no Hono, no Durable Object stubs (each caller adapts its
// meter to UnitMeter, as routes/compress-upload.ts and img/service.ts do).
import type { ImageTier } from '../accounts/tiers.ts';
import { ApiError } from '../errors.ts';
import type { CompressConfig } from './config.ts';
import { INFO_FORMAT, type InfoRequest, type InfoResult } from './info/types.ts';
import { reserveMemory } from './memory-gate.ts';
import { TRIM_BORDER } from './transform/options.ts';
import type { CompressedImage, CompressRequest } from './types.ts';

/** One unit of the month, reserved before the input is read. */
export interface UnitMeter {
  /** Spends the unit; throws the quota error when it cannot be (its reservation lapsed while the month filled). */
  commit(): Promise<void>;
  /** Gives the unit back; `imageRefused`: the image itself was refused once read (415, 422). */
  release(imageRefused: boolean): Promise<void>;
}

/**
 * What a caller reads before compressing: the pipeline's request (or, with format=json, the info's) and
 * anything it needs for its answer.
 */
export interface CompressionInput {
  request: CompressRequest | InfoRequest;
}

/**
 * Checks and plans the request (415, 422 from the header alone), admits it by memory (a free tier is
 * refused with 503 when the budget is taken, pro waits), and runs the engine.
 */
export async function compressAdmitted(
  request: CompressRequest,
  tier: ImageTier,
  config: CompressConfig,
): Promise<CompressedImage> {
  const { compress, findBorder, prepare } = await import('./pipeline.ts');
  let prepared = prepare(request, config.maxInputPixels, config.memoryBudget, config.heicInput);
  const admitted = async <T>(estimate: number, run: () => Promise<T>): Promise<T> => {
    const done = await reserveMemory(tier, estimate, config.memoryBudget);
    try {
      return await run();
    } finally {
      done();
    }
  };
  if (request.transform?.trim !== TRIM_BORDER) return admitted(prepared.plan.estimate, () => compress(prepared));
  // trim=border: a first pass, admitted as the untrimmed request, finds the border; the trimmed request
  // (its resize may be larger) is then planned and admitted as itself.
  const border = await admitted(prepared.plan.estimate, () => findBorder(prepared));
  prepared = prepare(
    { ...request, transform: { ...request.transform, trim: border.sides } },
    config.maxInputPixels,
    config.memoryBudget,
    config.heicInput,
  );
  const image = await admitted(prepared.plan.estimate, () => compress(prepared));
  return { ...image, timings: { ...image.timings, decode: image.timings.decode + border.ms } };
}

/**
 * The metered compression: `read` brings the input (an upload, a fetched source) once the unit is held;
 * the unit is spent only when the image is made (or described: format=json counts as one compression, as
 * Cloudflare counts it as a transformation), and given back on every failure, reading included.
 */
export async function compressMetered<T extends CompressionInput>(
  unit: UnitMeter,
  tier: ImageTier,
  config: CompressConfig,
  read: () => Promise<T>,
): Promise<{ input: T; result: CompressedImage | InfoResult }> {
  let input: T | undefined;
  let result: CompressedImage | InfoResult;
  try {
    input = await read();
    const request = input.request;
    result =
      request.format === INFO_FORMAT
        ? await (await import('./info/describe.ts')).describeAdmitted(request, tier, config)
        : await compressAdmitted(request, tier, config);
  } catch (err) {
    await unit.release(input !== undefined && refusesImage(err));
    throw err;
  }
  await unit.commit();
  return { input, result };
}

/** A refusal of the image itself (its type, structure or size), which a key's failure meter counts. */
const refusesImage = (err: unknown): boolean => err instanceof ApiError && (err.status === 415 || err.status === 422);
