// What each tier may do, asked through the one question every check asks (`can`), and the refusal a
// tools-tier feature gets: the table of features, read back as a user meets it.
import { describe, expect, it } from 'vitest';
import { can, requireFeature, tiersWith } from '../../src/accounts/entitlements.ts';
import { ApiError } from '../../src/errors.ts';

describe('entitlements', () => {
  it('give WebP, target sizes and the memory queue to pro only', () => {
    for (const feature of ['webp', 'target_kb', 'priority'] as const) {
      expect(can({ image: 'free' }, feature)).toBe(false);
      expect(can({ image: 'pro' }, feature)).toBe(true);
      expect(tiersWith(feature)).toEqual(['pro']);
    }
  });

  it('give webhooks from developer up, and members, SSO and the audit log to enterprise', () => {
    expect(tiersWith('webhooks')).toEqual(['developer', 'enterprise']);
    for (const feature of ['members', 'sso', 'audit_log'] as const) expect(tiersWith(feature)).toEqual(['enterprise']);
  });

  it('refuse with 403 plan_upgrade_required naming the tiers that may', () => {
    expect(() => requireFeature({ tools: 'enterprise' }, 'sso')).not.toThrow();
    const refusal = (() => {
      try {
        requireFeature({ tools: 'free' }, 'webhooks');
      } catch (err) {
        return err;
      }
    })() as ApiError;
    expect(refusal).toBeInstanceOf(ApiError);
    expect([refusal.status, refusal.code, refusal.message, refusal.details]).toEqual([
      403,
      'plan_upgrade_required',
      "webhooks need the tools tier developer or enterprise; this account's tools tier is free",
      { tier: 'free', required: ['developer', 'enterprise'] },
    ]);
  });
});
