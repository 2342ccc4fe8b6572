// Which account's SSO covers an email: its domain is in sso_domains (one account per domain).
export const emailDomain = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

export async function ssoAccountFor(db: D1Database, email: string): Promise<string | null> {
  const row = await db
    .prepare('SELECT account_id FROM sso_domains WHERE domain = ?')
    .bind(emailDomain(email))
    .first<{ account_id: string }>();
  return row?.account_id ?? null;
}

export async function ssoCoversEmail(db: D1Database, accountId: string, email: string): Promise<boolean> {
  return (await ssoAccountFor(db, email)) === accountId;
}
