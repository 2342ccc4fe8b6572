// The account's usage for the console: per-day counts of the last USAGE_DAYS days for the account and
// each key, and each key's windows as they stand. Read from the keys' own meters (one RPC each, in
// parallel), where the counts were written in the same step that metered the request.
import { iso } from '../accounts/account-view.ts';
import type { Env } from '../env.ts';
import type { Usage } from '../metering/types.ts';
import { dayWindow, DAY_MS } from '../metering/windows.ts';
import { USAGE_DAYS, USAGE_MAX_KEYS } from './limits.ts';

export interface KeyUsage {
  id: string;
  name: string;
  prefix: string;
  kind: 'api' | 'console';
  revoked_at: string | null;
  requests: number[];
  compressions: number[];
  /** This minute, today and this month, with the tier's limits. */
  windows: Usage;
}

export interface UsageReport {
  /** 'YYYY-MM-DD' (UTC), oldest first, today last. */
  days: string[];
  account: { requests: number[]; compressions: number[] };
  keys: KeyUsage[];
}

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  kind: 'api' | 'console';
  hash: string;
  revoked_at: number | null;
}

// Active keys first, then revoked ones used within the period, most recent first.
const SQL =
  'SELECT id, name, prefix, kind, hash, revoked_at FROM api_keys WHERE account_id = ? AND (revoked_at IS NULL OR last_used_at >= ?) ' +
  'ORDER BY revoked_at IS NOT NULL, kind, COALESCE(last_used_at, created_at) DESC LIMIT ?';

export async function accountUsage(env: Env, accountId: string, now: number): Promise<UsageReport> {
  const today = dayWindow(now).start;
  const first = today - (USAGE_DAYS - 1) * DAY_MS;
  const days = Array.from({ length: USAGE_DAYS }, (_, i) => new Date(first + i * DAY_MS).toISOString().slice(0, 10));
  const rows = (await env.DB.prepare(SQL).bind(accountId, first, USAGE_MAX_KEYS).all<KeyRow>()).results;
  const snapshots = await Promise.all(rows.map((r) => env.METER.get(env.METER.idFromName(r.hash)).snapshot(r.hash, now, first)));

  const account = { requests: new Array<number>(USAGE_DAYS).fill(0), compressions: new Array<number>(USAGE_DAYS).fill(0) };
  const keys: KeyUsage[] = [];
  rows.forEach((row, i) => {
    const snapshot = snapshots[i];
    if (!snapshot) return;
    const requests = new Array<number>(USAGE_DAYS).fill(0);
    const compressions = new Array<number>(USAGE_DAYS).fill(0);
    for (const d of snapshot.history) {
      const index = Math.round((d.day - first) / DAY_MS);
      if (index < 0 || index >= USAGE_DAYS) continue;
      requests[index] = d.requests;
      compressions[index] = d.compressions;
      account.requests[index] = (account.requests[index] ?? 0) + d.requests;
      account.compressions[index] = (account.compressions[index] ?? 0) + d.compressions;
    }
    keys.push({
      id: row.id,
      name: row.name,
      prefix: row.prefix,
      kind: row.kind,
      revoked_at: iso(row.revoked_at),
      requests,
      compressions,
      windows: snapshot.usage,
    });
  });
  return { days, account, keys };
}
