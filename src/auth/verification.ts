// Email verification. A console sign-up makes no account: it is stored pending (pending_signups, migration
// 0012) with its mailed link, and the link, once used, makes the account (its owner member verified) and
// signs them in. Until then the sign-up holds no address: anyone else may sign up with it too (the first
// link used wins and the others die), and sign-in answers for it exactly as for a free address.
// Members left unverified by sign-ups before migration 0012 keep their links (email_tokens) and "send again".
import { passwordIterations, verifyPassword } from './password.ts';
import { newAccountId, sha256Hex } from '../accounts/keys.ts';
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import type { Env } from '../env.ts';
import type { SendOutcome } from '../mail/send.ts';
import { verificationMail } from '../mail/messages.ts';
import { CLAIMED, LINK_PATHS, LINK_TOKEN_PATTERN, newLink, openLink, sendLinkMail, useLink } from './email-links.ts';
import { EMAIL_TOKEN_BYTES, VERIFY_LINK_TTL_MS } from './limits.ts';
import { randomToken } from './sessions.ts';

const SQL = {
  // Members unverified before migration 0012.
  unverified: 'SELECT id FROM members WHERE email = ? COLLATE NOCASE AND email_verified = 0',
  verify: `UPDATE members SET email_verified = 1 WHERE id = ? AND ${CLAIMED}`,
  // Pending sign-ups a day past their link's end are dead weight; cleared whenever one is stored.
  prune: 'DELETE FROM pending_signups WHERE expires_at < ?',
  insert:
    'INSERT INTO pending_signups (token_hash, email, name, password_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
  open: 'SELECT email, password_hash FROM pending_signups WHERE token_hash = ? AND claim IS NULL AND expires_at > ?',
  // Expired ones too (until pruned): "send again" after the link's end gives the sign-up a new one.
  newest:
    'SELECT token_hash FROM pending_signups WHERE email = ? COLLATE NOCASE AND claim IS NULL ORDER BY created_at DESC LIMIT 1',
  renew: 'UPDATE pending_signups SET token_hash = ?1, expires_at = ?2 WHERE token_hash = ?3 AND claim IS NULL',
  // One request wins the link; the account is made from the row it claimed, and every pending sign-up of
  // that address goes with it.
  claim: 'UPDATE pending_signups SET claim = ?1 WHERE token_hash = ?2 AND claim IS NULL AND expires_at > ?3',
  account:
    "INSERT INTO accounts (id, email, name, image_tier, tools_tier, created_at, password_hash) SELECT ?1, email, name, 'free', 'free', ?2, password_hash FROM pending_signups WHERE claim = ?3",
  drop: 'DELETE FROM pending_signups WHERE email = (SELECT email FROM pending_signups WHERE claim = ?1) COLLATE NOCASE',
  forget: 'DELETE FROM pending_signups WHERE token_hash = ?',
} as const;

/** The member the accounts_owner trigger makes with each account (migration 0005). */
export const ownerMemberId = (accountId: string): string => `mem_${accountId.slice(4)}`;

const HOURS = VERIFY_LINK_TTL_MS / 3_600_000;

const mailLink = (env: Env, email: string, token: string, now: number): Promise<SendOutcome> =>
  sendLinkMail(env, LINK_PATHS.verify, token, (url) => verificationMail(email, url, HOURS), now);

export interface PendingSignUp {
  email: string;
  name: string;
  passwordHash: string;
}

/** Stores a sign-up until its link is used, and mails the link. */
export async function storePendingSignUp(env: Env, signUp: PendingSignUp, now: number): Promise<SendOutcome> {
  const token = randomToken(EMAIL_TOKEN_BYTES);
  await env.DB.batch([
    env.DB.prepare(SQL.prune).bind(now - 86_400_000),
    env.DB.prepare(SQL.insert).bind(
      await sha256Hex(token),
      signUp.email,
      signUp.name,
      signUp.passwordHash,
      now,
      now + VERIFY_LINK_TTL_MS,
    ),
  ]);
  return mailLink(env, signUp.email, token, now);
}

/** Mails a confirmation link to a member unverified before migration 0012. */
async function mailMemberLink(env: Env, memberId: string, email: string, now: number): Promise<SendOutcome> {
  const link = await newLink(env.DB, memberId, 'verify', VERIFY_LINK_TTL_MS, now);
  await env.DB.batch(link.statements);
  return mailLink(env, email, link.token, now);
}

/**
 * "Send the link again": a new link for the newest pending sign-up of the email (the one before stops
 * working), or for an unverified member's address; nothing otherwise. The caller answers the same either
 * way, and runs this after answering, so neither words nor time tell them apart.
 */
