// Exact fixed-window counters of sign-in and sign-up attempts in D1: one upsert counts the attempt and
// returns the new count, so concurrent attempts are serialised by D1 and none slips past the limit.
import { secondsUntil } from '../metering/windows.ts';

export interface ThrottleRule {
  bucket: string;
  windowMs: number;
  max: number;
}

export interface ThrottleVerdict {
  allowed: boolean;
  /** Seconds until the window that refused resets. */
  retryAfter: number;
}

const SQL = {
  hit:
    'INSERT INTO auth_throttle (bucket, window_start, count) VALUES (?, ?, 1) ON CONFLICT (bucket) DO UPDATE SET ' +
    'count = CASE WHEN window_start = excluded.window_start THEN count + 1 ELSE 1 END, window_start = excluded.window_start ' +
    'RETURNING count',
  clear: 'DELETE FROM auth_throttle WHERE bucket = ?',
  // Failure rows (accountDelay below) keep the time of the last failure in window_start and the failures
  // since the last success in count.
  failures: 'SELECT window_start AS last, count FROM auth_throttle WHERE bucket = ?',
  claim: 'UPDATE auth_throttle SET window_start = ? WHERE bucket = ? AND window_start = ? AND count = ?',
  fail:
    'INSERT INTO auth_throttle (bucket, window_start, count) VALUES (?, ?, 1) ON CONFLICT (bucket) DO UPDATE SET ' +
    'count = count + 1, window_start = excluded.window_start',
  // Windows are at most an hour long: anything older than a day is dead weight.
  prune: 'DELETE FROM auth_throttle WHERE window_start < ?',
} as const;

const windowStart = (now: number, windowMs: number): number => Math.floor(now / windowMs) * windowMs;

/** Counts one attempt against every rule; refused when any rule's window is now over its limit. */
export async function hit(db: D1Database, rules: readonly ThrottleRule[], now: number): Promise<ThrottleVerdict> {
  const statements = rules.map((r) => db.prepare(SQL.hit).bind(r.bucket, windowStart(now, r.windowMs)));
  statements.push(db.prepare(SQL.prune).bind(now - 86_400_000));
  const results = await db.batch<{ count: number }>(statements);
  let retryAfter = 0;
  rules.forEach((rule, i) => {
    const count = results[i]?.results[0]?.count ?? 0;
    if (count > rule.max) retryAfter = Math.max(retryAfter, secondsUntil(windowStart(now, rule.windowMs) + rule.windowMs, now));
  });
  return { allowed: retryAfter === 0, retryAfter };
}

export async function clear(db: D1Database, ...names: string[]): Promise<void> {
  await db.batch(names.map((bucket) => db.prepare(SQL.clear).bind(bucket)));
}

export interface DelayRule {
  /** Failures allowed before the delay starts. */
  free: number;
  baseSeconds: number;
  maxSeconds: number;
}

/** Seconds that must pass after the last failure when `failures` have happened (0: none). */
export function delayAfter(failures: number, rule: DelayRule): number {
  if (failures < rule.free) return 0;
  return Math.min(rule.maxSeconds, rule.baseSeconds * 2 ** Math.min(30, failures - rule.free));
}

/**
 * A growing delay, not a lock: once `rule.free` failures are on record, one attempt may run every
 * delayAfter(failures) seconds. The attempt claims its turn with a compare-and-swap on the row it read,
 * so of concurrent attempts exactly one runs and the others are refused; the claim restarts the wait.
 */
export async function claimTurn(db: D1Database, bucket: string, rule: DelayRule, now: number): Promise<ThrottleVerdict> {
  const row = await db.prepare(SQL.failures).bind(bucket).first<{ last: number; count: number }>();
  if (!row) return { allowed: true, retryAfter: 0 };
  const wait = delayAfter(row.count, rule);
  if (wait === 0) return { allowed: true, retryAfter: 0 };
  const due = row.last + wait * 1000;
  if (now < due) return { allowed: false, retryAfter: Math.max(1, Math.ceil((due - now) / 1000)) };
  const claimed = await db.prepare(SQL.claim).bind(now, bucket, row.last, row.count).run();
  if ((claimed.meta.changes ?? 0) === 0) return { allowed: false, retryAfter: wait };
  return { allowed: true, retryAfter: 0 };
}

/** Records one failure: the count grows and the wait runs from now. */
export async function recordFailure(db: D1Database, bucket: string, now: number): Promise<void> {
  await db.prepare(SQL.fail).bind(bucket, now).run();
}

const emailKey = (email: string): string => email.trim().toLowerCase();

export const buckets = {
  signInIp: (ip: string) => `signin-ip:${ip}`,
  /** The pair's hard limit. JSON, so no email or address can be made to look like another pair. */
  signInPair: (email: string, ip: string) => `signin-pair:${JSON.stringify([emailKey(email), ip])}`,
  /** The account's failures (claimTurn / recordFailure), not a fixed window. */
  signInFailures: (email: string) => `signin-failures:${emailKey(email)}`,
  signUpIp: (ip: string) => `signup-ip:${ip}`,
};
