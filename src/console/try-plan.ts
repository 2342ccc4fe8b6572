// What the "Try it" page says before an upload: the service's own verdict on this file and these
// settings, from the same checks and memory plan an upload meets (compress/pipeline.ts over
// memory-plan.ts), so the page and the API never disagree. Only the file's first bytes come (enough for
// its header) with its full size: the upload itself is still checked whole.
import { tooLarge } from '../compress/upload.ts';
import { MAX_IMAGE_BYTES } from '../compress/limits.ts';
import type { CompressRequest } from '../compress/types.ts';
import { inspect, planWithin } from '../compress/pipeline.ts';
import type { CompressConfig } from '../compress/config.ts';
import type { Size } from '../compress/geometry.ts';
import { ApiError } from '../errors.ts';

export type TryVerdict =
  | { verdict: 'accepted'; output: Size; estimateBytes: number }
  /** The error the upload would get, word for word. */
  | { verdict: 'refused'; error: ApiError }
  /** The first bytes do not settle it (a header past them, or a file that looks cut short): the upload will tell. */
  | { verdict: 'unknown'; reason: string };

/**
 * The verdict on a file of `size` bytes starting with `head`, compressed as `request` asks. `request`
 * has passed the part rules (compress/parts.ts checkParts) already.
 */
export function tryVerdict(
  head: Uint8Array,
  size: number,
  request: CompressRequest,
  config: CompressConfig,
): TryVerdict {
  if (size > MAX_IMAGE_BYTES) return { verdict: 'refused', error: tooLarge() };
  const whole = head.length >= size;
  try {
    const { format, header } = inspect(head, config.maxInputPixels, whole, config.heicInput);
    const plan = planWithin(format, header, size, request, config.memoryBudget);
    return { verdict: 'accepted', output: plan.output, estimateBytes: plan.estimate };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    // A header that runs past the bytes sent reads as a malformed file; only the whole file can say.
    if (!whole && err.code === 'unprocessable_image')
      return { verdict: 'unknown', reason: 'the header was not within the first bytes sent' };
    return { verdict: 'refused', error: err };
  }
}
