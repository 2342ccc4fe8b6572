// Password reset by a mailed link: "forgot password" mails a link (1 h, single use) to a member's address;
// the link's page takes a new password, which ends every session of the member, verifies the address (the
// link proved it) and clears the per-email sign-in delay.
import type { AuditOrigin } from '../audit/log.ts';
import type { Env } from '../env.ts';
import { resetMail } from '../mail/messages.ts';
import { CLAIMED, LINK_PATHS, newLink, openLink, sendLinkMail, useLink, type OpenLink } from './email-links.ts';
import { RESET_LINK_TTL_MS } from './limits.ts';
import { hashPassword, passwordIterations } from './password.ts';
import { clearEmail } from './throttle.ts';

const SQL = {
  member: 'SELECT id, email FROM members WHERE email = ? COLLATE NOCASE',
  setPassword: `UPDATE members SET password_hash = ?, email_verified = 1 WHERE id = ? AND ${CLAIMED}`,
  endSessions: `DELETE FROM sessions WHERE member_id = ? AND ${CLAIMED}`,
} as const;

/**
 * Mails a reset link when the email is a member's; nothing otherwise. The caller answers the same either
 * way and runs this after answering, so neither its words nor its time tell whether the email has an account.
 */
export async function requestReset(env: Env, email: string, now: number): Promise<void> {
  const member = await env.DB.prepare(SQL.member).bind(email).first<{ id: string; email: string }>();
  if (!member) return;
  const link = await newLink(env.DB, member.id, 'reset', RESET_LINK_TTL_MS, now);
  await env.DB.batch(link.statements);
  const minutes = RESET_LINK_TTL_MS / 60_000;
  await sendLinkMail(env, LINK_PATHS.reset, link.token, (url) => resetMail(member.email, url, minutes), now);
}

/** The reset a link names, while it can still be used. */
export const openReset = (db: D1Database, token: string, now: number): Promise<OpenLink | null> =>
  openLink(db, token, 'reset', now);

export type ResetOutcome = { ok: true; email: string } | { ok: false; reason: 'gone' };

/** Sets the new password with the link (once), ends the member's sessions, writes member.password_reset. */
export async function resetPassword(
  env: Env,
  token: string,
  password: string,
  now: number,
  origin: (memberId: string) => AuditOrigin,
): Promise<ResetOutcome> {
  const link = await openReset(env.DB, token, now);
  if (!link) return { ok: false, reason: 'gone' };
  const hash = await hashPassword(password, passwordIterations(env));
  const used = await useLink(
    env.DB,
    link,
    'reset',
    (claim) => [
      env.DB.prepare(SQL.setPassword).bind(hash, link.memberId, claim),
      env.DB.prepare(SQL.endSessions).bind(link.memberId, claim),
    ],
    origin(link.memberId),
    'member.password_reset',
    now,
  );
  if (!used) return { ok: false, reason: 'gone' };
  // The mailed link proved the address as well as a password would: the guesses counted against it go.
  await clearEmail(env.DB, link.email);
  return { ok: true, email: link.email };
}
