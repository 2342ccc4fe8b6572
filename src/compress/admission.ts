// Priority for pro keys: compressions in flight in this isolate are counted, and once more than the
// limit would run, free requests are shed with 503 while pro requests still go ahead. Per isolate on
// purpose: the resource being protected (CPU and the 128 MB) is the isolate's.
import type { ImageTier } from '../accounts/tiers.ts';
import { ApiError } from '../http/errors.ts';
import { OVERLOAD_RETRY_AFTER_S } from './limits.ts';

let inFlight = 0;

/** Admits a compression or throws 503 `overloaded`; call the returned function exactly once when done. */
export function admit(tier: ImageTier, maxConcurrent: number): () => void {
  if (tier === 'free' && inFlight >= maxConcurrent) {
    throw new ApiError('overloaded', `the service is busy; free-tier compressions are paused for a moment. Retry in ${OVERLOAD_RETRY_AFTER_S} s, or upgrade to pro for priority`, {
      headers: { 'Retry-After': String(OVERLOAD_RETRY_AFTER_S) },
    });
  }
  inFlight++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    inFlight--;
  };
}

export const compressionsInFlight = (): number => inFlight;
