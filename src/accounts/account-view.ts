// The data member of GET /api/v1/account.
import type { KeyView } from './records.ts';
import type { Usage } from '../metering/types.ts';

export interface EndpointInfo {
  method: string;
  path: string;
  description: string;
}

/** A stored Unix-millisecond time as the API shows it: ISO 8601 UTC, or null. */
export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function accountData(key: KeyView, usage: Usage, endpoints: EndpointInfo[]) {
  return {
    account: { id: key.account.id, name: key.account.name, email: key.account.email },
    key: {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      scopes: key.scopes,
      created_at: iso(key.createdAt)!,
      last_used_at: iso(key.lastUsedAt),
    },
    tiers: { image: key.tiers.image, tools: key.tiers.tools },
    usage,
    endpoints,
  };
}
