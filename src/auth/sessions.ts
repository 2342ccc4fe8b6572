// Console sessions in D1. The browser holds a random token in a cookie; D1 holds only its SHA-256, so a
// leaked database cannot be replayed as sessions. Each session has its own CSRF token.
import { sha256Hex } from '../accounts/keys.ts';
import type { AccountRow } from '../accounts/records.ts';
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import type { Role } from '../teams/roles.ts';
import { SESSION_IDLE_MS, SESSION_MAX_MS, SESSION_RENEW_AFTER_MS } from './limits.ts';

const TOKEN_BYTES = 32;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function randomToken(bytes = TOKEN_BYTES): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** The person signed in: a member of the account, with their role. */
export interface SessionMember {
  id: string;
  email: string;
  name: string;
  role: Role;
  /** Whether they confirmed their address (a sign-up's mailed link); unconfirmed, the console refuses them. */
  emailVerified: boolean;
}

export interface Session {
  tokenHash: string;
  member: SessionMember;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
  account: AccountRow;
}

export interface NewSession {
  token: string;
  csrfToken: string;
  expiresAt: number;
}

const SQL = {
  insert:
    'INSERT INTO sessions (token_hash, account_id, csrf_token, created_at, expires_at, member_id) VALUES (?, ?, ?, ?, ?, ?)',
  // A removed member's sessions find no member row: they end at once (removal also deletes them).
  find:
    'SELECT s.token_hash, s.csrf_token, s.created_at, s.expires_at, a.id, a.email, a.name, a.image_tier, a.tools_tier, ' +
    'a.created_at AS account_created_at, m.id AS member_id, m.email AS member_email, m.name AS member_name, m.role AS member_role, m.email_verified AS member_email_verified ' +
    'FROM sessions s JOIN accounts a ON a.id = s.account_id JOIN members m ON m.id = s.member_id AND m.account_id = s.account_id ' +
    'WHERE s.token_hash = ? AND s.expires_at > ?',
  renew: 'UPDATE sessions SET expires_at = ? WHERE token_hash = ?',
  delete: 'DELETE FROM sessions WHERE token_hash = ?',
  prune: 'DELETE FROM sessions WHERE expires_at <= ?',
} as const;

interface SessionRow {
  token_hash: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
  id: string;
  email: string;
  name: string;
  image_tier: AccountRow['image_tier'];
  tools_tier: AccountRow['tools_tier'];
  account_created_at: number;
  member_id: string;
  member_email: string;
  member_name: string;
  member_role: Role;
  member_email_verified: number;
}

/** A new session, with its session.signed_in audit record (`method`: password, sso) in the same batch. */
export async function createSession(
  db: D1Database,
  who: { accountId: string; memberId: string },
  now: number,
  origin: AuditOrigin,
  method: 'password' | 'sso' = 'password',
): Promise<NewSession> {
  const { accountId, memberId } = who;
  const token = randomToken();
  const csrfToken = randomToken();
  const expiresAt = now + SESSION_IDLE_MS;
  // Expired sessions of everyone are cleared here, at sign-in, rather than by a scheduled job.
  await batchWithAudit(
    db,
    [
      db.prepare(SQL.prune).bind(now),
      db.prepare(SQL.insert).bind(await sha256Hex(token), accountId, csrfToken, now, expiresAt, memberId),
    ],
    origin,
    { accountId, action: 'session.signed_in', target: memberId, details: { method } },
    now,
  );
  return { token, csrfToken, expiresAt };
}

export async function findSession(db: D1Database, token: string | undefined, now: number): Promise<Session | null> {
  // Junk never reaches D1.
  if (token === undefined || !TOKEN_PATTERN.test(token)) return null;
  const row = await db
    .prepare(SQL.find)
    .bind(await sha256Hex(token), now)
    .first<SessionRow>();
  if (!row) return null;
  return {
    tokenHash: row.token_hash,
    csrfToken: row.csrf_token,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    member: {
      id: row.member_id,
      email: row.member_email,
      name: row.member_name,
      role: row.member_role,
      emailVerified: row.member_email_verified === 1,
    },
    account: {
      id: row.id,
      email: row.email,
      name: row.name,
      image_tier: row.image_tier,
      tools_tier: row.tools_tier,
      created_at: row.account_created_at,
    },
  };
}

/**
 * Slides the idle expiry forward when the session is in use, capped at SESSION_MAX_MS after sign-in.
 * Returns the new expiry when it moved (the cookie must be re-sent with it), else null.
 */
export async function renewSession(db: D1Database, session: Session, now: number): Promise<number | null> {
  const next = Math.min(now + SESSION_IDLE_MS, session.createdAt + SESSION_MAX_MS);
  if (next - session.expiresAt < SESSION_RENEW_AFTER_MS) return null;
  await db.prepare(SQL.renew).bind(next, session.tokenHash).run();
  session.expiresAt = next;
  return next;
}

export async function deleteSession(db: D1Database, token: string | undefined): Promise<void> {
  if (token === undefined || !TOKEN_PATTERN.test(token)) return;
  await db
    .prepare(SQL.delete)
    .bind(await sha256Hex(token))
    .run();
}
