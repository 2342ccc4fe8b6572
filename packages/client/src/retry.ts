// When and how long to wait before trying a call again. Only two answers are retried: 429
// rate_limit_exceeded (Tools API's minute or day window) and 503 overloaded (compression shed under memory
// pressure), both of which pass. 429 quota_exceeded lasts until the next month and is never retried;
// nothing else is either, since a compression that failed half-way may already have been counted.
import { ApiError } from './errors.ts';

/** Retries after the first attempt, unless the caller sets maxRetries. */
export const DEFAULT_MAX_RETRIES = 3;
/** Backoff without Retry-After: 0.5 s, 1 s, 2 s, … capped at 8 s, each minus up to 25% jitter. */
export const INITIAL_RETRY_DELAY_MS = 500;
export const MAX_BACKOFF_DELAY_MS = 8_000;
const JITTER = 0.25;
/**
 * A Retry-After longer than this is not waited out: the call fails at once with the error, whose
 * retryAfter tells the caller how long it would be (a day window can be hours away).
 */
export const MAX_RETRY_AFTER_MS = 60_000;

export const RETRIED_CODES: ReadonlySet<string> = new Set(['rate_limit_exceeded', 'overloaded']);

export function isRetryable(error: unknown): error is ApiError {
  return error instanceof ApiError && (error.status === 429 || error.status === 503) && RETRIED_CODES.has(error.code);
}

/** Milliseconds to wait before retry number `attempt` (1-based), or undefined: do not retry. */
export function retryDelay(
  error: unknown,
  attempt: number,
  maxRetries: number,
  random = Math.random,
): number | undefined {
  if (attempt > maxRetries || !isRetryable(error)) return undefined;
  if (error.retryAfter !== undefined) {
    const ms = error.retryAfter * 1000;
    return ms <= MAX_RETRY_AFTER_MS ? ms : undefined;
  }
  const backoff = Math.min(INITIAL_RETRY_DELAY_MS * 2 ** (attempt - 1), MAX_BACKOFF_DELAY_MS);
  return Math.round(backoff * (1 - random() * JITTER));
}

/** A sleep that ends early (rejecting) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
