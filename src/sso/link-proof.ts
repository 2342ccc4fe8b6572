// Linking an existing member to an SSO identity. The issuer's word is only the word of whoever configured
// the issuer (an admin, a manage key), so an SSO sign-in that finds an existing member whose identity at
// the issuer is not yet known does not sign them in: it stores the issuer's subject here (migration 0011)
// and asks the person for the member's password, or for a single-use link mailed to the member's address.
// Only that proof stores the subject (member.sso_linked); from then on the issuer signs the member in.
// The browser that signed in with SSO holds the proof's token (a cookie), and the mailed link works only
// together with it: a member who is mailed a link they did not ask for cannot be made to link an identity
// someone else started, whatever they click.
import { sha256Hex } from '../accounts/keys.ts';
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import { checkPassword, settlePassword } from '../auth/accounts.ts';
import { sendLinkMail } from '../auth/email-links.ts';
import { EMAIL_TOKEN_BYTES } from '../auth/limits.ts';
import { passwordIterations } from '../auth/password.ts';
import { randomToken } from '../auth/sessions.ts';
import type { Env } from '../env.ts';
import { ssoLinkMail } from '../mail/messages.ts';
import { SSO_LINK_PROOF_TTL_MS } from './limits.ts';

/** Where the mailed link points. */
export const SSO_LINK_CONFIRM_PATH = '/sso/link/confirm';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const SQL = {
  prune: 'DELETE FROM sso_link_proofs WHERE expires_at < ?',
  insert:
    'INSERT INTO sso_link_proofs (token_hash, member_id, account_id, subject, next, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  open:
    'SELECT p.member_id, p.account_id, p.next, p.mail_token_hash, m.email, m.password_hash IS NOT NULL AS has_password, c.issuer ' +
    'FROM sso_link_proofs p JOIN members m ON m.id = p.member_id AND m.account_id = p.account_id LEFT JOIN sso_configs c ON c.account_id = p.account_id ' +
    'WHERE p.token_hash = ? AND p.expires_at > ?',
  mailed: 'SELECT 1 AS found FROM sso_link_proofs WHERE mail_token_hash = ? AND expires_at > ?',
  setMail: 'UPDATE sso_link_proofs SET mail_token_hash = ? WHERE token_hash = ? AND expires_at > ?',
  // Single use: the row goes with the request that links, whatever follows.
  take: 'DELETE FROM sso_link_proofs WHERE token_hash = ? AND expires_at > ? RETURNING member_id, account_id, subject, next',
  takeMailed:
    'DELETE FROM sso_link_proofs WHERE token_hash = ? AND mail_token_hash = ? AND expires_at > ? RETURNING member_id, account_id, subject, next',
  link: 'UPDATE members SET sso_subject = ?1, email_verified = 1 WHERE id = ?2 AND account_id = ?3 AND sso_subject IS NULL',
  linked: 'EXISTS (SELECT 1 FROM members WHERE id = ? AND sso_subject = ?)',
} as const;

export interface LinkRequest {
  memberId: string;
  accountId: string;
  subject: string;
  next: string | null;
}

/** Stores the sign-in that waits for the member's proof; the token is the browser's (a cookie). */
export async function beginLinkProof(db: D1Database, who: LinkRequest, now: number): Promise<string> {
  const token = randomToken();
  await db.batch([
    db.prepare(SQL.prune).bind(now),
    db
      .prepare(SQL.insert)
      .bind(
        await sha256Hex(token),
        who.memberId,
        who.accountId,
        who.subject,
        who.next,
        now,
        now + SSO_LINK_PROOF_TTL_MS,
      ),
  ]);
  return token;
}

export interface PendingLink {
  accountId: string;
  email: string;
  /** Whether the member has a password to prove with (else only the mailed link). */
  hasPassword: boolean;
  issuer: string | null;
  /** Whether a link was mailed for this proof. */
  mailed: boolean;
}

/** The proof a browser's token names, while it can still be given; null otherwise. */
export async function openLinkProof(
  db: D1Database,
  token: string | undefined,
  now: number,
): Promise<PendingLink | null> {
  if (!token || !TOKEN_PATTERN.test(token)) return null;
  const row = await db
    .prepare(SQL.open)
    .bind(await sha256Hex(token), now)
    .first<{
      account_id: string;
      email: string;
      has_password: number;
      issuer: string | null;
      mail_token_hash: string | null;
    }>();
  if (!row) return null;
  return {
    accountId: row.account_id,
    email: row.email,
    hasPassword: row.has_password === 1,
    issuer: row.issuer,
    mailed: row.mail_token_hash !== null,
  };
}

