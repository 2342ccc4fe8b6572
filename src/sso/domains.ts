// The email domains of an account's SSO and their proof. A domain is claimed by naming it in the
// configuration (several accounts may claim one while nobody has proved it); it is proved by publishing the
// claim's random value as a TXT record at `_shrinkray-challenge.<domain>`, looked up over DNS-over-HTTPS
// (./dns.ts) when the account asks ("Check now", POST /api/v1/sso/domains/{domain}/verify) and now and
// then by the scheduled job, since a resolver caches the record's absence for a while. Only a proved
// domain routes sign-ins to SSO, blocks sign-ups and makes members; once one account has proved a domain,
// no other can (a unique index over the verified claims, migration 0011). The scheduled job also looks
// again at proved domains, and one whose record has been missing for a while is proved no more.
import { randomBase62 } from '../accounts/keys.ts';
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import type { RateRule } from '../auth/limits.ts';
import { hit } from '../auth/throttle.ts';
import { lookupTxt, type ResolverEnv } from './dns.ts';
import { txtName } from './txt-name.ts';
import {
  SSO_DOMAIN_RECHECK_INTERVAL_MS,
  SSO_DOMAIN_RECHECK_PER_RUN,
  SSO_DOMAIN_RECHECK_WINDOW_MS,
  SSO_DOMAIN_REVERIFY_INTERVAL_MS,
  SSO_DOMAIN_REVERIFY_PER_RUN,
  SSO_DOMAIN_UNVERIFY_AFTER_MS,
  SSO_DOMAIN_UNVERIFY_MISSES,
  SSO_TXT_VALUE_CHARS,
  SSO_VERIFY_PER_ACCOUNT,
  SSO_VERIFY_PER_DOMAIN,
} from './limits.ts';

export const emailDomain = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/** A fresh value to publish for a new claim. */
export const newTxtValue = (): string => `shrinkray-verify=${randomBase62(SSO_TXT_VALUE_CHARS)}`;

/** A claimed domain as the API and the console show it. */
export interface DomainState {
  domain: string;
  verified: boolean;
  txt_name: string;
  txt_value: string;
}

interface DomainRow {
  domain: string;
  txt_value: string;
  verified_at: number | null;
}

const SQL = {
  accountFor: 'SELECT account_id FROM sso_domains WHERE domain = ? AND verified_at IS NOT NULL',
  ofAccount: 'SELECT domain, txt_value, verified_at FROM sso_domains WHERE account_id = ?',
  one: 'SELECT domain, txt_value, verified_at FROM sso_domains WHERE domain = ? AND account_id = ?',
  provedElsewhere:
    'SELECT 1 AS found FROM sso_domains WHERE domain = ? AND account_id <> ? AND verified_at IS NOT NULL',
  checked: 'UPDATE sso_domains SET checked_at = ? WHERE domain = ? AND account_id = ?',
  verify:
    'UPDATE sso_domains SET verified_at = ?1, checked_at = ?1 WHERE domain = ?2 AND account_id = ?3 AND verified_at IS NULL',
  verifiedNow: 'EXISTS (SELECT 1 FROM sso_domains WHERE domain = ? AND account_id = ? AND verified_at = ?)',
  // Unproved claims young enough to look at again, not looked at lately, and not proved by another account.
  due:
    'SELECT d.domain, d.account_id FROM sso_domains d WHERE d.verified_at IS NULL AND d.created_at > ?1 ' +
    'AND (d.checked_at IS NULL OR d.checked_at <= ?2) ' +
    'AND NOT EXISTS (SELECT 1 FROM sso_domains v WHERE v.domain = d.domain AND v.verified_at IS NOT NULL) ' +
    'ORDER BY d.checked_at IS NOT NULL, d.checked_at LIMIT ?3',
  // Proved claims not looked at lately (a claim proved through the API was looked at then).
  dueProved:
    'SELECT domain, account_id, txt_value, missing_checks, missing_since FROM sso_domains ' +
    'WHERE verified_at IS NOT NULL AND (checked_at IS NULL OR checked_at <= ?1) ' +
    'ORDER BY checked_at IS NOT NULL, checked_at LIMIT ?2',
  found:
    'UPDATE sso_domains SET checked_at = ?1, missing_checks = 0, missing_since = NULL ' +
    'WHERE domain = ?2 AND account_id = ?3 AND verified_at IS NOT NULL',
  missed:
    'UPDATE sso_domains SET checked_at = ?1, missing_checks = missing_checks + 1, missing_since = coalesce(missing_since, ?1) ' +
    'WHERE domain = ?2 AND account_id = ?3 AND verified_at IS NOT NULL',
  unverify:
    'UPDATE sso_domains SET verified_at = NULL, checked_at = ?1, missing_checks = 0, missing_since = NULL ' +
    'WHERE domain = ?2 AND account_id = ?3 AND verified_at IS NOT NULL',
  unverifiedNow:
    'EXISTS (SELECT 1 FROM sso_domains WHERE domain = ? AND account_id = ? AND verified_at IS NULL AND checked_at = ?)',
} as const;

