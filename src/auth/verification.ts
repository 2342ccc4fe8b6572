// Email verification: a sign-up's member is unverified until they open the mailed link, which verifies the
// address and signs them in. Unverified members cannot sign in; they may ask for the link again.
import type { AuditOrigin } from '../audit/log.ts';
import type { Env } from '../env.ts';
import type { SendOutcome } from '../mail/send.ts';
import { verificationMail } from '../mail/messages.ts';
import { CLAIMED, LINK_PATHS, newLink, openLink, sendLinkMail, useLink } from './email-links.ts';
import { VERIFY_LINK_TTL_MS } from './limits.ts';

const SQL = {
  unverified: 'SELECT id FROM members WHERE email = ? COLLATE NOCASE AND email_verified = 0',
  verify: `UPDATE members SET email_verified = 1 WHERE id = ? AND ${CLAIMED}`,
} as const;

/** Mails a confirmation link to `email` (statements: the new link's, run before the mail is sent). */
export async function mailVerificationLink(
  env: Env,
  memberId: string,
  email: string,
  now: number,
  before: D1PreparedStatement[] = [],
): Promise<SendOutcome> {
  const link = await newLink(env.DB, memberId, 'verify', VERIFY_LINK_TTL_MS, now);
  await env.DB.batch([...before, ...link.statements]);
  const hours = VERIFY_LINK_TTL_MS / 3_600_000;
  return sendLinkMail(env, LINK_PATHS.verify, link.token, (url) => verificationMail(email, url, hours), now);
}

/**
 * "Send the link again": a new link when the email is an unverified member's; nothing otherwise. The caller
 * answers the same either way, and runs this after answering, so neither words nor time tell them apart.
 */
export async function resendVerification(env: Env, email: string, now: number): Promise<void> {
  const member = await env.DB.prepare(SQL.unverified).bind(email).first<{ id: string }>();
  if (member) await mailVerificationLink(env, member.id, email, now);
}

export type VerifyOutcome = { ok: true; accountId: string; memberId: string } | { ok: false; reason: 'gone' };

/** Uses a confirmation link: verifies the member (member.email_verified) once; a used or expired link is gone. */
export async function verifyEmail(
  env: Env,
  token: string,
  now: number,
  origin: (memberId: string) => AuditOrigin,
): Promise<VerifyOutcome> {
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