/** Whether a mailed link is still good (its page then asks for a click, in the browser that started it). */
export async function mailedLinkOpen(db: D1Database, mailToken: string, now: number): Promise<boolean> {
  if (!TOKEN_PATTERN.test(mailToken)) return false;
  return (
    (await db
      .prepare(SQL.mailed)
      .bind(await sha256Hex(mailToken), now)
      .first()) !== null
  );
}

export type LinkOutcome =
  | { ok: true; accountId: string; memberId: string; next: string | null }
  | { ok: false; reason: 'gone' }
  /** The password is wrong; the member's account, for its audit log. */
  | { ok: false; reason: 'invalid_credentials'; accountId: string }
  | { ok: false; reason: 'throttled'; retryAfter: number };

/** Stores the subject: the proof is used up, and member.sso_linked written with the change. */
async function link(
  db: D1Database,
  taken: { member_id: string; account_id: string; subject: string; next: string | null } | null,
  method: 'password' | 'mail',
  now: number,
  origin: (memberId: string) => AuditOrigin,
): Promise<LinkOutcome> {
  if (!taken) return { ok: false, reason: 'gone' };
  const [changed] = await batchWithAudit(
    db,
    [db.prepare(SQL.link).bind(taken.subject, taken.member_id, taken.account_id)],
    origin(taken.member_id),
    { accountId: taken.account_id, action: 'member.sso_linked', target: taken.member_id, details: { method } },
    now,
    { sql: SQL.linked, params: [taken.member_id, taken.subject] },
  );
  // Linked meanwhile (to this identity by another proof, or to another): this proof changes nothing.
  if (changed?.meta.changes !== 1) return { ok: false, reason: 'gone' };
  return { ok: true, accountId: taken.account_id, memberId: taken.member_id, next: taken.next };
}

/** The member's password, behind sign-in's throttles; right, the proof is used and the member linked. */
export async function proveWithPassword(
  env: Env,
  token: string | undefined,
  password: string,
  ip: string,
  now: number,
  origin: (memberId: string) => AuditOrigin,
): Promise<LinkOutcome> {
  const pending = await openLinkProof(env.DB, token, now);
  if (!pending || !token) return { ok: false, reason: 'gone' };
  const iterations = passwordIterations(env);
  const checked = await checkPassword(env.DB, pending.email, password, ip, now, iterations);
  if (!checked.ok) {
    if (checked.reason === 'throttled') return checked;
    return { ok: false, reason: 'invalid_credentials', accountId: pending.accountId };
  }
  await settlePassword(env.DB, pending.email, password, ip, checked, iterations);
  const taken = await env.DB.prepare(SQL.take)
    .bind(await sha256Hex(token), now)
    .first<{ member_id: string; account_id: string; subject: string; next: string | null }>();
  return link(env.DB, taken, 'password', now, origin);
}

export type MailOutcome = { ok: true; email: string; sent: boolean } | { ok: false; reason: 'gone' };

/** Mails the member a link (a new one replaces the last) that completes the proof in this browser. */
export async function mailLinkProof(env: Env, token: string | undefined, now: number): Promise<MailOutcome> {
  const pending = await openLinkProof(env.DB, token, now);
  if (!pending || !token) return { ok: false, reason: 'gone' };
  const mailToken = randomToken(EMAIL_TOKEN_BYTES);
  await env.DB.prepare(SQL.setMail)
    .bind(await sha256Hex(mailToken), await sha256Hex(token), now)
    .run();
  const minutes = SSO_LINK_PROOF_TTL_MS / 60_000;
  const sent = await sendLinkMail(
    env,
    SSO_LINK_CONFIRM_PATH,
    mailToken,
    (url) => ssoLinkMail(pending.email, url, pending.issuer ?? 'your identity provider', minutes),
    now,
  );
  return { ok: true, email: pending.email, sent: sent.ok };
}

/** The mailed link, used in the browser that holds the proof's token: the member is linked. */
export async function proveWithMail(
  db: D1Database,
  token: string | undefined,
  mailToken: string,
  now: number,
  origin: (memberId: string) => AuditOrigin,
): Promise<LinkOutcome> {
  if (!token || !TOKEN_PATTERN.test(token) || !TOKEN_PATTERN.test(mailToken)) return { ok: false, reason: 'gone' };
  const taken = await db
    .prepare(SQL.takeMailed)
    .bind(await sha256Hex(token), await sha256Hex(mailToken), now)
    .first<{ member_id: string; account_id: string; subject: string; next: string | null }>();
  return link(db, taken, 'mail', now, origin);
}
