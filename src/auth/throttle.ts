// Exact fixed-window counters of sign-in and sign-up attempts in D1: one upsert counts the attempt and
// returns the new count, so concurrent attempts are serialised by D1 and none slips past the limit. And
// the per-email delay (emailGate), counted the same way before the password is checked.
import { parseIpv6 } from '../fetch/address.ts';
import { secondsUntil } from '../metering/windows.ts';
import {
  MAIL_REQUESTS_PER_EMAIL,
  MAIL_REQUESTS_PER_IP,
  MAIL_REQUESTS_PER_IP6_48,
  MAIL_REQUESTS_UNTRUSTED_TOTAL,
  type RateRule,
  SIGNIN_PER_IP,
  SIGNIN_PER_IP6_48,
  SIGNIN_PER_PAIR,
  SIGNIN_UNTRUSTED_TOTAL,
  SIGNUP_PER_EMAIL,
  SIGNUP_PER_IP,
  SIGNUP_PER_IP6_48,
  SIGNUP_UNTRUSTED_TOTAL,
} from './limits.ts';

/** The address every client is counted under when none can be trusted (src/http/client-ip.ts). */
export const UNKNOWN_CLIENT = 'unknown';

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
    if (count > rule.max)
      retryAfter = Math.max(retryAfter, secondsUntil(windowStart(now, rule.windowMs) + rule.windowMs, now));
  });
  return { allowed: retryAfter === 0, retryAfter };
}

export async function clear(db: D1Database, ...names: string[]): Promise<void> {
  await db.batch(names.map((bucket) => db.prepare(SQL.clear).bind(bucket)));
}

export interface EmailRule {
  /** Failures within windowMs (from the first) before the delay starts. At least 2. */
  free: number;
  windowMs: number;
  baseSeconds: number;
  maxSeconds: number;
}

const EMAIL_SQL = {
  read: 'SELECT blocked_until FROM signin_email_throttle WHERE email = ?',
  // ?1 email, ?2 now, ?3 free, ?4 window ms, ?5 base ms, ?6 max ms. A refused attempt (?2 < blocked_until)
  // changes nothing; a counted one starts afresh when the failures under the limit are older than the
  // window, and sets the delay once the count reaches the limit (SET expressions read the old row).
  count:
    'INSERT INTO signin_email_throttle (email, attempts, since, blocked_until) VALUES (?1, 1, ?2, 0) ' +
    'ON CONFLICT (email) DO UPDATE SET ' +
    'attempts = CASE WHEN ?2 < blocked_until THEN attempts WHEN attempts < ?3 AND ?2 - since >= ?4 THEN 1 ELSE attempts + 1 END, ' +
    'since = CASE WHEN ?2 < blocked_until THEN since WHEN attempts < ?3 AND ?2 - since >= ?4 THEN ?2 ELSE since END, ' +
    'blocked_until = CASE WHEN ?2 < blocked_until THEN blocked_until WHEN attempts < ?3 AND ?2 - since >= ?4 THEN 0 ' +
    'WHEN attempts + 1 >= ?3 THEN ?2 + min(?6, ?5 << min(attempts + 1 - ?3, 30)) ELSE 0 END',
  clear: 'DELETE FROM signin_email_throttle WHERE email = ?',
  prune: 'DELETE FROM signin_email_throttle WHERE max(since, blocked_until) < ?',
} as const;

/**
 * One sign-in attempt for an email, counted before its password is checked, as a failure until
 * clearEmail says otherwise. Refused while the email's delay runs. The read and the count are one D1
 * batch (a transaction), so of concurrent attempts exactly as many run as the rule allows.
 */
export async function emailGate(db: D1Database, email: string, rule: EmailRule, now: number): Promise<ThrottleVerdict> {
  const key = emailKey(email);
  const [before] = await db.batch<{ blocked_until: number }>([
    db.prepare(EMAIL_SQL.read).bind(key),
    db
      .prepare(EMAIL_SQL.count)
      .bind(key, now, rule.free, rule.windowMs, rule.baseSeconds * 1000, rule.maxSeconds * 1000),
    db.prepare(EMAIL_SQL.prune).bind(now - 86_400_000),
  ]);
  const blockedUntil = before?.results[0]?.blocked_until ?? 0;
  if (now < blockedUntil) return { allowed: false, retryAfter: Math.max(1, Math.ceil((blockedUntil - now) / 1000)) };
  return { allowed: true, retryAfter: 0 };
}

/** Forgets an email's failures: a successful sign-in (and any other proof of the password, such as a mailed reset). */
export async function clearEmail(db: D1Database, email: string): Promise<void> {
  await db.prepare(EMAIL_SQL.clear).bind(emailKey(email)).run();
}

const emailKey = (email: string): string => email.trim().toLowerCase();

