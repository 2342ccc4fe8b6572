// Whether password sign-in is off for an email: its account configured SSO for the email's domain with
// "require SSO" on. Until SSO is configured (src/sso/), nothing is required.
export async function ssoRequiredFor(db: D1Database, accountId: string, email: string): Promise<boolean> {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const row = await db
    .prepare("SELECT 1 AS found FROM sso_configs WHERE account_id = ? AND require_sso = 1 AND instr(',' || domains || ',', ',' || ? || ',') > 0")
    .bind(accountId, domain)
    .first();
  return row !== null;
}
