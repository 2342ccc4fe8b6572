// Whether password sign-in is off for an email: its account proved the email's domain for its SSO, with
// "require SSO" on (src/sso/). Owners are let through by the caller: their password is the break-glass.
import { emailDomain } from '../sso/domains.ts';

export async function ssoRequiredFor(db: D1Database, accountId: string, email: string): Promise<boolean> {
  const row = await db
    .prepare(
      'SELECT 1 AS found FROM sso_domains d JOIN sso_configs c ON c.account_id = d.account_id WHERE d.domain = ? AND d.account_id = ? AND d.verified_at IS NOT NULL AND c.require_sso = 1',
    )
    .bind(emailDomain(email), accountId)
    .first();
  return row !== null;
}
