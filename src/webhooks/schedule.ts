// The retry schedule, the attempt timeout and the disable-after span, from their vars when set (tests, operators), else the
// constants of limits.ts.
import type { Env } from '../env.ts';
import { integerVar } from '../env.ts';
import { ATTEMPT_TIMEOUT_MS, DISABLE_AFTER_MS, RETRY_SCHEDULE_MS } from './limits.ts';

/** WEBHOOK_RETRY_SCHEDULE_MS: comma-separated delays in ms, one per attempt. A bad value fails loudly. */
export function retrySchedule(env: Env): readonly number[] {
  const text = env.WEBHOOK_RETRY_SCHEDULE_MS?.trim();
  if (!text) return RETRY_SCHEDULE_MS;
  const steps = text.split(',').map((s) => Number(s.trim()));
  if (steps.length === 0 || steps.some((n) => !Number.isSafeInteger(n) || n < 0)) {
    throw new Error(`the var WEBHOOK_RETRY_SCHEDULE_MS must be comma-separated non-negative integers, not "${text}"`);
  }
  return steps;
}

export const disableAfter = (env: Env): number =>
  integerVar('WEBHOOK_DISABLE_AFTER_MS', env.WEBHOOK_DISABLE_AFTER_MS, DISABLE_AFTER_MS);

export const attemptTimeout = (env: Env): number =>
  integerVar('WEBHOOK_ATTEMPT_TIMEOUT_MS', env.WEBHOOK_ATTEMPT_TIMEOUT_MS, ATTEMPT_TIMEOUT_MS);
