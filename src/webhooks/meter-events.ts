// Which metering steps make events: usage.threshold at 80 % and 100 % of a window, rate_limit.exceeded at
// a key's first 429 of a window. Called inside the meter's transactionSync, right after the counters
// moved, so "once per window" holds under any concurrency. Pure over the meter's storage: no I/O.
import { can } from '../accounts/entitlements.ts';
import { IMAGE_TIERS, TOOLS_TIERS, type ImageTier, type ToolsTier } from '../accounts/tiers.ts';
import type { Counters } from '../metering/counters.ts';
import { dayWindow, minuteWindow, monthWindow, toUnixSeconds } from '../metering/windows.ts';
import type { RateLimitData, ThresholdData } from './events.ts';
import { THRESHOLD_PERCENTS } from './limits.ts';
import type { MeterOutbox } from './meter-outbox.ts';

/** Whom an event is about. Passed only when the account's tools tier has webhooks; otherwise nothing is recorded. */
export interface HookTarget {
  accountId: string;
  keyId: string;
}

export function hookTarget(key: {
  id: string;
  account: { id: string };
  tiers: { tools: ToolsTier };
}): HookTarget | undefined {
  return can(key.tiers, 'webhooks') ? { accountId: key.account.id, keyId: key.id } : undefined;
}

function thresholds(
  outbox: MeterOutbox,
  target: HookTarget,
  base: Omit<ThresholdData, 'percent'>,
  windowStart: number,
  now: number,
): boolean {
  let recorded = false;
  for (const percent of THRESHOLD_PERCENTS) {
    if (base.used < Math.ceil((base.limit * percent) / 100)) continue;
    // The image month is the account's: every key shares one marker, so the account hears it once.
    const marker = `threshold:${base.api}:${base.window}:${percent}`;
    if (!outbox.fireOnce(marker, windowStart)) continue;
    outbox.record(target.accountId, 'usage.threshold', now, { ...base, percent });
    recorded = true;
  }
  return recorded;
}

/** Tools API, after meterTools: the key's day thresholds when the request was counted, or its first 429. */
export function toolsEvents(
  outbox: MeterOutbox,
  counters: Counters,
  target: HookTarget,
  tier: ToolsTier,
  now: number,
  allowed: boolean,
): boolean {
  const limits = TOOLS_TIERS[tier];
  const day = dayWindow(now);
  const dayUsed = counters.used('day', day.start);
  if (allowed) {
    if (limits.perDay === null) return false;
    return thresholds(
      outbox,
      target,
      {
        key_id: target.keyId,
        api: 'tools',
        window: 'day',
        used: dayUsed,
        limit: limits.perDay,
        reset: toUnixSeconds(day.end),
      },
      day.start,
      now,
    );
  }
  const dayFull = limits.perDay !== null && dayUsed >= limits.perDay;
  const window = dayFull ? day : minuteWindow(now);
  const data: RateLimitData = {
    key_id: target.keyId,
    api: 'tools',
    window: dayFull ? 'day' : 'minute',
    limit: dayFull ? (limits.perDay as number) : limits.perMinute,
    reset: toUnixSeconds(window.end),
  };
  if (!outbox.fireOnce(`rate_limit:tools:${data.window}`, window.start)) return false;
  outbox.record(target.accountId, 'rate_limit.exceeded', now, { ...data });
  return true;
}

/** Image API, after a compression was charged to the account's month (on the account's meter). */
export function imageThresholds(
  outbox: MeterOutbox,
  counters: Counters,
  target: HookTarget,
  tier: ImageTier,
  now: number,
): boolean {
  const month = monthWindow(now);
  const limit = IMAGE_TIERS[tier].compressionsPerMonth;
  const used = counters.used('month', month.start);
  return thresholds(
    outbox,
    target,
    { key_id: target.keyId, api: 'image', window: 'month', used, limit, reset: toUnixSeconds(month.end) },
    month.start,
    now,
  );
}

/** Image API, a reservation refused because the month is used up: the first such 429 of each key this month. */
export function imageRefused(outbox: MeterOutbox, target: HookTarget, tier: ImageTier, now: number): boolean {
  const month = monthWindow(now);
  if (!outbox.fireOnce(`rate_limit:image:month:${target.keyId}`, month.start)) return false;
  const data: RateLimitData = {
    key_id: target.keyId,
    api: 'image',
    window: 'month',
    limit: IMAGE_TIERS[tier].compressionsPerMonth,
    reset: toUnixSeconds(month.end),
  };
  outbox.record(target.accountId, 'rate_limit.exceeded', now, { ...data });
  return true;
}
