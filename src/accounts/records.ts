// Row shapes of D1 and the key state the meter works from.
import type { ImageTier, Scope, ToolsTier } from './tiers.ts';

export interface AccountRow {
  id: string;
  email: string;
  name: string;
  image_tier: ImageTier;
  tools_tier: ToolsTier;
  created_at: number;
}

export interface KeyRow {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface KeyStateRow {
  key_id: string;
  key_name: string;
  prefix: string;
  hash: string;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  created_by: string | null;
  account_id: string;
  account_name: string;
  email: string;
  image_tier: ImageTier;
  tools_tier: ToolsTier;
}

/** What a request learns about its key; serialisable across the Durable Object RPC boundary. */
export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  createdAt: number;
  lastUsedAt: number | null;
  /** api_keys.created_by: a member id, OPERATOR_MAKER, or null (unknown: made before keys recorded it). */
  createdBy: string | null;
  account: { id: string; name: string; email: string };
  tiers: { image: ImageTier; tools: ToolsTier };
}
