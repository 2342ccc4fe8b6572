// The hash chain of the audit log. Shared by the Worker and the operator CLI (Node): WebCrypto only.
// A record's hash covers the previous record's hash and every field of its own, in a fixed order, as a
// JSON array, so no two different records (or orders) can hash alike without breaking SHA-256.
import { sha256Hex } from '../accounts/keys.ts';

export const GENESIS_HASH = '0'.repeat(64);

export type ActorType = 'member' | 'key' | 'operator' | 'anonymous';
export type AuditResult = 'success' | 'failure';

/** A record as stored (times in Unix ms, details as JSON text). */
export interface AuditRow {
  id: string;
  account_id: string;
  time: number;
  actor_type: ActorType;
  actor_id: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  user_agent: string | null;
  result: AuditResult;
  details: string | null;
  prev_hash: string;
}

export function recordHash(row: AuditRow): Promise<string> {
  return sha256Hex(
    JSON.stringify([
      row.prev_hash,
      row.id,
      row.account_id,
      row.time,
      row.actor_type,
      row.actor_id,
      row.action,
      row.target,
      row.ip,
      row.user_agent,
      row.result,
      row.details,
    ]),
  );
}

export interface ChainBreak {
  /** Index in the given list of the first record that does not fit. */
  index: number;
  id: string;
  reason: 'hash' | 'link';
}

/**
 * Checks records of one account in chain order (oldest first). The first record's prev_hash is taken on
 * trust (an export may start mid-chain); every later one must name its predecessor's hash, and every hash
 * must be its record's.
 */
export async function verifyChain(rows: readonly (AuditRow & { hash: string })[]): Promise<ChainBreak | null> {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    if (i > 0 && row.prev_hash !== rows[i - 1]!.hash) return { index: i, id: row.id, reason: 'link' };
    if ((await recordHash(row)) !== row.hash) return { index: i, id: row.id, reason: 'hash' };
  }
  return null;
}
