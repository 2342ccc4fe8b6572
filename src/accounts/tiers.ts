// Tiers and their limits: the one place these numbers live (docs/using-the-api.md, "Rate limits and quotas").
// What each tier may do at all (WebP, webhooks, members...) is entitlements.ts.

// `manage` (the management API: keys, webhooks) is never combined with the others: a key that can make
// keys should not also sit in every pipeline that compresses images.
export const SCOPES = ['image', 'tools', 'manage'] as const;
export type Scope = (typeof SCOPES)[number];

export const IMAGE_TIER_NAMES = ['free', 'pro'] as const;
export type ImageTier = (typeof IMAGE_TIER_NAMES)[number];

export const TOOLS_TIER_NAMES = ['free', 'developer', 'enterprise'] as const;
export type ToolsTier = (typeof TOOLS_TIER_NAMES)[number];

export interface ImageTierLimits {
  compressionsPerMonth: number;
}

export interface ToolsTierLimits {
  perMinute: number;
  /** null: no daily cap. */
  perDay: number | null;
  bulkMetaTagUrls: number;
}

export const IMAGE_TIERS: Record<ImageTier, ImageTierLimits> = {
  free: { compressionsPerMonth: 100 },
  pro: { compressionsPerMonth: 10_000 },
};

export const TOOLS_TIERS: Record<ToolsTier, ToolsTierLimits> = {
  free: { perMinute: 100, perDay: 1_000, bulkMetaTagUrls: 5 },
  developer: { perMinute: 1_000, perDay: 50_000, bulkMetaTagUrls: 25 },
  enterprise: { perMinute: 10_000, perDay: null, bulkMetaTagUrls: 100 },
};

/** SQL: the comma list of scopes in `column` holds `scope` (a fixed word, safe to splice). */
export const hasScopeSql = (column: string, scope: Scope): string => `instr(',' || ${column} || ',', ',${scope},') > 0`;

export function parseScopes(text: string): Scope[] {
  return SCOPES.filter((s) =>
    text
      .split(',')
      .map((p) => p.trim())
      .includes(s),
  );
}
