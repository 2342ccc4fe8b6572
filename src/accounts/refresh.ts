// Tells the Durable Objects of the given keys to drop their cached state, so a revoke or a tier change
// (already written to D1) binds from the very next request.
import { SQL } from '../db/statements.ts';
import type { Env } from '../env.ts';
import { keyMeter } from '../metering/key-meter-stub.ts';

export interface RefreshTarget {
  keyIds?: string[];
  accountId?: string;
}

export async function refreshKeys(env: Env, target: RefreshTarget): Promise<number> {
  const hashes = new Set<string>();
  if (target.keyIds?.length) {
    const rows = await env.DB.prepare(SQL.keyHashesByIds).bind(JSON.stringify(target.keyIds)).all<{ hash: string }>();
    for (const r of rows.results) hashes.add(r.hash);
  }
  if (target.accountId) {
    const rows = await env.DB.prepare(SQL.keyHashesByAccount).bind(target.accountId).all<{ hash: string }>();
    for (const r of rows.results) hashes.add(r.hash);
  }
  await Promise.all([...hashes].map((hash) => keyMeter(env, hash).refresh()));
  return hashes.size;
}
