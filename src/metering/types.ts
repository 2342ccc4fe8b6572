import type { KeyView } from '../accounts/records.ts';
import type { DailyRow } from './counters.ts';

/** One window as /account shows it. `limit`/`remaining` are null where the tier has no cap. */
export interface WindowUsage {
  limit: number | null;
  used: number;
  remaining: number | null;
  /** Unix seconds at which the window resets. */
  reset: number;
}

/** A key's Tools API windows. */
export interface ToolsUsage {
  minute: WindowUsage;
  day: WindowUsage;
}

/** What /account shows: the key's Tools API windows and the account's month of compressions. */
export interface Usage extends ToolsUsage {
  month_compressions: WindowUsage;
}

/** What the X-RateLimit-* headers (and Retry-After) say. */
export interface RateHeaders {
  limit: number;
  remaining: number;
  reset: number;
  retryAfter?: number;
}

export type Outcome = 'ok' | 'unauthorized' | 'forbidden' | 'rate_limit_exceeded' | 'quota_exceeded';

export interface Verdict {
  outcome: Outcome;
  /** Why the key was refused, for the error message; never contains secrets. */
  reason?: string;
  key?: KeyView;
  rate?: RateHeaders;
  usage?: Usage;
  /** Set by a successful reserve: pass it back to commit or release. */
  reservation?: string;
}

/** What the console reads from a key's meter: its Tools API windows and per-day history (the month is the account's). */
export interface KeySnapshot {
  usage: ToolsUsage;
  history: DailyRow[];
}
