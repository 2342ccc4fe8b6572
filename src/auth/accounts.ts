// Signing up and signing in with an email and a password. Returns outcomes, not HTTP: the pages turn
// them into friendly messages. Sign-up signs nobody in and makes no account: it stores the sign-up and mails
// a confirmation link, whose use makes the account (src/auth/verification.ts).
import type { Env } from '../env.ts';
import { signUpAttemptMail } from '../mail/messages.ts';
import type { SendOutcome } from '../mail/send.ts';
import { ssoAccountFor } from '../sso/domains.ts';
import { sendLinkMail } from './email-links.ts';
import { hashPassword, passwordIterations, verifyPassword } from './password.ts';
import { ssoRequiredFor } from './sso-policy.ts';
import {
  SIGNIN_EMAIL_DELAY_BASE_S,
  SIGNIN_EMAIL_DELAY_MAX_S,
  SIGNIN_EMAIL_FREE_FAILURES,
  SIGNIN_WINDOW_MS,
} from './limits.ts';
import { buckets, clear, clearEmail, emailGate, hit, signInRules, signUpRules, type EmailRule } from './throttle.ts';
import { storePendingSignUp } from './verification.ts';

export { ownerMemberId } from './verification.ts';

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
  | { ok: false; reason: 'throttled'; retryAfter: number };

export type SignUpOutcome =
  /** `sent`: whether the mail went out (a sign-up's link, or a registered address's notice). */
  | { ok: true; sent: SendOutcome['ok'] }
  /** The email's domain is covered by an account's SSO: its people sign in with SSO. */
  | { ok: false; reason: 'sso_domain' }
  | { ok: false; reason: 'throttled'; retryAfter: number };

const SQL = {
  // Members sign in; an account's first owner is a member too (migration 0005).
  credentials: 'SELECT id, account_id, role, password_hash, email_verified FROM members WHERE email = ? COLLATE NOCASE',
  exists: 'SELECT email FROM members WHERE email = ? COLLATE NOCASE',
  setHash: 'UPDATE members SET password_hash = ? WHERE id = ?',
} as const;

export interface SignUp {
  name: string;
  email: string;
  password: string;
}

/**
 * A pending sign-up, with its confirmation link mailed: the account is made when the link is used. A
 * registered email is answered exactly alike (so sign-up does not tell strangers which emails have
 * accounts), and its owner is told by mail instead; the password is hashed either way, so the time does
 * not tell either. An address with pending sign-ups is free: each sign-up gets its own link.
 */
export async function signUp(env: Env, input: SignUp, ip: string, now: number): Promise<SignUpOutcome> {
  const db = env.DB;
  const gate = await hit(db, signUpRules(ip, input.email), now);
  if (!gate.allowed) return { ok: false, reason: 'throttled', retryAfter: gate.retryAfter };
  // An organisation's domain belongs to its SSO: a stranger must not register an address under it.
  if ((await ssoAccountFor(db, input.email)) !== null) return { ok: false, reason: 'sso_domain' };
  const hash = await hashPassword(input.password, passwordIterations(env));
  const taken = await db.prepare(SQL.exists).bind(input.email).first<{ email: string }>();
  if (taken) return { ok: true, sent: (await mailOwner(env, taken.email, now)).ok };
  const sent = await storePendingSignUp(env, { email: input.email, name: input.name, passwordHash: hash }, now);
  return { ok: true, sent: sent.ok };
}

/** "Someone tried to sign up with your address": public links only. */
function mailOwner(env: Env, email: string, now: number): Promise<SendOutcome> {
  return sendLinkMail(env, '', undefined, (origin) => signUpAttemptMail(email, origin), now);
}

interface CredentialRow {
  id: string;
  account_id: string;
  role: string;
  password_hash: string | null;
  email_verified: number;
}

export type PasswordCheck =
  | { ok: true; row: CredentialRow; rehash: boolean }
  | { ok: false; reason: 'invalid_credentials'; accountId?: string }
  | { ok: false; reason: 'throttled'; retryAfter: number };

/**
 * Whether `password` is the password of the member with this email, behind sign-in's throttles: the
 * password sign-in and the proof that links a member to an SSO identity (src/sso/link-proof.ts) share
 * them, so neither is a way around the other's count. A right password is not yet settled (`settlePassword`).
 */
export async function checkPassword(
  db: D1Database,
  email: string,
  password: string,
  ip: string,
  now: number,
  /** What new hashes get (passwordIterations): fewer stored, and the password is hashed again. */
  iterations: number,
): Promise<PasswordCheck> {
  // Counted before the password is checked, so a burst of guesses cannot outrun the count. The hard
  // limits are per client IP and per (account, IP) pair: a stranger can lock only their own address out.
  const gate = await hit(db, signInRules(ip, email), now);
  if (!gate.allowed) return { ok: false, reason: 'throttled', retryAfter: gate.retryAfter };
  // The email as a whole, guessed at from any number of addresses (or spoofed ones), gets a growing delay.
  // Unknown emails are counted too, so the delay does not tell whether an account exists.
  const turn = await emailGate(db, email, EMAIL_RULE, now);
  if (!turn.allowed) return { ok: false, reason: 'throttled', retryAfter: turn.retryAfter };
  const row = await db.prepare(SQL.credentials).bind(email).first<CredentialRow>();
  const check = await verifyPassword(password, row?.password_hash ?? null, iterations);
  if (!row || !check.ok) {
    return row
      ? { ok: false, reason: 'invalid_credentials', accountId: row.account_id }
      : { ok: false, reason: 'invalid_credentials' };
  }
  return { ok: true, row, rehash: check.rehash };
}

/** A right password used: the guesses counted against it go, and an old hash is replaced. */
export async function settlePassword(
  db: D1Database,
  email: string,
  password: string,
  ip: string,
  checked: { row: CredentialRow; rehash: boolean },
  iterations: number,
): Promise<void> {
  await Promise.all([clear(db, buckets.signInPair(email, ip)), clearEmail(db, email)]);
  if (checked.rehash)
    await db
      .prepare(SQL.setHash)
      .bind(await hashPassword(password, iterations), checked.row.id)
      .run();
}

export async function signIn(
  db: D1Database,
  email: string,
  password: string,
  ip: string,
  now: number,
  /** What new hashes get (passwordIterations): fewer stored, and the password is hashed again. */
  iterations: number,
): Promise<AuthOutcome> {
  const checked = await checkPassword(db, email, password, ip, now, iterations);
  if (!checked.ok) return checked;
  const { row } = checked;
  // Checked after the password, so the answer does not tell strangers which emails SSO covers.
  if (row.role !== 'owner' && (await ssoRequiredFor(db, row.account_id, email)))
    return { ok: false, reason: 'sso_required', accountId: row.account_id };
  // A member unverified since before migration 0012 is answered as a pending sign-up is: as a wrong password.
  if (row.email_verified !== 1) return { ok: false, reason: 'invalid_credentials', accountId: row.account_id };
  await settlePassword(db, email, password, ip, checked, iterations);
  return { ok: true, accountId: row.account_id, memberId: row.id };
}
