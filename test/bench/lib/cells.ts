// What the bench reports share to fill a markdown table: medians over the runs that gave a value, and
// a number or "–" where none did.
import { median } from './load.ts';

/** The values a run gave: neither undefined nor NaN. */
export const defined = <T>(values: (T | undefined)[]): T[] =>
  values.filter((v): v is T => v !== undefined && !(typeof v === 'number' && Number.isNaN(v)));

/** The median of the values given, undefined when there are none. */
export const med = (values: (number | undefined)[]) => {
  const d = defined(values);
  return d.length ? median(d) : undefined;
};

export const fmt = (v: number | undefined, digits = 2) =>
  v === undefined || Number.isNaN(v) ? '–' : v.toFixed(digits);