export async function resendVerification(env: Env, email: string, now: number): Promise<void> {
  const pending = await env.DB.prepare(SQL.newest).bind(email).first<{ token_hash: string }>();
  if (pending) {
    const token = randomToken(EMAIL_TOKEN_BYTES);
    const renewed = await env.DB.prepare(SQL.renew)
      .bind(await sha256Hex(token), now + VERIFY_LINK_TTL_MS, pending.token_hash)
      .run();
    if (renewed.meta.changes === 1) await mailLink(env, email, token, now);
    return;
  }
  const member = await env.DB.prepare(SQL.unverified).bind(email).first<{ id: string }>();
  if (member) await mailMemberLink(env, member.id, email, now);
}

/** Whether a confirmation link can still be used (its page shows the button), without using it. */
/**
 * What a confirmation link opens: a pending sign-up's (its page asks for the password chosen at sign-up),
 * an older unverified member's, or nothing (used, expired, unknown).
 */
export async function verificationOpen(
  db: D1Database,
  token: string,
  now: number,
): Promise<'sign_up' | 'member' | null> {
  if (!LINK_TOKEN_PATTERN.test(token)) return null;
  if (
    await db
      .prepare(SQL.open)
      .bind(await sha256Hex(token), now)
      .first()
  )
    return 'sign_up';
  return (await openLink(db, token, 'verify', now)) !== null ? 'member' : null;
}

export type VerifyOutcome =
  | { ok: true; accountId: string; memberId: string }
  | { ok: false; reason: 'gone' }
  | { ok: false; reason: 'wrong_password' };

/**
 * Uses a confirmation link once: a pending sign-up's makes its account (member.email_verified, the
 * account's first record); an older unverified member's verifies them. A used or expired link is gone, and
 * so is a pending sign-up's whose address became a member's meanwhile.
 */
export async function verifyEmail(
  env: Env,
  token: string,
  /**
   * The password chosen at sign-up, which a pending sign-up's link needs: anyone may sign up with any
   * address, and a stranger's link that reached the owner of the mailbox (mailed again by "send again")
   * must not make an account with the stranger's password when the owner clicks it.
   */
  password: string,
  now: number,
  origin: (memberId: string) => AuditOrigin,
): Promise<VerifyOutcome> {
  if (!LINK_TOKEN_PATTERN.test(token)) return { ok: false, reason: 'gone' };
  const tokenHash = await sha256Hex(token);
  const pending = await env.DB.prepare(SQL.open).bind(tokenHash, now).first<{ email: string; password_hash: string }>();
  if (pending) {
    const check = await verifyPassword(password, pending.password_hash, passwordIterations(env));
    if (!check.ok) return { ok: false, reason: 'wrong_password' };
    return createAccount(env, tokenHash, pending.email, now, origin);
  }
  const link = await openLink(env.DB, token, 'verify', now);
  if (!link) return { ok: false, reason: 'gone' };
  const used = await useLink(
    env.DB,
    link,
    'verify',
    (claim) => [env.DB.prepare(SQL.verify).bind(link.memberId, claim)],
    origin(link.memberId),
    'member.email_verified',
    now,
  );
  if (!used) return { ok: false, reason: 'gone' };
  return { ok: true, accountId: link.accountId, memberId: link.memberId };
}

async function createAccount(
  env: Env,
  tokenHash: string,
  email: string,
  now: number,
  origin: (memberId: string) => AuditOrigin,
): Promise<VerifyOutcome> {
  const db = env.DB;
  const accountId = newAccountId();
  const memberId = ownerMemberId(accountId);
  const claim = randomToken();
  try {
    // The accounts_owner trigger makes the owner member, verified (the default): the link proved the address.
    const [claimed] = await batchWithAudit(
      db,
      [
        db.prepare(SQL.claim).bind(claim, tokenHash, now),
        db.prepare(SQL.account).bind(accountId, now, claim),
        db.prepare(SQL.drop).bind(claim),
      ],
      origin(memberId),
      { accountId, action: 'member.email_verified', target: memberId, details: { email } },
      now,
      { sql: 'EXISTS (SELECT 1 FROM accounts WHERE id = ?)', params: [accountId] },
    );
    if (claimed?.meta.changes !== 1) return { ok: false, reason: 'gone' };
  } catch (err) {
    // The address became a member's since (an invitation, SSO, another sign-up's link): the batch rolled
    // back whole, and this sign-up can never be used.
    if (!String(err).includes('UNIQUE')) throw err;
    await db.prepare(SQL.forget).bind(tokenHash).run();
    return { ok: false, reason: 'gone' };
  }
  return { ok: true, accountId, memberId };
}
