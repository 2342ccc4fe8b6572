// Who may use webhooks: accounts whose tools tier includes them (developer, enterprise).
import { TOOLS_TIERS, TOOLS_TIER_NAMES, type ToolsTier } from '../accounts/tiers.ts';
import { ApiError } from '../errors.ts';

export const WEBHOOK_TIERS = TOOLS_TIER_NAMES.filter((t) => TOOLS_TIERS[t].webhooks);

export function requireWebhookTier(tier: ToolsTier): void {
  if (TOOLS_TIERS[tier].webhooks) return;
  throw new ApiError(
    'plan_upgrade_required',
    `webhooks need the tools tier ${WEBHOOK_TIERS.join(' or ')}; this account's tools tier is ${tier}`,
    {
      details: { tier, required: WEBHOOK_TIERS },
    },
  );
}
