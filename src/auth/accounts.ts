// Signing up and signing in with an email and a password. Returns outcomes, not HTTP: the pages turn
// them into friendly messages.
import { newAccountId } from '../accounts/keys.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { SIGNIN_MAX_PER_ACCOUNT, SIGNIN_MAX_PER_IP, SIGNIN_WINDOW_MS, SIGNUP_MAX_PER_IP, SIGNUP_WINDOW_MS } from './limits.ts';
import { buckets, clear, hit } from './throttle.ts';

export type AuthOutcome =
  | { ok: true; accountId: string }
  | { ok: false; reason: 'invalid_credentials' | 'email_taken' }
  | { ok: false; reason: 'throttled'; retryAfter: number };

const SQL = {
  insert:
    'INSERT INTO accounts (id, email, name, image_tier, tools_tier, created_at, password_hash) VALUES (?, ?, ?, ?, ?, ?, ?)',
  credentials: 'SELECT id, password_hash FROM accounts WHERE email = ? COLLATE NOCASE',
  exists: 'SELECT 1 AS found FROM accounts WHERE email = ? COLLATE NOCASE',
  setHash: 'UPDATE accounts SET password_hash = ? WHERE id = ?',
} as const;

export interface SignUp {
  name: string;
  email: string;
  password: string;
}

export async function signUp(db: D1Database, input: SignUp, ip: string, now: number): Promise<AuthOutcome> {
  const gate = await hit(db, [{ bucket: buckets.signUpIp(ip), windowMs: SIGNUP_WINDOW_MS, max: SIGNUP_MAX_PER_IP }], now);
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
  return { ok: true, accountId: id };
}

export async function signIn(db: D1Database, email: string, password: string, ip: string, now: number): Promise<AuthOutcome> {
  // Counted before the password is checked, so a burst of guesses cannot outrun the count.
  const gate = await hit(db, [
    { bucket: buckets.signInIp(ip), windowMs: SIGNIN_WINDOW_MS, max: SIGNIN_MAX_PER_IP },
    { bucket: buckets.signInAccount(email), windowMs: SIGNIN_WINDOW_MS, max: SIGNIN_MAX_PER_ACCOUNT },
  ], now);
  if (!gate.allowed) return { ok: false, reason: 'throttled', retryAfter: gate.retryAfter };
  const row = await db.prepare(SQL.credentials).bind(email).first<{ id: string; password_hash: string | null }>();
  const check = await verifyPassword(password, row?.password_hash ?? null);
  if (!row || !check.ok) return { ok: false, reason: 'invalid_credentials' };
  await clear(db, buckets.signInAccount(email));
  if (check.rehash) await db.prepare(SQL.setHash).bind(await hashPassword(password), row.id).run();
  return { ok: true, accountId: row.id };
}
