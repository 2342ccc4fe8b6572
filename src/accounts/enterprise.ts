// Who may use the enterprise features (members and invitations, SSO, the audit log): accounts on the
// enterprise tools tier. Records are written for every account; only reading and configuring is gated.
import type { ToolsTier } from './tiers.ts';
import { ApiError } from '../errors.ts';

export const ENTERPRISE_TIERS: readonly ToolsTier[] = ['enterprise'];

export const isEnterprise = (tier: ToolsTier): boolean => ENTERPRISE_TIERS.includes(tier);

export function requireEnterprise(tier: ToolsTier, feature: string): void {
  if (isEnterprise(tier)) return;
  throw new ApiError(
    'plan_upgrade_required',
    `${feature} needs the tools tier enterprise; this account's tools tier is ${tier}`,
    {
      details: { tier, required: ENTERPRISE_TIERS },
    },
  );
}
