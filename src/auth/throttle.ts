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

export async function clear(db: D1Database, bucket: string): Promise<void> {
  await db.prepare(SQL.clear).bind(bucket).run();
}

export const buckets = {
  signInIp: (ip: string) => `signin-ip:${ip}`,
  signInAccount: (email: string) => `signin-account:${email.trim().toLowerCase()}`,
  signUpIp: (ip: string) => `signup-ip:${ip}`,
};
