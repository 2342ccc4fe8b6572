// An account's members: list, invite (a single-use link), accept, change a role, remove. Each change is
// written with its audit record in one D1 batch. The last owner can neither leave nor be demoted: the
// condition is in the changing statement itself, so two concurrent demotions cannot both pass it. A
// member's manage keys go in the batch that removes them or demotes them below the roles that make such
// keys: a key never holds more than its maker may.
import { randomBase62, sha256Hex } from '../accounts/keys.ts';
import { iso } from '../accounts/account-view.ts';
import { batchWithAudit, type AuditCondition, type AuditOrigin } from '../audit/log.ts';
import { isName, isNewPassword } from '../auth/credentials.ts';
import { hashPassword } from '../auth/password.ts';
import { randomToken } from '../auth/sessions.ts';
import { SQL as SHARED_SQL } from '../db/statements.ts';
import { activeManageKeysOf, makersKeysRevoked, settleMakersKeys } from '../keys/service.ts';
import type { Env } from '../env.ts';
import { INVITATION_TOKEN_BYTES, INVITATION_TTL_MS, MAX_MEMBERS_PER_ACCOUNT } from './limits.ts';
import { MANAGE_KEY_MAKERS, type Role } from './roles.ts';

export interface MemberView {
  id: string;
  email: string;
  name: string;
  role: Role;
  /** How the member signs in: a password, SSO, or both. */
  sign_in: ('password' | 'sso')[];
  created_at: string;
}

export interface InvitationView {
  id: string;
  email: string;
  role: Role;
  created_at: string;
  expires_at: string;
}

interface MemberRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  has_password: number;
  has_sso: number;
  created_at: number;
}

const MEMBER_COLUMNS =
  'id, email, name, role, password_hash IS NOT NULL AS has_password, sso_subject IS NOT NULL AS has_sso, created_at';
/** Owners of account ?, for the last-owner rule. */
const OWNERS = "(SELECT COUNT(*) FROM members WHERE account_id = ? AND role = 'owner')";
const SQL = {
  list: `SELECT ${MEMBER_COLUMNS} FROM members WHERE account_id = ? ORDER BY created_at, id`,
  one: `SELECT ${MEMBER_COLUMNS} FROM members WHERE id = ? AND account_id = ?`,
  pending:
    'SELECT id, email, role, created_at, expires_at FROM invitations WHERE account_id = ? AND member_id IS NULL AND expires_at > ? ORDER BY created_at',
  emailTaken:
    'SELECT (SELECT COUNT(*) FROM members WHERE email = ?1 COLLATE NOCASE) + ' +
    '(SELECT COUNT(*) FROM invitations WHERE account_id = ?2 AND email = ?1 COLLATE NOCASE AND member_id IS NULL AND expires_at > ?3) AS n',
  // Capped in the inserting statement: members plus pending invitations.
  invite:
    'INSERT INTO invitations (id, account_id, email, role, token_hash, created_by, created_at, expires_at) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 ' +
    'WHERE (SELECT COUNT(*) FROM members WHERE account_id = ?2) + ' +
    '(SELECT COUNT(*) FROM invitations WHERE account_id = ?2 AND member_id IS NULL AND expires_at > ?7) < ?9',
  invitationByToken:
    'SELECT i.id, i.account_id, a.name AS account_name, i.email, i.role, i.expires_at, i.member_id FROM invitations i ' +
    'JOIN accounts a ON a.id = i.account_id WHERE i.token_hash = ?',
  // The one acceptance that wins stamps its member id; the member is inserted only under that stamp.
  claim:
    'UPDATE invitations SET accepted_at = ?1, member_id = ?2 WHERE token_hash = ?3 AND member_id IS NULL AND expires_at > ?1',
  join:
    'INSERT INTO members (id, account_id, email, name, role, password_hash, created_at) ' +
    'SELECT ?1, account_id, email, ?2, role, ?3, ?4 FROM invitations WHERE token_hash = ?5 AND member_id = ?1',
  setRole: `UPDATE members SET role = ? WHERE id = ? AND account_id = ? AND NOT (role = 'owner' AND ? <> 'owner' AND ${OWNERS} <= 1)`,
  remove: `DELETE FROM members WHERE id = ? AND account_id = ? AND NOT (role = 'owner' AND ${OWNERS} <= 1)`,
  // First (sessions reference the member), and only when the removal below will pass the same rule.
  endSessions:
    `DELETE FROM sessions WHERE member_id = ?1 AND account_id = ?2 AND EXISTS ` +
    `(SELECT 1 FROM members WHERE id = ?1 AND account_id = ?2 AND NOT (role = 'owner' AND (SELECT COUNT(*) FROM members WHERE account_id = ?2 AND role = 'owner') <= 1))`,
} as const;

