// The metering rules (docs/using-the-api.md, "Rate limits and quotas"), as functions over Counters. No I/O, no awaits: each is one atomic step.
import { IMAGE_TIERS, TOOLS_TIERS, type ImageTier, type ToolsTier } from '../accounts/tiers.ts';
import type { Counters } from './counters.ts';
import { type HomeLedger, leaseOfReservation, type WindowSpec } from './lease.ts';
import type { RateHeaders, ToolsUsage, WindowUsage } from './types.ts';
import { dayWindow, minuteWindow, monthWindow, secondsUntil, toUnixSeconds } from './windows.ts';

/** What the Tools API rules read and write: a key's Counters, or a view of them (leases, the simulation). */
export type ToolsCounts = Pick<Counters, 'used' | 'add' | 'addDaily'>;

/** The windows a Tools API request spends one unit of: the minute, then the day (null limit: no daily cap). */
export function toolsWindows(tier: ToolsTier, now: number): WindowSpec[] {
  const limits = TOOLS_TIERS[tier];
  return [
    { name: 'minute', ...minuteWindow(now), limit: limits.perMinute },
    { name: 'day', ...dayWindow(now), limit: limits.perDay },
  ];
}

export interface ToolsResult {
  allowed: boolean;
  rate: RateHeaders;
}

/** Checks every Tools API window and, when all allow it and `count` is set, spends one unit of each. */
export function meterTools(counters: ToolsCounts, tier: ToolsTier, now: number, count: boolean): ToolsResult {
  const limits = TOOLS_TIERS[tier];
  const minute = minuteWindow(now);
  const day = dayWindow(now);
  const minuteUsed = counters.used('minute', minute.start);
  const dayUsed = counters.used('day', day.start);
  const minuteFull = minuteUsed >= limits.perMinute;
  const dayFull = limits.perDay !== null && dayUsed >= limits.perDay;

  if (count && (minuteFull || dayFull)) {
    // The day window binds when it is exhausted: waiting out the minute would not help.
    const until = dayFull ? day.end : minute.end;
    return {
      allowed: false,
      rate: {
        limit: limits.perMinute,
        remaining: 0,
        reset: toUnixSeconds(until),
        retryAfter: secondsUntil(until, now),
      },
    };
  }
  const spent = count ? 1 : 0;
  if (count) {
    counters.add('minute', minute.start);
    // Counted even without a daily cap, so /account can show the day's use.
    counters.add('day', day.start);
    counters.addDaily('requests', day.start);
  }
  const minuteLeft = limits.perMinute - minuteUsed - spent;
  const dayLeft = limits.perDay === null ? Infinity : limits.perDay - dayUsed - spent;
  // Report the window that runs out first; on a tie, the day, since it resets later.
  const binding = dayLeft <= minuteLeft ? { left: dayLeft, end: day.end } : { left: minuteLeft, end: minute.end };
  return {
    allowed: true,
    rate: { limit: limits.perMinute, remaining: Math.max(0, binding.left), reset: toUnixSeconds(binding.end) },
  };
}

export interface ImageResult {
  allowed: boolean;
  rate: RateHeaders;
}

// Image API's month belongs to the account: these run on the account's meter (src/metering/account-meter.ts),
// over its Counters (seen with the units lent to locations counted as taken), never on a key's.

/** What the month's rules read and write: the account's Counters, or a view of them (leases, the simulation). */
export type MonthCounts = Pick<Counters, 'used' | 'add' | 'reserved' | 'reserve' | 'take'>;

/** The window a compression spends one unit of: the account's month. */
export function monthWindows(tier: ImageTier, now: number): WindowSpec[] {
  return [{ name: 'month', ...monthWindow(now), limit: IMAGE_TIERS[tier].compressionsPerMonth }];
}

/** Monthly compressions: `used` counts committed ones; open reservations hold units until they settle. */
export function imageStatus(counters: MonthCounts, tier: ImageTier, now: number): ImageResult {
  const month = monthWindow(now);
  const limit = IMAGE_TIERS[tier].compressionsPerMonth;
  const taken = counters.used('month', month.start) + counters.reserved(month.start, now);
  const remaining = Math.max(0, limit - taken);
  const rate: RateHeaders = { limit, remaining, reset: toUnixSeconds(month.end) };
  if (remaining === 0) rate.retryAfter = secondsUntil(month.end, now);
  return { allowed: remaining > 0, rate };
}

export function reserveCompression(counters: MonthCounts, tier: ImageTier, now: number, id: string): ImageResult {
  const status = imageStatus(counters, tier, now);
  if (!status.allowed) return status;
  counters.reserve(id, monthWindow(now).start, now);
  // The status after reserving may show 0 left; that is this request's unit, not a refusal.
  const { retryAfter: _unused, ...rate } = imageStatus(counters, tier, now).rate;
  return { allowed: true, rate };
}

export interface CommitResult extends ImageResult {
  /** Whether a unit was spent: the key then records the compression in its per-day history. */
  charged: boolean;
}

/**
 * What settling reservation `id` reads and writes, whichever way it ends: the month's counters, and the
 * slices lent from them (`leases`) that it may have been taken from.
 */
type Settlement = [counters: MonthCounts, tier: ImageTier, now: number, id: string, leases?: HomeLedger];

