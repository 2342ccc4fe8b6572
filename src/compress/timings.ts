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

/** What a row resampler does (wasm/row-resizer.ts): take a row, give back each row it completes. */
interface RowResampler {
  push(row: Uint8Array): void;
  pull(out: Uint8Array): boolean;
}

/**
 * Pushes one row into `resizer` and hands each row it completes (in `out`) to `emit`, the resampler's own
 * time counted as resizing, `emit`'s not.
 */
export async function resizeRow(
  resizer: RowResampler,
  row: Uint8Array,
  out: Uint8Array,
  timings: Timings,
  emit: (row: Uint8Array) => unknown,
): Promise<void> {
  timed(timings, 'resize', () => resizer.push(row));
  while (timed(timings, 'resize', () => resizer.pull(out))) await emit(out);
}