function view(row: MemberRow): MemberView {
  const signIn: ('password' | 'sso')[] = [];
  if (row.has_password) signIn.push('password');
  if (row.has_sso) signIn.push('sso');
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    sign_in: signIn,
    created_at: iso(row.created_at) as string,
  };
}

export async function listMembers(db: D1Database, accountId: string): Promise<MemberView[]> {
  return (await db.prepare(SQL.list).bind(accountId).all<MemberRow>()).results.map(view);
}

export async function getMember(db: D1Database, accountId: string, id: string): Promise<MemberView | null> {
  const row = await db.prepare(SQL.one).bind(id, accountId).first<MemberRow>();
  return row ? view(row) : null;
}

export async function pendingInvitations(db: D1Database, accountId: string, now: number): Promise<InvitationView[]> {
  const rows = await db
    .prepare(SQL.pending)
    .bind(accountId, now)
    .all<{ id: string; email: string; role: Role; created_at: number; expires_at: number }>();
  return rows.results.map((r) => ({
    ...r,
    created_at: iso(r.created_at) as string,
    expires_at: iso(r.expires_at) as string,
  }));
}

export type InviteOutcome =
  | { ok: true; invitation: InvitationView; token: string }
  /** Only an owner may invite an owner. */
  | { ok: false; reason: 'owner_only' }
  | { ok: false; reason: 'email_taken' }
  | { ok: false; reason: 'too_many'; max: number };

/**
 * Makes an invitation; its token is in this answer only, for the mail to the person invited (never for the
 * inviter, who could accept it themself: the link proves the mailbox), its hash in D1.
 */
export async function invite(
  db: D1Database,
  accountId: string,
  input: { email: string; role: Role },
  by: Role,
  now: number,
  origin: AuditOrigin,
): Promise<InviteOutcome> {
  if (input.role === 'owner' && by !== 'owner') return { ok: false, reason: 'owner_only' };
  const taken = await db.prepare(SQL.emailTaken).bind(input.email, accountId, now).first<{ n: number }>();
  if ((taken?.n ?? 0) > 0) return { ok: false, reason: 'email_taken' };
  const id = `inv_${randomBase62(16)}`;
  const token = randomToken(INVITATION_TOKEN_BYTES);
  const expiresAt = now + INVITATION_TTL_MS;
  const [result] = await batchWithAudit(
    db,
    [
      db
        .prepare(SQL.invite)
        .bind(
          id,
          accountId,
          input.email,
          input.role,
          await sha256Hex(token),
          origin.actor.id,
          now,
          expiresAt,
          MAX_MEMBERS_PER_ACCOUNT,
        ),
    ],
    origin,
    { accountId, action: 'member.invited', target: id, details: { email: input.email, role: input.role } },
    now,
    {
      sql: 'EXISTS (SELECT 1 FROM invitations WHERE id = ?)',
      params: [id],
    },
  );
  if (result?.meta.changes !== 1) return { ok: false, reason: 'too_many', max: MAX_MEMBERS_PER_ACCOUNT };
  return {
    ok: true,
    token,
    invitation: {
      id,
      email: input.email,
      role: input.role,
      created_at: iso(now) as string,
      expires_at: iso(expiresAt) as string,
    },
  };
}

export type RenewOutcome = { ok: true; invitation: InvitationView; token: string } | { ok: false; reason: 'not_found' };

/**
 * A pending invitation's new link ("send again"): a new token, whose hash replaces the old one (that link
 * stops working), with member.invitation_renewed. Its token is for the invited mailbox only, as invite's.
 */