/**
 * Turns a reservation into a spent unit: one held here, or one of a slice still lent (`leases`: a
 * reservation its location settles here once it gave the lease up). A reservation that expired meanwhile
 * is still charged when the month has room, and never when it has not: the month is never overdrawn.
 */
export function commitCompression(...[counters, tier, now, id, leases]: Settlement): CommitResult {
  const held = counters.take(id, now);
  if (held?.spent) {
    // Counted when its lease expired unanswered.
  } else if (held) counters.add('month', held.month);
  else if (leases?.settleOne(leaseOfReservation(id), true)) {
    // Charged by the lease it was taken from.
  } else if (imageStatus(counters, tier, now).allowed) counters.add('month', monthWindow(now).start);
  else return { ...imageStatus(counters, tier, now), charged: false };
  return { ...imageStatus(counters, tier, now), charged: true };
}

/** Gives a reservation's unit back, whether held here or taken from a slice still lent (`leases`). */
export function releaseCompression(...[counters, tier, now, id, leases]: Settlement): ImageResult {
  const held = counters.take(id, now);
  // A unit counted when its lease expired unanswered, given back.
  if (held?.spent) {
    if (counters.used('month', held.month) > 0) counters.add('month', held.month, -1);
  } else if (!held) leases?.settleOne(leaseOfReservation(id), false);
  return imageStatus(counters, tier, now);
}

/**
 * The account's month as /account and the console show it: `used` counts the compressions committed here
 * (those of a slice once its location reports them), `remaining` excludes units in flight and `lent`,
 * the units lent to locations and not yet reported.
 */
export function monthUsage(counters: MonthCounts, tier: ImageTier, now: number, lent = 0): WindowUsage {
  const month = monthWindow(now);
  const limit = IMAGE_TIERS[tier].compressionsPerMonth;
  const used = counters.used('month', month.start);
  const held = used + counters.reserved(month.start, now) + lent;
  return { limit, used, remaining: Math.max(0, limit - held), reset: toUnixSeconds(month.end) };
}

/** A key's Tools API windows as they stand (its minute and day; the month is the account's). */
export function toolsUsage(counters: Counters, tier: ToolsTier, now: number): ToolsUsage {
  const limits = TOOLS_TIERS[tier];
  const minute = minuteWindow(now);
  const day = dayWindow(now);
  const minuteUsed = counters.used('minute', minute.start);
  const dayUsed = counters.used('day', day.start);
  return {
    minute: {
      limit: limits.perMinute,
      used: minuteUsed,
      remaining: Math.max(0, limits.perMinute - minuteUsed),
      reset: toUnixSeconds(minute.end),
    },
    day: {
      limit: limits.perDay,
      used: dayUsed,
      remaining: limits.perDay === null ? null : Math.max(0, limits.perDay - dayUsed),
      reset: toUnixSeconds(day.end),
    },
  };
}

/**
 * Management API requests of a `manage` key per UTC minute: enough for any automation, and a bound on
 * what a leaked key can make us do (each delivery-log read is a D1 query and up to a hundred SQLite ones).
 */
export const MANAGE_PER_MINUTE = 120;

/** The management API's own minute window (a window of its own, apart from the tools API's). */
export function meterManage(counters: Counters, now: number): { allowed: boolean; rate: RateHeaders } {
  const minute = minuteWindow(now);
  const used = counters.used('manage_minute', minute.start);
  if (used >= MANAGE_PER_MINUTE) {
    return {
      allowed: false,
      rate: {
        limit: MANAGE_PER_MINUTE,
        remaining: 0,
        reset: toUnixSeconds(minute.end),
        retryAfter: secondsUntil(minute.end, now),
      },
    };
  }
  counters.add('manage_minute', minute.start);
  return {
    allowed: true,
    rate: { limit: MANAGE_PER_MINUTE, remaining: MANAGE_PER_MINUTE - used - 1, reset: toUnixSeconds(minute.end) },
  };
}

/**
 * Uploads of one key refused after their image was read (415 `unsupported_media_type`, 422
 * `unprocessable_image` / `image_too_large`) per UTC minute; past it, the key's compressions get 429
 * `rate_limit_exceeded` until the minute ends. A refusal spends no unit of the month, yet reading and
 * refusing the image costs the isolate time and memory: this bounds what a key can make it spend on
 * images that will never compress. Parameter errors (400) are refused before any image is read and do
 * not count; nor does a successful compression.
 */
export const FAILED_COMPRESSIONS_PER_MINUTE = 30;

/** Whether the key's refused uploads of this minute leave it room for another compression. */
export function failedCompressions(counters: Counters, now: number): { allowed: boolean; rate: RateHeaders } {
  const minute = minuteWindow(now);
  const used = counters.used('failed_minute', minute.start);
  const rate: RateHeaders = {
    limit: FAILED_COMPRESSIONS_PER_MINUTE,
    remaining: Math.max(0, FAILED_COMPRESSIONS_PER_MINUTE - used),
    reset: toUnixSeconds(minute.end),
  };
  if (used < FAILED_COMPRESSIONS_PER_MINUTE) return { allowed: true, rate };
  return { allowed: false, rate: { ...rate, retryAfter: secondsUntil(minute.end, now) } };
}

/** Counts one upload refused after its image was read. */
export function countFailedCompression(counters: Counters, now: number): void {
  counters.add('failed_minute', minuteWindow(now).start);
}