const stateOf = (row: DomainRow): DomainState => ({
  domain: row.domain,
  verified: row.verified_at !== null,
  txt_name: txtName(row.domain),
  txt_value: row.txt_value,
});

/** The account whose SSO covers an email: the one that proved the email's domain. */
export async function ssoAccountFor(db: D1Database, email: string): Promise<string | null> {
  const row = await db.prepare(SQL.accountFor).bind(emailDomain(email)).first<{ account_id: string }>();
  return row?.account_id ?? null;
}

export async function ssoCoversEmail(db: D1Database, accountId: string, email: string): Promise<boolean> {
  return (await ssoAccountFor(db, email)) === accountId;
}

/** The account's claims, in the order given (the configuration's). */
export async function domainStates(
  db: D1Database,
  accountId: string,
  order: readonly string[],
): Promise<DomainState[]> {
  const rows = await db.prepare(SQL.ofAccount).bind(accountId).all<DomainRow>();
  const by = new Map(rows.results.map((r) => [r.domain, r]));
  return order.flatMap((d) => {
    const row = by.get(d);
    return row ? [stateOf(row)] : [];
  });
}

export type VerifyOutcome =
  | { ok: true; domain: DomainState }
  | { ok: false; reason: 'not_found' }
  /** Another account proved this domain first. */
  | { ok: false; reason: 'taken' }
  /** The account asked for too many lookups of this domain, or of all its domains (`scope`), lately. */
  | { ok: false; reason: 'throttled'; scope: 'domain' | 'account'; max: number; retryAfter: number };

type Throttled = Extract<VerifyOutcome, { reason: 'throttled' }>;

/**
 * One lookup the account asks for, counted against its claim's budget and then the account's
 * (SSO_VERIFY_PER_DOMAIN, SSO_VERIFY_PER_ACCOUNT): each is an outbound request. The domain's count comes
 * first, so clicking "Check now" on one domain again and again spends only that domain's budget.
 */
async function lookupAllowed(
  db: D1Database,
  accountId: string,
  domain: string,
  now: number,
): Promise<Throttled | null> {
  const budgets: [Throttled['scope'], string, RateRule][] = [
    ['domain', `sso-verify:${JSON.stringify([accountId, domain])}`, SSO_VERIFY_PER_DOMAIN],
    ['account', `sso-verify-account:${accountId}`, SSO_VERIFY_PER_ACCOUNT],
  ];
  for (const [scope, bucket, rule] of budgets) {
    const verdict = await hit(db, [{ bucket, ...rule }], now);
    if (!verdict.allowed)
      return { ok: false, reason: 'throttled', scope, max: rule.max, retryAfter: verdict.retryAfter };
  }
  return null;
}

/**
 * The account's "Check now": looks the claim's TXT record up and answers the domain's state: verified
 * (sso.domain_verified written in the same batch) when the record holds the claim's value, else as it was.
 * A proved domain stays proved without a lookup. A lookup past the account's budgets is refused
 * (`throttled`) without asking the resolver. The resolver's failures are 502 fetch_failed (thrown).
 */
export function verifyDomain(
  env: ResolverEnv & { DB: D1Database },
  accountId: string,
  domain: string,
  now: number,
  origin: AuditOrigin,
): Promise<VerifyOutcome> {
  return lookAgain(env, accountId, domain, now, origin, true);
}

async function lookAgain(
  env: ResolverEnv & { DB: D1Database },
  accountId: string,
  domain: string,
  now: number,
  origin: AuditOrigin,
  /** The account asked (its budgets apply), or the scheduled job did (its own bounds apply). */
  asked: boolean,
): Promise<VerifyOutcome> {
  const db = env.DB;
  const row = await db.prepare(SQL.one).bind(domain, accountId).first<DomainRow>();
  if (!row) return { ok: false, reason: 'not_found' };
  if (row.verified_at !== null) return { ok: true, domain: stateOf(row) };
  if (await db.prepare(SQL.provedElsewhere).bind(domain, accountId).first()) return { ok: false, reason: 'taken' };
  const refused = asked ? await lookupAllowed(db, accountId, domain, now) : null;
  if (refused) return refused;
  const values = await lookupTxt(env, txtName(domain));
  if (!values.some((v) => v.trim() === row.txt_value)) {
    await db.prepare(SQL.checked).bind(now, domain, accountId).run();
    return { ok: true, domain: stateOf(row) };
  }
  try {
    await batchWithAudit(
      db,
      [db.prepare(SQL.verify).bind(now, domain, accountId)],
      origin,
      {
        accountId,
        action: 'sso.domain_verified',
        target: domain,
        details: { domain, txt_name: txtName(domain) },
      },
      now,
      { sql: SQL.verifiedNow, params: [domain, accountId, now] },
    );
  } catch (err) {
    // Another account proved it between the check above and this batch: the unique index refused ours.
    if (String(err).includes('sso_domains.domain')) return { ok: false, reason: 'taken' };
    throw err;
  }
  return { ok: true, domain: { ...stateOf(row), verified: true } };
}

