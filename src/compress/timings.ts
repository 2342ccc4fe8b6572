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

/** `timed` for work that awaits (engine work giving way): the time until it settles, others' turns included. */
export async function timedAsync<T>(timings: Timings, phase: keyof Timings, work: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await work();
  } finally {
    timings[phase] += performance.now() - start;
  }
}
