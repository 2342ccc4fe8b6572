// An account's SSO configuration: read (never the secret), save, remove. Saving checks the issuer first
// (its discovery document must name itself), encrypts the secret, claims the email domains (a new claim
// gets a value to publish; a claim kept keeps its value and its proof: ./domains.ts), and writes
// sso.configured, all in one D1 batch.
import { iso } from '../accounts/account-view.ts';
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import { discover } from './discovery.ts';
import { domainStates, newTxtValue, type DomainState } from './domains.ts';
import { encryptSecret } from './secret.ts';

export interface SsoView {
  issuer: string;
  client_id: string;
  domains: DomainState[];
  require_sso: boolean;
  updated_at: string;
}

export interface SsoInput {
  issuer: string;
  client_id: string;
  client_secret: string;
  domains: string[];
  require_sso: boolean;
}

export interface SsoRow {
  account_id: string;
  issuer: string;
  client_id: string;
  client_secret_enc: string;
  domains: string;
  require_sso: number;
  updated_at: number;
}

const SQL = {
  one: 'SELECT account_id, issuer, client_id, client_secret_enc, domains, require_sso, updated_at FROM sso_configs WHERE account_id = ?',
  upsert:
    'INSERT INTO sso_configs (account_id, issuer, client_id, client_secret_enc, domains, require_sso, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ' +
    'ON CONFLICT (account_id) DO UPDATE SET issuer = ?2, client_id = ?3, client_secret_enc = ?4, domains = ?5, require_sso = ?6, updated_at = ?7',
  dropDomains: 'DELETE FROM sso_domains WHERE account_id = ?',
  /** The claims no longer named go, with their proof. */
  dropOtherDomains: 'DELETE FROM sso_domains WHERE account_id = ? AND domain NOT IN (SELECT value FROM json_each(?))',
  claimDomain:
    'INSERT INTO sso_domains (domain, account_id, txt_value, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (domain, account_id) DO NOTHING',
  delete: 'DELETE FROM sso_configs WHERE account_id = ?',
  /**
   * A subject is an identity at one issuer for one client: stored without them, a link made under the old
   * provider would sign in whoever the new one names with that subject (an admin's own issuer, naming the
   * owner's). Every link goes when they change, and each member proves their mailbox or password again.
   */
  unlinkMembers: 'UPDATE members SET sso_subject = NULL WHERE account_id = ? AND sso_subject IS NOT NULL',
  takenBy:
    'SELECT domain FROM sso_domains WHERE domain IN (SELECT value FROM json_each(?)) AND account_id <> ? AND verified_at IS NOT NULL',
} as const;

export const ssoRow = (db: D1Database, accountId: string): Promise<SsoRow | null> =>
  db.prepare(SQL.one).bind(accountId).first<SsoRow>();

async function viewOf(db: D1Database, row: SsoRow): Promise<SsoView> {
  return {
    issuer: row.issuer,
    client_id: row.client_id,
    domains: await domainStates(db, row.account_id, row.domains.split(',')),
    require_sso: row.require_sso === 1,
    updated_at: iso(row.updated_at) as string,
  };
}

export async function getSso(db: D1Database, accountId: string): Promise<SsoView | null> {
  const row = await ssoRow(db, accountId);
  return row ? viewOf(db, row) : null;
}

/** `domain_taken`: another account proved some of the domains, so they cannot be claimed. */
export type SaveOutcome = { ok: true; sso: SsoView } | { ok: false; reason: 'domain_taken'; domains: string[] };

interface SsoEnv {
  DB: D1Database;
  SSO_ENCRYPTION_KEY?: string;
  FETCH_TEST_ORIGIN?: string;
}

export async function saveSso(
  env: SsoEnv,
  accountId: string,
  input: SsoInput,
  now: number,
  origin: AuditOrigin,
): Promise<SaveOutcome> {
  const domains = [...new Set(input.domains.map((d) => d.toLowerCase()))];
  const taken = await env.DB.prepare(SQL.takenBy).bind(JSON.stringify(domains), accountId).all<{ domain: string }>();
  if (taken.results.length > 0)
    return { ok: false, reason: 'domain_taken', domains: taken.results.map((r) => r.domain) };
  // Throws a 400 (rules, mismatched issuer) or 502 (unreachable) before anything is stored.
  await discover(input.issuer, env.FETCH_TEST_ORIGIN);
  const sealed = await encryptSecret(env.SSO_ENCRYPTION_KEY, accountId, input.client_secret);
  const db = env.DB;
  const before = await ssoRow(db, accountId);
  const newProvider = !before || before.issuer !== input.issuer || before.client_id !== input.client_id;
  // Claims of other accounts that nobody proved do not stop this one: only a proof decides.
  await batchWithAudit(
    db,
    [
      db
        .prepare(SQL.upsert)
        .bind(accountId, input.issuer, input.client_id, sealed, domains.join(','), input.require_sso ? 1 : 0, now),
      db.prepare(SQL.dropOtherDomains).bind(accountId, JSON.stringify(domains)),
      ...domains.map((d) => db.prepare(SQL.claimDomain).bind(d, accountId, newTxtValue(), now)),
      ...(newProvider ? [db.prepare(SQL.unlinkMembers).bind(accountId)] : []),
    ],
    origin,
    {
      accountId,
      action: 'sso.configured',
      target: accountId,
      details: {
        issuer: input.issuer,
        client_id: input.client_id,
        domains,
        require_sso: input.require_sso,
        members_unlinked: newProvider,
      },
    },
    now,
  );
  return {
    ok: true,
    sso: {
      issuer: input.issuer,
      client_id: input.client_id,
      domains: await domainStates(db, accountId, domains),
      require_sso: input.require_sso,
      updated_at: iso(now) as string,
    },
  };
}

export async function deleteSso(
  db: D1Database,
  accountId: string,
  now: number,
  origin: AuditOrigin,
): Promise<SsoView | null> {
  const before = await getSso(db, accountId);
  if (!before) return null;
  await batchWithAudit(
    db,
    [
      db.prepare(SQL.dropDomains).bind(accountId),
      db.prepare(SQL.delete).bind(accountId),
      db.prepare(SQL.unlinkMembers).bind(accountId),
    ],
    origin,
    { accountId, action: 'sso.removed', target: accountId, details: { issuer: before.issuer } },
    now,
  );
  return before;
}
