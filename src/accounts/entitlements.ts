// What each tier includes: the one table of features, and `can`, the one question every check asks
// (the /compress route, image URLs, the memory gate, the console's pages, the management API, the webhook
// outbox). Numbers (rates, quotas) stay in tiers.ts; this is what a tier may do at all.
import { ApiError } from '../errors.ts';
import type { ImageFormat } from '../compress/formats.ts';
import { IMAGE_TIER_NAMES, type ImageTier, TOOLS_TIER_NAMES, type ToolsTier } from './tiers.ts';

const IMAGE_FEATURES = {
  /** WebP output (and `f=auto` serving it). */
  webp: ['pro'],
  /** AVIF output (and `f=auto` serving it). */
  avif: ['pro'],
  /** JPEG XL output (and `f=auto` serving it). */
  jxl: ['pro'],
  /** A target file size (`target_kb`, `kb=`). */
  target_kb: ['pro'],
  /** Waiting in the memory queue when the isolate is busy, where the others are refused at once. */
  priority: ['pro'],
} as const satisfies Record<string, readonly ImageTier[]>;

const TOOLS_FEATURES = {
  webhooks: ['developer', 'enterprise'],
  members: ['enterprise'],
  sso: ['enterprise'],
  audit_log: ['enterprise'],
} as const satisfies Record<string, readonly ToolsTier[]>;

export type ImageFeature = keyof typeof IMAGE_FEATURES;
export type ToolsFeature = keyof typeof TOOLS_FEATURES;

/** Whether an account (or a key, which carries its account's tiers) on these tiers may use the feature. */
export function can(account: { image: ImageTier }, feature: ImageFeature): boolean;
export function can(account: { tools: ToolsTier }, feature: ToolsFeature): boolean;
export function can(account: { image?: ImageTier; tools?: ToolsTier }, feature: ImageFeature | ToolsFeature): boolean {
  if (feature in IMAGE_FEATURES) {
    return (IMAGE_FEATURES[feature as ImageFeature] as readonly string[]).includes(account.image!);
  }
  return (TOOLS_FEATURES[feature as ToolsFeature] as readonly string[]).includes(account.tools!);
}

/** Whether an account on this image tier may ask for output in `format` (JPEG and PNG: every tier). */
export function canWrite(account: { image: ImageTier }, format: ImageFormat): boolean {
  return format === 'webp' || format === 'avif' || format === 'jxl' ? can(account, format) : true;
}

/** The tiers that include the feature, cheapest first. */
export function tiersWith(feature: ImageFeature): ImageTier[];
export function tiersWith(feature: ToolsFeature): ToolsTier[];
export function tiersWith(feature: ImageFeature | ToolsFeature): string[] {
  return feature in IMAGE_FEATURES
    ? IMAGE_TIER_NAMES.filter((image) => can({ image }, feature as ImageFeature))
    : TOOLS_TIER_NAMES.filter((tools) => can({ tools }, feature as ToolsFeature));
}

/** How a refusal names each tools-tier feature (with its verb). */
const NEEDS: Record<ToolsFeature, string> = {
  webhooks: 'webhooks need',
  members: 'members needs',
  sso: 'single sign-on needs',
  audit_log: 'the audit log needs',
};

/** Returns when the account may use the feature; throws 403 plan_upgrade_required naming the tiers that may. */
export function requireFeature(account: { tools: ToolsTier }, feature: ToolsFeature): void {
  if (can(account, feature)) return;
  const required = tiersWith(feature);
  throw new ApiError(
    'plan_upgrade_required',
    `${NEEDS[feature]} the tools tier ${required.join(' or ')}; this account's tools tier is ${account.tools}`,
    { details: { tier: account.tools, required } },
  );
}