/** The scheduled job's actor: the service itself, on the operator's behalf. */
const SCHEDULED: AuditOrigin = {
  actor: { type: 'operator', id: null },
  ip: null,
  userAgent: 'shrinkray scheduled domain check',
};

/** The scheduled job's look at the domains: the unproved ones, and the proved ones, each within its own bounds. */
export async function recheckDomains(env: ResolverEnv & { DB: D1Database }, now: number): Promise<void> {
  await Promise.all([recheckUnproved(env, now), recheckProved(env, now)]);
}

const recheckFailed = (domain: string, err: unknown): void =>
  console.warn(
    JSON.stringify({
      event: 'sso_domain_recheck_failed',
      domain,
      error: err instanceof Error ? err.message : String(err),
    }),
  );

/**
 * Looks again at up to SSO_DOMAIN_REVERIFY_PER_RUN proved claims (oldest check first), each at most every
 * SSO_DOMAIN_REVERIFY_INTERVAL_MS. One whose record has been missing (no TXT record holds its value) for
 * SSO_DOMAIN_UNVERIFY_MISSES lookups in a row, the first at least SSO_DOMAIN_UNVERIFY_AFTER_MS before this
 * one, is proved no more (sso.domain_unverified): it routes nobody to SSO until it is proved again. A
 * failed lookup proves nothing either way: logged, counted as a look, the streak left as it is.
 */
async function recheckProved(env: ResolverEnv & { DB: D1Database }, now: number): Promise<void> {
  const db = env.DB;
  const due = await db
    .prepare(SQL.dueProved)
    .bind(now - SSO_DOMAIN_REVERIFY_INTERVAL_MS, SSO_DOMAIN_REVERIFY_PER_RUN)
    .all<{
      domain: string;
      account_id: string;
      txt_value: string;
      missing_checks: number;
      missing_since: number | null;
    }>();
  await Promise.all(
    due.results.map(async (row) => {
      const { domain, account_id } = row;
      let values: string[];
      try {
        values = await lookupTxt(env, txtName(domain));
      } catch (err) {
        await db.prepare(SQL.checked).bind(now, domain, account_id).run();
        recheckFailed(domain, err);
        return;
      }
      if (values.some((v) => v.trim() === row.txt_value)) {
        await db.prepare(SQL.found).bind(now, domain, account_id).run();
        return;
      }
      const misses = row.missing_checks + 1;
      const since = row.missing_since ?? now;
      if (misses < SSO_DOMAIN_UNVERIFY_MISSES || now - since < SSO_DOMAIN_UNVERIFY_AFTER_MS) {
        await db.prepare(SQL.missed).bind(now, domain, account_id).run();
        return;
      }
      await batchWithAudit(
        db,
        [db.prepare(SQL.unverify).bind(now, domain, account_id)],
        SCHEDULED,
        {
          accountId: account_id,
          action: 'sso.domain_unverified',
          target: domain,
          details: { domain, txt_name: txtName(domain), missed_checks: misses },
        },
        now,
        { sql: SQL.unverifiedNow, params: [domain, account_id, now] },
      );
    }),
  );
}

/**
 * Looks again at up to SSO_DOMAIN_RECHECK_PER_RUN unproved claims (oldest check first), each at most every
 * SSO_DOMAIN_RECHECK_INTERVAL_MS and only within SSO_DOMAIN_RECHECK_WINDOW_MS of its claim. A failed
 * lookup is logged and tried again on a later run.
 */
async function recheckUnproved(env: ResolverEnv & { DB: D1Database }, now: number): Promise<void> {
  const due = await env.DB.prepare(SQL.due)
    .bind(now - SSO_DOMAIN_RECHECK_WINDOW_MS, now - SSO_DOMAIN_RECHECK_INTERVAL_MS, SSO_DOMAIN_RECHECK_PER_RUN)
    .all<{ domain: string; account_id: string }>();
  await Promise.all(
    due.results.map(async ({ domain, account_id }) => {
      try {
        await lookAgain(env, account_id, domain, now, SCHEDULED, false);
      } catch (err) {
        // Counted as a look, so one broken claim does not take every run's turn.
        await env.DB.prepare(SQL.checked).bind(now, domain, account_id).run();
        recheckFailed(domain, err);
      }
    }),
  );
}
