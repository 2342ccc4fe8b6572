// Mailed single-use links (confirm an address, reset a password): a random token in the link, its SHA-256 in
// D1 (email_tokens, migration 0010), an expiry, and a claim that lets exactly one request use it. And the
// one way account mail is sent: within the per-address budget, with links on PUBLIC_URL.
import { sha256Hex } from '../accounts/keys.ts';
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import type { Env } from '../env.ts';
import { publicOrigin } from '../mail/config.ts';
import { send, type Mail, type SendOutcome } from '../mail/send.ts';
import { EMAIL_TOKEN_BYTES, MAIL_PER_ADDRESS } from './limits.ts';
import { randomToken } from './sessions.ts';
import { buckets, hit } from './throttle.ts';

export type LinkPurpose = 'verify' | 'reset';

/** What a mailed link's token looks like (EMAIL_TOKEN_BYTES, base64url): anything else is refused unread. */
export const LINK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Where each purpose's link points. */
export const LINK_PATHS: Record<LinkPurpose, string> = { verify: '/verify-email', reset: '/reset-password' };

const SQL = {
  insert: 'INSERT INTO email_tokens (token_hash, member_id, purpose, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
  // Links a day past their expiry are dead weight; cleared whenever a new one is made.
  prune: 'DELETE FROM email_tokens WHERE expires_at < ?',
  open:
    'SELECT t.member_id, m.account_id, m.email FROM email_tokens t JOIN members m ON m.id = t.member_id ' +
    'WHERE t.token_hash = ? AND t.purpose = ? AND t.claim IS NULL AND t.expires_at > ?',
  claim:
    'UPDATE email_tokens SET claim = ?1 WHERE token_hash = ?2 AND purpose = ?3 AND claim IS NULL AND expires_at > ?4',
  /** The claimed link's siblings (older links of the same purpose) die with it. */
  siblings:
    'DELETE FROM email_tokens WHERE member_id = ?1 AND purpose = ?2 AND claim IS NULL AND EXISTS (SELECT 1 FROM email_tokens WHERE claim = ?3)',
} as const;

/** The condition, in SQL over one parameter (the claim), under which a claim's changes apply. */
export const CLAIMED = 'EXISTS (SELECT 1 FROM email_tokens WHERE claim = ?)';

export interface NewLink {
  token: string;
  statements: D1PreparedStatement[];
}

/** A new link's token, and the statements that store it (run them in the batch that needs the link). */
export async function newLink(
  db: D1Database,
  memberId: string,
  purpose: LinkPurpose,
  ttlMs: number,
  now: number,
): Promise<NewLink> {
  const token = randomToken(EMAIL_TOKEN_BYTES);
  return {
    token,
    statements: [
      db.prepare(SQL.prune).bind(now - 86_400_000),
      db.prepare(SQL.insert).bind(await sha256Hex(token), memberId, purpose, now, now + ttlMs),
    ],
  };
}

export interface OpenLink {
  tokenHash: string;
  memberId: string;
  accountId: string;
  email: string;
}

/** The member a link names, while it is unused and unexpired; null for anything else (all answer 410). */
export async function openLink(
  db: D1Database,
  token: string,
  purpose: LinkPurpose,
  now: number,
): Promise<OpenLink | null> {
  if (!LINK_TOKEN_PATTERN.test(token)) return null;
  const tokenHash = await sha256Hex(token);
  const row = await db
    .prepare(SQL.open)
    .bind(tokenHash, purpose, now)
    .first<{ member_id: string; account_id: string; email: string }>();
  return row ? { tokenHash, memberId: row.member_id, accountId: row.account_id, email: row.email } : null;
}

/**
 * Uses a link once: in one D1 batch with its audit record, the claim, the siblings' removal, then the
 * caller's `effects`, each conditioned on CLAIMED with the claim it is given. True when this request won
 * the claim (a concurrent use of the same link gets false and changes nothing).
 */
export async function useLink(
  db: D1Database,
  link: OpenLink,
  purpose: LinkPurpose,
  effects: (claim: string) => D1PreparedStatement[],
  origin: AuditOrigin,
  action: 'member.email_verified' | 'member.password_reset',
  now: number,
): Promise<boolean> {
  const claim = randomToken();
  const [claimed] = await batchWithAudit(
    db,
    [
      db.prepare(SQL.claim).bind(claim, link.tokenHash, purpose, now),
      db.prepare(SQL.siblings).bind(link.memberId, purpose, claim),
      ...effects(claim),
    ],
    origin,
    { accountId: link.accountId, action, target: link.memberId, details: { email: link.email } },
    now,
    { sql: CLAIMED, params: [claim] },
  );
  return claimed?.meta.changes === 1;
}

/** An absolute link on the service's public URL, or null when PUBLIC_URL is not set (mail is off). */
function publicLink(env: Env, path: string, token?: string): string | null {
  const origin = publicOrigin(env.PUBLIC_URL);
  if (origin === null) return null;
  return token === undefined ? `${origin}${path}` : `${origin}${path}?token=${token}`;
}

/**
 * Sends the mail `compose` makes around a link to `path` (with `token`, when the link carries one) on
 * PUBLIC_URL; without PUBLIC_URL mail is off: logged, and not sent.
 */
export async function sendLinkMail(
  env: Env,
  path: string,
  token: string | undefined,
  compose: (url: string) => Mail,
  now: number,
): Promise<SendOutcome> {
  const url = publicLink(env, path, token);
  if (url === null) {
    console.error('mail_not_sent reason=not_configured problem="PUBLIC_URL is not an http(s) URL"');
    return { ok: false, reason: 'not_configured' };
  }
  return sendAccountMail(env, compose(url), now);
}

/**
 * Sends an account mail unless the address had MAIL_PER_ADDRESS's max of them this window (then nothing is
 * sent, and the caller answers as if it were: the budget must not tell strangers anything).
 */
async function sendAccountMail(env: Env, mail: Mail, now: number): Promise<SendOutcome> {
  const budget = await hit(env.DB, [{ bucket: buckets.mailTo(mail.to), ...MAIL_PER_ADDRESS }], now);
  if (!budget.allowed) {
    console.warn('mail_not_sent reason=address_budget');
    return { ok: true };
  }
  return send(env, mail, new Date(now));
}
