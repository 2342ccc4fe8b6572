// The time a compression spent in each phase, which the response reports in Server-Timing.
import type { CompressResult } from './types.ts';

export type Timings = CompressResult['timings'];

/** Runs `work`, adding the time it took to `timings[phase]`. */
export function timed<T>(timings: Timings, phase: keyof Timings, work: () => T): T {
  const start = performance.now();
  try {
    return work();
  } finally {
    timings[phase] += performance.now() - start;
  }
}
