// An audit record before it is written: who, what, its hash onto the chain's head, and its INSERT.
// Shared by the Worker (src/audit/log.ts) and the operator CLI (Node), so nothing here needs D1's types.
import { randomBase62 } from '../accounts/keys.ts';
import { GENESIS_HASH, recordHash, type ActorType, type AuditResult, type AuditRow } from './chain.ts';
import { AUDIT_USER_AGENT_MAX } from './limits.ts';

/** Every action the log records (docs/teams.md, "Audit log"). */
export const AUDIT_ACTIONS = [
  'key.created',
  'key.revoked',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'member.invited',
  'member.invitation_renewed',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'member.email_verified',
  'member.password_reset',
  'sso.configured',
  'sso.removed',
  'sso.domain_verified',
  'sso.domain_unverified',
  'member.sso_linked',
  'session.signed_in',
  'session.sign_in_failed',
  'account.tier_changed',
  'account.deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditActor {
  type: ActorType;
  id: string | null;
}

/** Who acts and from where: the same for every record one request writes. */
export interface AuditOrigin {
  actor: AuditActor;
  ip: string | null;
  userAgent: string | null;
}

export interface AuditEvent {
  accountId: string;
  action: AuditAction;
  target?: string | null;
  result?: AuditResult;
  details?: Record<string, unknown>;
}

/** An SQL condition (plain `?` parameters) the record is written under, evaluated after the change. */
export interface AuditCondition {
  sql: string;
  params: (string | number | null)[];
}

export const OPERATOR: AuditOrigin = {
  actor: { type: 'operator', id: null },
  ip: null,
  userAgent: 'shrinkray admin CLI',
};

export const AUDIT_SQL = {
  head: 'SELECT hash FROM audit_logs WHERE account_id = ? ORDER BY seq DESC LIMIT 1',
  insert:
    'INSERT INTO audit_logs (id, account_id, time, actor_type, actor_id, action, target, ip, user_agent, result, details, prev_hash, hash) ' +
    'SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?',
} as const;

export const newAuditId = (): string => `aud_${randomBase62(16)}`;

/** The record, hashed onto the given head. */
export async function buildRecord(
  origin: AuditOrigin,
  event: AuditEvent,
  now: number,
  head: string | null,
): Promise<AuditRow & { hash: string }> {
  const row: AuditRow = {
    id: newAuditId(),
    account_id: event.accountId,
    time: now,
    actor_type: origin.actor.type,
    actor_id: origin.actor.id,
    action: event.action,
    target: event.target ?? null,
    ip: origin.ip,
    user_agent: origin.userAgent === null ? null : origin.userAgent.slice(0, AUDIT_USER_AGENT_MAX),
    result: event.result ?? 'success',
    details: event.details ? JSON.stringify(event.details) : null,
    prev_hash: head ?? GENESIS_HASH,
  };
  return { ...row, hash: await recordHash(row) };
}

/** The INSERT of a built record, with its condition; shared with the operator CLI (inlined there). */
export function insertSql(when?: AuditCondition): { sql: string; params: (string | number | null)[] } {
  return when
    ? { sql: `${AUDIT_SQL.insert} WHERE ${when.sql}`, params: when.params }
    : { sql: AUDIT_SQL.insert, params: [] };
}

export const recordParams = (r: AuditRow & { hash: string }): (string | number | null)[] => [
  r.id,
  r.account_id,
  r.time,
  r.actor_type,
  r.actor_id,
  r.action,
  r.target,
  r.ip,
  r.user_agent,
  r.result,
  r.details,
  r.prev_hash,
  r.hash,
];
