// The account's usage for the console: per-day counts of the last USAGE_DAYS days for the account and
// each key, each key's windows as they stand, and the account's month of compressions. Read from the
// keys' own meters (one RPC each, in parallel), where the counts were written in the same step that
// metered the request, and from the account's meter (one RPC), which holds the month.
import { iso } from '../accounts/account-view.ts';
import type { ImageTier } from '../accounts/tiers.ts';
import { accountMeter } from '../metering/account-meter-stub.ts';
import { keyMeter } from '../metering/key-meter-stub.ts';
import type { Env } from '../env.ts';
import type { Usage, WindowUsage } from '../metering/types.ts';
import { dayWindow, DAY_MS, monthWindow } from '../metering/windows.ts';
import { USAGE_DAYS, USAGE_MAX_KEYS } from './limits.ts';

export interface KeyUsage {
  id: string;
  name: string;
  prefix: string;
  kind: 'api' | 'console';
  revoked_at: string | null;
  requests: number[];
  compressions: number[];
  /** This key's compressions this month (its share of the account's month). */
  month_compressions: number;
  /** This minute and today (the key's own Tools API windows), and the account's month, with the tiers' limits. */
  windows: Usage;
}

export interface UsageReport {
  /** 'YYYY-MM-DD' (UTC), oldest first, today last. */
  days: string[];
  account: { requests: number[]; compressions: number[] };
  /** The account's month of compressions: all its keys and the console's "Try it" together. */
  month_compressions: WindowUsage;
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

export async function accountUsage(
  env: Env,
  account: { id: string; image_tier: ImageTier },
  now: number,
): Promise<UsageReport> {
  const today = dayWindow(now).start;
  const first = today - (USAGE_DAYS - 1) * DAY_MS;
  const monthStart = monthWindow(now).start;
  // The history must reach back to the 1st, for each key's share of the month (a 31st is 30 days on).
  const from = Math.min(first, monthStart);
  const days = Array.from({ length: USAGE_DAYS }, (_, i) => new Date(first + i * DAY_MS).toISOString().slice(0, 10));
  const [rows, month] = await Promise.all([
    env.DB.prepare(SQL)
      .bind(account.id, from, USAGE_MAX_KEYS)
      .all<KeyRow>()
      .then((r) => r.results),
    accountMeter(env, account.id).month(account.image_tier, now),
  ]);
  const snapshots = await Promise.all(rows.map((r) => keyMeter(env, r.hash).snapshot(r.hash, now, from)));

  const totals = {
    requests: new Array<number>(USAGE_DAYS).fill(0),
    compressions: new Array<number>(USAGE_DAYS).fill(0),
  };
  const keys: KeyUsage[] = [];
  rows.forEach((row, i) => {
    const snapshot = snapshots[i];
    if (!snapshot) return;
    const requests = new Array<number>(USAGE_DAYS).fill(0);
    const compressions = new Array<number>(USAGE_DAYS).fill(0);
    let monthCompressions = 0;
    for (const d of snapshot.history) {
      if (d.day >= monthStart) monthCompressions += d.compressions;
      const index = Math.round((d.day - first) / DAY_MS);
      if (index < 0 || index >= USAGE_DAYS) continue;
      requests[index] = d.requests;
      compressions[index] = d.compressions;
      totals.requests[index] = (totals.requests[index] ?? 0) + d.requests;
      totals.compressions[index] = (totals.compressions[index] ?? 0) + d.compressions;
    }
    keys.push({
      id: row.id,
      name: row.name,
      prefix: row.prefix,
      kind: row.kind,
      revoked_at: iso(row.revoked_at),
      requests,
      compressions,
      month_compressions: monthCompressions,
      windows: { ...snapshot.usage, month_compressions: month },
    });
  });
  return { days, account: totals, month_compressions: month, keys };
}
