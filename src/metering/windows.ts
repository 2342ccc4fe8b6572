// Fixed, aligned UTC windows. All times are Unix milliseconds.

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export interface Window {
  start: number;
  end: number;
}

export function minuteWindow(now: number): Window {
  const start = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  return { start, end: start + MINUTE_MS };
}

export function dayWindow(now: number): Window {
  const start = Math.floor(now / DAY_MS) * DAY_MS;
  return { start, end: start + DAY_MS };
}

export function monthWindow(now: number): Window {
  const d = new Date(now);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { start, end };
}

export const toUnixSeconds = (ms: number): number => Math.floor(ms / 1000);

/** Whole seconds from now until `until`, never less than 1 (a Retry-After of 0 invites a hot loop). */
export function secondsUntil(until: number, now: number): number {
  return Math.max(1, Math.ceil((until - now) / 1000));
}