export async function renewInvitation(
  db: D1Database,
  accountId: string,
  id: string,
  now: number,
  origin: AuditOrigin,
): Promise<RenewOutcome> {
  const row = await db
    .prepare(SHARED_SQL.pendingInvitation)
    .bind(id, now)
    .first<{ id: string; account_id: string; email: string; role: Role; created_at: number; expires_at: number }>();
  if (!row || row.account_id !== accountId) return { ok: false, reason: 'not_found' };
  const token = randomToken(INVITATION_TOKEN_BYTES);
  const hash = await sha256Hex(token);
  const [renewed] = await batchWithAudit(
    db,
    [db.prepare(SHARED_SQL.renewInvitation).bind(hash, id, now)],
    origin,
    { accountId, action: 'member.invitation_renewed', target: id, details: { email: row.email, delivery: 'mail' } },
    now,
    { sql: 'EXISTS (SELECT 1 FROM invitations WHERE id = ? AND token_hash = ?)', params: [id, hash] },
  );
  if (renewed?.meta.changes !== 1) return { ok: false, reason: 'not_found' };
  const invitation: InvitationView = {
    id,
    email: row.email,
    role: row.role,
    created_at: iso(row.created_at) as string,
    expires_at: iso(row.expires_at) as string,
  };
  return { ok: true, invitation, token };
}

export interface OpenInvitation {
  id: string;
  accountId: string;
  /** The name of the account it is a seat in, for the page that offers it. */
  accountName: string;
  email: string;
  role: Role;
}

/** The invitation a token names, if it can still be accepted. */
export async function openInvitation(db: D1Database, token: string, now: number): Promise<OpenInvitation | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const row = await db
    .prepare(SQL.invitationByToken)
    .bind(await sha256Hex(token))
    .first<{
      id: string;
      account_id: string;
      account_name: string;
      email: string;
      role: Role;
      expires_at: number;
      member_id: string | null;
    }>();
  if (!row || row.member_id !== null || row.expires_at <= now) return null;
  return { id: row.id, accountId: row.account_id, accountName: row.account_name, email: row.email, role: row.role };
}

export type AcceptOutcome =
  | { ok: true; accountId: string; memberId: string }
  | { ok: false; reason: 'gone' | 'email_taken' };

export type JoinOutcome = AcceptOutcome | { ok: false; reason: 'name' | 'password' };

/** Accepts an invitation with a name and a password (isName, isNewPassword: the first out of bounds is the answer). */
export async function join(
  db: D1Database,
  token: string,
  input: { name: string; password: string },
  now: number,
  origin: (memberId: string) => AuditOrigin,
  /** PBKDF2 iterations of the new password's hash (passwordIterations). */
  iterations: number,
): Promise<JoinOutcome> {
  const name = input.name.trim();
  if (!isName(name)) return { ok: false, reason: 'name' };
  if (!isNewPassword(input.password)) return { ok: false, reason: 'password' };
  return accept(db, token, { name, passwordHash: await hashPassword(input.password, iterations) }, now, origin);
}

/**
 * Accepts an invitation: one batch claims it (single use), inserts the member, writes member.joined.
 * passwordHash is null for a member who will sign in by SSO.
 */
export async function accept(
  db: D1Database,
  token: string,
  input: { name: string; passwordHash: string | null },
  now: number,
  origin: (memberId: string) => AuditOrigin,
): Promise<AcceptOutcome> {
  const open = await openInvitation(db, token, now);
  if (!open) return { ok: false, reason: 'gone' };
  const memberId = `mem_${randomBase62(16)}`;
  const tokenHash = await sha256Hex(token);
  try {
    const [claimed] = await batchWithAudit(
      db,
      [
        db.prepare(SQL.claim).bind(now, memberId, tokenHash),
        db.prepare(SQL.join).bind(memberId, input.name, input.passwordHash, now, tokenHash),
      ],
      origin(memberId),
      {
        accountId: open.accountId,
        action: 'member.joined',
        target: memberId,
        details: { email: open.email, role: open.role, invitation: open.id },
      },
      now,
      {
        sql: 'EXISTS (SELECT 1 FROM members WHERE id = ?)',
        params: [memberId],
      },
    );
    if (claimed?.meta.changes !== 1) return { ok: false, reason: 'gone' };
  } catch (err) {
    // The email became a member elsewhere since the invitation was made: the batch rolled back whole.
    if (String(err).includes('members.email')) return { ok: false, reason: 'email_taken' };
    throw err;
  }
  return { ok: true, accountId: open.accountId, memberId };
}

