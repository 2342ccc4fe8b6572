// Signing up and signing in with an email and a password. Returns outcomes, not HTTP: the pages turn
// them into friendly messages.
import { newAccountId } from '../accounts/keys.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { ssoRequiredFor } from './sso-policy.ts';
import {
  SIGNIN_EMAIL_DELAY_BASE_S,
  SIGNIN_EMAIL_DELAY_MAX_S,
  SIGNIN_EMAIL_FREE_FAILURES,
  SIGNIN_MAX_PER_IP,
  SIGNIN_MAX_PER_PAIR,
  SIGNIN_WINDOW_MS,
  SIGNUP_MAX_PER_IP,
  SIGNUP_WINDOW_MS,
} from './limits.ts';
import { buckets, clear, clearEmail, emailGate, hit, type EmailRule } from './throttle.ts';

const EMAIL_RULE: EmailRule = {
  free: SIGNIN_EMAIL_FREE_FAILURES,
  windowMs: SIGNIN_WINDOW_MS,
  baseSeconds: SIGNIN_EMAIL_DELAY_BASE_S,
  maxSeconds: SIGNIN_EMAIL_DELAY_MAX_S,
};

export type AuthOutcome =
  | { ok: true; accountId: string; memberId: string }
  /** accountId: the account the email belongs to, when it belongs to one (for its audit log). */
  | { ok: false; reason: 'invalid_credentials'; accountId?: string }
  /** The email's domain signs in by SSO only (the account's "require SSO"); owners keep their password. */
  | { ok: false; reason: 'sso_required'; accountId: string }
  | { ok: false; reason: 'email_taken' }
  | { ok: false; reason: 'throttled'; retryAfter: number };

const SQL = {
  insert:
    'INSERT INTO accounts (id, email, name, image_tier, tools_tier, created_at, password_hash) VALUES (?, ?, ?, ?, ?, ?, ?)',
  // Members sign in; an account's first owner is a member too (migration 0005).
  credentials: 'SELECT id, account_id, role, password_hash FROM members WHERE email = ? COLLATE NOCASE',
  exists: 'SELECT 1 AS found FROM members WHERE email = ? COLLATE NOCASE',
  setHash: 'UPDATE members SET password_hash = ? WHERE id = ?',
} as const;

export interface SignUp {
  name: string;
  email: string;
  password: string;
}

export async function signUp(db: D1Database, input: SignUp, ip: string, now: number): Promise<AuthOutcome> {
  const gate = await hit(
    db,
    [{ bucket: buckets.signUpIp(ip), windowMs: SIGNUP_WINDOW_MS, max: SIGNUP_MAX_PER_IP }],
    now,
  );
  if (!gate.allowed) return { ok: false, reason: 'throttled', retryAfter: gate.retryAfter };
  if (await db.prepare(SQL.exists).bind(input.email).first()) return { ok: false, reason: 'email_taken' };
  const id = newAccountId();
  const hash = await hashPassword(input.password);
  try {
    await db.prepare(SQL.insert).bind(id, input.email, input.name, 'free', 'free', now, hash).run();
  } catch (err) {
    // Two sign-ups with one email at once: the unique index decides, and the loser hears the truth.
    if (String(err).includes('UNIQUE')) return { ok: false, reason: 'email_taken' };
    throw err;
  }
  return { ok: true, accountId: id, memberId: ownerMemberId(id) };
}

/** The member the accounts_owner trigger makes with each account (migration 0005). */
export const ownerMemberId = (accountId: string): string => `mem_${accountId.slice(4)}`;

export async function signIn(
  db: D1Database,
  email: string,
  password: string,
  ip: string,
  now: number,
): Promise<AuthOutcome> {
  // Counted before the password is checked, so a burst of guesses cannot outrun the count. The hard
  // limits are per client IP and per (account, IP) pair: a stranger can lock only their own address out.
  const gate = await hit(
    db,
    [
      { bucket: buckets.signInIp(ip), windowMs: SIGNIN_WINDOW_MS, max: SIGNIN_MAX_PER_IP },
      { bucket: buckets.signInPair(email, ip), windowMs: SIGNIN_WINDOW_MS, max: SIGNIN_MAX_PER_PAIR },
    ],
    now,
  );
  if (!gate.allowed) return { ok: false, reason: 'throttled', retryAfter: gate.retryAfter };
  // The email as a whole, guessed at from any number of addresses (or spoofed ones), gets a growing delay.
  // Unknown emails are counted too, so the delay does not tell whether an account exists.
  const turn = await emailGate(db, email, EMAIL_RULE, now);
  if (!turn.allowed) return { ok: false, reason: 'throttled', retryAfter: turn.retryAfter };
  const row = await db
    .prepare(SQL.credentials)
    .bind(email)
    .first<{ id: string; account_id: string; role: string; password_hash: string | null }>();
  const check = await verifyPassword(password, row?.password_hash ?? null);
  if (!row || !check.ok) {
    return row
      ? { ok: false, reason: 'invalid_credentials', accountId: row.account_id }
      : { ok: false, reason: 'invalid_credentials' };
  }
  // Checked after the password, so the answer does not tell strangers which emails SSO covers.
  if (row.role !== 'owner' && (await ssoRequiredFor(db, row.account_id, email)))
    return { ok: false, reason: 'sso_required', accountId: row.account_id };
  await Promise.all([clear(db, buckets.signInPair(email, ip)), clearEmail(db, email)]);
  if (check.rehash)
    await db
      .prepare(SQL.setHash)
      .bind(await hashPassword(password), row.id)
      .run();
  return { ok: true, accountId: row.account_id, memberId: row.id };
}