/**
 * The client a per-IP limit counts: an IPv4 address as it is (written inside IPv6 as `::ffff:a.b.c.d`, too,
 * since that is the same client), an IPv6 address by its /64. A /64 is what a network gives one
 * subscriber, who can use any of its 2^64 addresses: counted by /128, one host would be a new client at
 * every request. Anything else (UNKNOWN_CLIENT) is its own key.
 */
export function clientKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const bytes = parseIpv6(ip);
  if (bytes === null) return ip;
  if (isMapped(bytes)) return bytes.subarray(12).join('.');
  return prefixKey(bytes, 4);
}

const isMapped = (bytes: Uint8Array): boolean =>
  bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;

/** The first `groups` 16-bit groups of an IPv6 address, as the prefix of that length (4: /64, 3: /48). */
function prefixKey(bytes: Uint8Array, groups: 3 | 4): string {
  const parts = Array.from({ length: groups }, (_, g) => ((bytes[2 * g]! << 8) | bytes[2 * g + 1]!).toString(16));
  return `${parts.join(':')}::/${groups * 16}`;
}

/**
 * The /48 an IPv6 client's /64 belongs to, counted beside it (limits.ts, SIGNIN_PER_IP6_48): null for an
 * IPv4 client (an IPv4-mapped address is one) and for UNKNOWN_CLIENT.
 */
export function wideClientKey(ip: string): string | null {
  const bytes = ip.includes(':') ? parseIpv6(ip) : null;
  return bytes === null || isMapped(bytes) ? null : prefixKey(bytes, 3);
}

/**
 * A per-IP rule in the bucket `<name>:<client>` (signin-ip, signup-ip, mail-ip: requests for mail, "send
 * again" and "forgot password"), with the /48's rule beside it for an IPv6 client.
 */
function perClient(name: string, ip: string, rule: RateRule, wide: RateRule): ThrottleRule[] {
  const rules: ThrottleRule[] = [{ bucket: `${name}:${clientKey(ip)}`, ...rule }];
  const prefix = wideClientKey(ip);
  if (prefix !== null) rules.push({ bucket: `${name}:${prefix}`, ...wide });
  return rules;
}

export const buckets = {
  /** The pair's hard limit. JSON, so no email or address can be made to look like another pair. */
  signInPair: (email: string, ip: string) => `signin-pair:${JSON.stringify([emailKey(email), clientKey(ip)])}`,
  /** Account mail to one address, whoever asks for it. */
  mailTo: (email: string) => `mail-to:${emailKey(email)}`,
  // Where no client address is trusted (UNKNOWN_CLIENT): per email, and all together.
  mailRequestsFor: (email: string) => `mail-email:${emailKey(email)}`,
  mailRequestsUntrusted: () => 'mail-untrusted',
  signUpFor: (email: string) => `signup-email:${emailKey(email)}`,
  signUpUntrusted: () => 'signup-untrusted',
  signInUntrusted: () => 'signin-untrusted',
};

// The hard limits of each attempt: per client, or, where no client address is trusted, never one bucket
// that any one client could fill for everybody (limits.ts, SIGNIN_UNTRUSTED_TOTAL and what follows it).

/** Sign-in: per client IP and per (email, client IP) pair; untrusted, all together (emailGate does the email). */
export function signInRules(ip: string, email: string): ThrottleRule[] {
  if (ip === UNKNOWN_CLIENT) return [{ bucket: buckets.signInUntrusted(), ...SIGNIN_UNTRUSTED_TOTAL }];
  return [
    ...perClient('signin-ip', ip, SIGNIN_PER_IP, SIGNIN_PER_IP6_48),
    { bucket: buckets.signInPair(email, ip), ...SIGNIN_PER_PAIR },
  ];
}

/** Sign-up: per client IP; untrusted, per email and all together. */
export function signUpRules(ip: string, email: string): ThrottleRule[] {
  if (ip !== UNKNOWN_CLIENT) return perClient('signup-ip', ip, SIGNUP_PER_IP, SIGNUP_PER_IP6_48);
  return [
    { bucket: buckets.signUpFor(email), ...SIGNUP_PER_EMAIL },
    { bucket: buckets.signUpUntrusted(), ...SIGNUP_UNTRUSTED_TOTAL },
  ];
}

/** A request for mail ("send again", "forgot password") about `email`: per client IP; untrusted, per email and all together. */
export function mailRequestRules(ip: string, email: string): ThrottleRule[] {
  if (ip !== UNKNOWN_CLIENT) return perClient('mail-ip', ip, MAIL_REQUESTS_PER_IP, MAIL_REQUESTS_PER_IP6_48);
  return [
    { bucket: buckets.mailRequestsFor(email), ...MAIL_REQUESTS_PER_EMAIL },
    { bucket: buckets.mailRequestsUntrusted(), ...MAIL_REQUESTS_UNTRUSTED_TOTAL },
  ];
}
