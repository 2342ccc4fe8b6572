// `target_kb`: find the highest quality whose output fits, in as few encodes as possible. Output size
// grows with quality roughly exponentially, so each guess interpolates log(size) between the closest
// qualities known to fit and not to fit; the search ends when those two are adjacent. Interpolation
// alone can creep: on a curve flat over the low qualities and steep above (the JPEG encoder's, where
// the trellis gives way to the tables), every guess lands just above the last fitting one. So each
// guess is kept close enough to the middle that bisection could still finish in the encodes left:
// on any size that grows with quality, the answer is the highest quality that fits.
import { MAX_TARGET_ENCODES } from './limits.ts';

export interface Encoded {
  bytes: Uint8Array;
  quality: number;
}

export interface TargetResult extends Encoded {
  reached: boolean;
  encodes: number;
}

/** `ceiling` is the highest quality considered (the request's `quality`). */
export function searchQuality(
  encode: (quality: number) => Uint8Array,
  targetBytes: number,
  ceiling: number,
): TargetResult {
  const search = qualitySearch(targetBytes, ceiling);
  let step = search.next();
  while (!step.done) step = search.next(encode(step.value));
  return step.value;
}

/** searchQuality for an encoder that awaits (the AVIF encoder gives way between its cells). */
export async function searchQualityAsync(
  encode: (quality: number) => Promise<Uint8Array>,
  targetBytes: number,
  ceiling: number,
): Promise<TargetResult> {
  const search = qualitySearch(targetBytes, ceiling);
  let step = search.next();
  while (!step.done) step = search.next(await encode(step.value));
  return step.value;
}

/** The search itself: yields each quality to encode and is given its output. */
function* qualitySearch(targetBytes: number, ceiling: number): Generator<number, TargetResult, Uint8Array> {
  let encodes = 0;
  const sizes = new Map<number, number>();
  function* run(quality: number): Generator<number, Encoded, Uint8Array> {
    encodes++;
    const bytes = yield quality;
    sizes.set(quality, bytes.length);
    return { bytes, quality };
  }

  const top = yield* run(ceiling);
  if (top.bytes.length <= targetBytes) return { ...top, reached: true, encodes };
  let fit: Encoded | undefined; // the highest quality known to fit
  let over = top; // the lowest quality known not to fit

  while (over.quality - (fit?.quality ?? 0) > 1 && encodes < MAX_TARGET_ENCODES) {
    const low = fit?.quality ?? 0;
    // After this encode, the span left must be one that halving can close in the encodes after it.
    // With nothing fitting yet this makes the last encode quality 1, the answer either way.
    const reach = 2 ** (MAX_TARGET_ENCODES - encodes - 1);
    const lowest = Math.max(low + 1, over.quality - reach);
    const highest = Math.min(over.quality - 1, low + reach);
    const guess =
      lowest > highest
        ? Math.floor((low + over.quality) / 2)
        : Math.min(highest, Math.max(lowest, interpolate(sizes, low, over.quality, targetBytes)));
    const tried = yield* run(guess);
    if (tried.bytes.length <= targetBytes) fit = tried;
    else over = tried;
  }
  // Nothing fits: `over` is then the quality-1 result, the smallest this format makes.
  return fit ? { ...fit, reached: true, encodes } : { ...over, reached: false, encodes };
}

function interpolate(sizes: Map<number, number>, low: number, over: number, target: number): number {
  const overSize = sizes.get(over)!;
  const lowSize = sizes.get(low);
  if (lowSize === undefined) {
    // One point: assume size halves for every 25 quality points down, a fair mean for JPEG and WebP.
    return Math.floor(over - 25 * Math.log2(overSize / Math.max(1, target)));
  }
  const t = (Math.log(target) - Math.log(lowSize)) / (Math.log(overSize) - Math.log(lowSize));
  const guess = Math.floor(low + t * (over - low));
  // Equal sizes at both ends (a flat stretch of the curve) say nothing: bisect.
  return Number.isFinite(guess) ? guess : Math.floor((low + over) / 2);
}

export interface RequestedEncode {
  bytes: Uint8Array;
  quality: number;
  encodes: number;
  /** Set when a target was given. */
  targetReached?: boolean;
}

/** One encode at `quality`, or with a target the search above (`quality` as its ceiling). */
export function encodeAsRequested(
  encode: (quality: number) => Uint8Array,
  quality: number,
  targetKb: number | undefined,
): RequestedEncode {
  if (targetKb === undefined) return { bytes: encode(quality), quality, encodes: 1 };
  const found = searchQuality(encode, targetKb * 1024, quality);
  return { bytes: found.bytes, quality: found.quality, encodes: found.encodes, targetReached: found.reached };
}

/** encodeAsRequested for an encoder that awaits. */
export async function encodeAsRequestedAsync(
  encode: (quality: number) => Promise<Uint8Array>,
  quality: number,
  targetKb: number | undefined,
): Promise<RequestedEncode> {
  if (targetKb === undefined) return { bytes: await encode(quality), quality, encodes: 1 };
  const found = await searchQualityAsync(encode, targetKb * 1024, quality);
  return { bytes: found.bytes, quality: found.quality, encodes: found.encodes, targetReached: found.reached };
}