export type ChangeOutcome =
  | { ok: true; member: MemberView }
  | { ok: false; reason: 'not_found' | 'last_owner' | 'owner_only' };

/** Only owners make owners or change an owner's role; an admin manages the other roles. */
const touchesOwner = (actorRole: Role, target: MemberView, role?: Role): boolean =>
  actorRole !== 'owner' && (target.role === 'owner' || role === 'owner');

/** The audit record's list of the manage keys a change revokes, when it revokes any. */
const revokedKeys = (ids: string[]): { revoked_keys?: string[] } => (ids.length > 0 ? { revoked_keys: ids } : {});

/**
 * A role change or a removal, written once: the change's statements and its audit record (with the manage
 * keys it revokes) in one batch, `changed` the index of the statement that must have changed one row (the
 * last owner is never demoted or removed: its SQL then changes none); then the member's manage keys settled.
 */
async function applyChange(
  env: Env,
  id: string,
  change: { statements: D1PreparedStatement[]; changed: number; keys: string[]; record: MemberRecord },
  { accountId, now, origin }: ChangeBy,
): Promise<boolean> {
  const { statements, changed, keys, record } = change;
  const results = await batchWithAudit(
    env.DB,
    [...statements, ...makersKeysRevoked(env.DB, accountId, id, now)],
    origin,
    { accountId, action: record.action, target: id, details: { ...record.details, ...revokedKeys(keys) } },
    now,
    record.when,
  );
  if (results[changed]?.meta.changes !== 1) return false;
  await settleMakersKeys(env, accountId, id, keys, now, origin);
  return true;
}

/**
 * Who changes a member of their account (their role decides what they may change), when, and from where
 * (for the audit log).
 */
export interface ChangeBy {
  accountId: string;
  role: Role;
  now: number;
  origin: AuditOrigin;
}

/** The audit record of a change to a member, and the condition it is written on (the change took). */
interface MemberRecord {
  action: 'member.role_changed' | 'member.removed';
  details: Record<string, unknown>;
  when: AuditCondition;
}

export async function changeRole(env: Env, id: string, role: Role, by: ChangeBy): Promise<ChangeOutcome> {
  const { accountId } = by;
  const before = await getMember(env.DB, accountId, id);
  if (!before) return { ok: false, reason: 'not_found' };
  if (touchesOwner(by.role, before, role)) return { ok: false, reason: 'owner_only' };
  if (before.role === role) return { ok: true, member: before };
  const keys = MANAGE_KEY_MAKERS.includes(role) ? [] : await activeManageKeysOf(env.DB, accountId, id);
  const statements = [env.DB.prepare(SQL.setRole).bind(role, id, accountId, role, accountId)];
  const record: MemberRecord = {
    action: 'member.role_changed',
    details: { from: before.role, to: role },
    when: { sql: 'EXISTS (SELECT 1 FROM members WHERE id = ? AND role = ?)', params: [id, role] },
  };
  const changed = await applyChange(env, id, { statements, changed: 0, keys, record }, by);
  return changed ? { ok: true, member: { ...before, role } } : { ok: false, reason: 'last_owner' };
}

/** Removes a member (or a member leaves: `by.role` is then their own), ends their sessions and revokes their manage keys. */
export async function removeMember(env: Env, id: string, self: boolean, by: ChangeBy): Promise<ChangeOutcome> {
  const { accountId } = by;
  const before = await getMember(env.DB, accountId, id);
  if (!before) return { ok: false, reason: 'not_found' };
  if (!self && touchesOwner(by.role, before)) return { ok: false, reason: 'owner_only' };
  const keys = await activeManageKeysOf(env.DB, accountId, id);
  const statements = [
    env.DB.prepare(SQL.endSessions).bind(id, accountId),
    env.DB.prepare(SQL.remove).bind(id, accountId, accountId),
  ];
  const record: MemberRecord = {
    action: 'member.removed',
    details: { email: before.email, role: before.role, left: self },
    when: { sql: 'NOT EXISTS (SELECT 1 FROM members WHERE id = ?)', params: [id] },
  };
  const changed = await applyChange(env, id, { statements, changed: 1, keys, record }, by);
  return changed ? { ok: true, member: before } : { ok: false, reason: 'last_owner' };
}
