// The proofs of single sign-on (issue 47): a domain routes nobody to SSO until its TXT record is seen at the
// DNS-over-HTTPS resolver (the fixture of test/fixtures/doh.ts: present, absent, another value, a failing,
// endless or silent resolver), a domain one account proved is no other's, the account's lookups are
// throttled, unproved domains are looked at again by the scheduled job and proved ones too (unproved after
// their record has been missing for days); and an existing member is linked to an SSO identity only after
// giving their password or using a link mailed to them (maildev), in the browser that signed in. All
// through the real OpenID provider (test/fixtures/oidc.ts), whose login form signs in whoever is named.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import {
  DNS_MAX_RESPONSE_BYTES,
  DNS_TIMEOUT_MS,
  SSO_DOMAIN_RECHECK_PER_RUN,
  SSO_DOMAIN_REVERIFY_INTERVAL_MS,
  SSO_DOMAIN_UNVERIFY_AFTER_MS,
  SSO_DOMAIN_UNVERIFY_MISSES,
  SSO_VERIFY_PER_ACCOUNT,
  SSO_VERIFY_PER_DOMAIN,
} from '../../src/sso/limits.ts';
import { TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../fixtures/oidc-client.ts';
import { txtText } from '../../src/sso/dns.ts';
import { recheckDomains } from '../../src/sso/domains.ts';
import { publishTxt, timesAsked } from '../fixtures/doh-client.ts';
import { Browser, PASSWORD, signedUp, uniqueEmail } from './console-helpers.ts';
import { linkIn, mailsTo } from './mail-helpers.ts';
import {
  configure,
  type DomainState,
  ISSUER,
  ORIGIN,
  prove,
  RESOLVER,
  ssoSignIn,
  throughProvider,
  uniqueDomain,
} from './sso-helpers.ts';
import { enterpriseTeam, join, type Team } from './team-helpers.ts';

/** SSO configured for `domain`, not proved; the domain's state as the answer gave it. */
async function claimed(team: Team, domain: string, requireSso = false): Promise<DomainState> {
  const res = await configure(team, domain, requireSso, ISSUER, { prove: false });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { data: { domains: DomainState[] } }).data.domains[0]!;
}

const verifyCall = (team: Team, domain: string) =>
  team.owner.browser.json(`/api/v1/sso/domains/${domain}/verify`, { method: 'POST', csrf: team.owner.csrf });

const stateOf = async (res: Response) => ((await res.json()) as { data: DomainState }).data;

const memberRow = (email: string) =>
  env.DB.prepare('SELECT id, account_id, sso_subject FROM members WHERE email = ?')
    .bind(email)
    .first<{ id: string; account_id: string; sso_subject: string | null }>();

describe('proving an SSO domain', () => {
  it('the TXT record with the value proves it (sso.domain_verified); absent or with another value, it stays unproved', async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    const state = await claimed(team, domain);
    expect(state).toEqual({
      domain,
      verified: false,
      txt_name: `_shrinkray-challenge.${domain}`,
      txt_value: expect.stringMatching(/^shrinkray-verify=[A-Za-z0-9]{32}$/),
    });
    // Absent.
    const absent = await verifyCall(team, domain);
    expect(absent.status).toBe(200);
    expect(await stateOf(absent)).toEqual(state);
    // Another value (another account's, or a stale one), and the value with a character missing.
    await publishTxt(RESOLVER, state.txt_name, ['v=spf1 -all', state.txt_value.slice(0, -1)]);
    expect(await stateOf(await verifyCall(team, domain))).toEqual(state);
    // Present, among other records.
    await publishTxt(RESOLVER, state.txt_name, ['v=spf1 -all', state.txt_value]);
    const present = await verifyCall(team, domain);
    expect(present.status).toBe(200);
    expect(await stateOf(present)).toEqual({ ...state, verified: true });
    expect(
      await env.DB.prepare('SELECT 1 FROM sso_domains WHERE domain = ? AND verified_at IS NOT NULL')
        .bind(domain)
        .first(),
    ).not.toBeNull();
    const audit = await env.DB.prepare(
      "SELECT actor_type, target, details FROM audit_logs WHERE account_id = ? AND action = 'sso.domain_verified'",
    )
      .bind(team.accountId)
      .all<{ actor_type: string; target: string; details: string }>();
    expect(audit.results.map((r) => [r.actor_type, r.target, JSON.parse(r.details)])).toEqual([
      ['member', domain, { domain, txt_name: state.txt_name }],
    ]);
    // The configuration shows it; saving the configuration again keeps the value and the proof.
    const again = await configure(team, domain, false, ISSUER, { prove: false });
    expect(((await again.json()) as { data: { domains: DomainState[] } }).data.domains).toEqual([
      { ...state, verified: true },
    ]);
    // Proved stays proved, without asking again.
    await publishTxt(RESOLVER, state.txt_name, []);
    expect((await stateOf(await verifyCall(team, domain))).verified).toBe(true);
    // A domain the configuration does not name.
    const unknown = await verifyCall(team, uniqueDomain());
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('reads TXT data as resolvers write it: quoted character-strings, joined, with their escapes', () => {
    expect(txtText('"shrinkray-verify=abc"')).toBe('shrinkray-verify=abc');
    expect(txtText('"shrinkray-" "verify=abc"')).toBe('shrinkray-verify=abc');
    expect(txtText('"a\\"b" "c\\\\d" "\\065"')).toBe('a"bc\\dA');
    expect(txtText('unquoted value')).toBe('unquoted value');
  });

  it('a resolver that fails, answers without end or not at all is a 502 fetch_failed, within its deadline', async () => {
    const team = await enterpriseTeam();
    const base = uniqueDomain();
    // The fixture misbehaves for names whose second label says how (`_shrinkray-challenge.<how>.…`).
    const reasons = { servfail: 'resolver', huge: 'too_large', slow: 'timeout' } as const;
    for (const [how, reason] of Object.entries(reasons)) {
      const domain = `${how}.${base}`;
      await claimed(team, domain);
      const started = Date.now();
      const res = await verifyCall(team, domain);
      expect(res.status, how).toBe(502);
      const { error } = (await res.json()) as { error: { code: string; details: Record<string, unknown> } };
      expect(error.code, how).toBe('fetch_failed');
      expect(error.details.reason, how).toBe(reason);
      if (how === 'huge') expect(error.details.max_bytes).toBe(DNS_MAX_RESPONSE_BYTES);
      expect(Date.now() - started, how).toBeLessThan(DNS_TIMEOUT_MS + 2_000);
    }
    // The silent resolver would hold up the scheduled job's runs of the other tests: the claims go.
    const removed = await team.owner.browser.json('/api/v1/sso', { method: 'DELETE', csrf: team.owner.csrf });
    expect(removed.status).toBe(200);
  }, 30_000);

  it("an unproved domain routes nobody to SSO, blocks nobody's sign-up and makes no member", async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    const state = await claimed(team, domain, true);
    expect((await new Browser().fetch(`/sso/start?email=ann@${domain}`)).status).toBe(404);
    // Sign-up with an address of the domain is a sign-up like any other.
    const person = new Browser();
    const form = await person.page('/signup');
    const signUp = await person.post('/signup', {
      _csrf: form.csrf,
      name: 'Bo',
      email: `bo@${domain}`,
      password: PASSWORD,
    });
    expect(signUp.status).toBe(200);
    // Proved, it routes to SSO and blocks sign-ups.
    expect((await prove(team, state)).status).toBe(200);
    const blocked = await person.post('/signup', {
      _csrf: (await person.page('/signup')).csrf,
      name: 'Cy',
      email: `cy@${domain}`,
      password: PASSWORD,
    });
    expect(blocked.status).toBe(403);
    // A sign-in started while the domain was proved, finished after the proof went, makes no member.
    const browser = new Browser();
    const start = await browser.fetch(`/sso/start?email=dee@${domain}`);
    expect(start.status).toBe(302);
    const callback = await throughProvider(start.headers.get('location')!, `dee@${domain}`);
    await env.DB.prepare('UPDATE sso_domains SET verified_at = NULL WHERE domain = ?').bind(domain).run();
    const done = await browser.fetch(callback.slice(ORIGIN.length));
    expect(done.status).toBe(401);
    expect(await memberRow(`dee@${domain}`)).toBeNull();
  });

  it('a domain one account proved cannot be claimed or proved by another', async () => {
    const first = await enterpriseTeam();
    const second = await enterpriseTeam();
    const domain = uniqueDomain();
    // Both may claim it while nobody has proved it: naming a domain first holds nothing.
    const mine = await claimed(first, domain);
    const theirs = await claimed(second, domain);
    expect(theirs.txt_value).not.toBe(mine.txt_value);
    expect((await prove(first, mine)).status).toBe(200);
    // The second publishes its own value too late: refused, and its claim routes nobody.
    await publishTxt(RESOLVER, theirs.txt_name, [theirs.txt_value, mine.txt_value]);
    const late = await verifyCall(second, domain);
    expect(late.status).toBe(400);
    expect(((await late.json()) as { error: { details: { reason: string } } }).error.details.reason).toBe(
      'domain_taken',
    );
    const again = await configure(second, domain, false, ISSUER, { prove: false });
    expect(again.status).toBe(400);
    // A person of the domain is made a member of the account that proved it.
    const email = `eve@${domain}`;
    expect((await ssoSignIn(new Browser(), email)).status).toBe(303);
    expect((await memberRow(email))!.account_id).toBe(first.accountId);
  });

  it('"Check now" (and its API call) is throttled per domain and per account: 429 with Retry-After, no lookup', async () => {
    const team = await enterpriseTeam();
    const count = SSO_VERIFY_PER_ACCOUNT.max / SSO_VERIFY_PER_DOMAIN.max + 1;
    const put = await team.owner.browser.json('/api/v1/sso', {
      method: 'PUT',
      csrf: team.owner.csrf,
      body: {
        issuer: ISSUER,
        client_id: TEST_CLIENT_ID,
        client_secret: TEST_CLIENT_SECRET,
        domains: Array.from({ length: count }, uniqueDomain),
        require_sso: false,
      },
    });
    expect(put.status).toBe(200);
    const states = ((await put.json()) as { data: { domains: DomainState[] } }).data.domains;
    const refusal = async (res: Response, scope: string, max: number, windowMs: number) => {
      expect(res.status).toBe(429);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(windowMs / 1000);
      const { error } = (await res.json()) as { error: { code: string; message: string; details: unknown } };
      expect(error.code).toBe('rate_limit_exceeded');
      expect(error.details).toEqual({ scope, max, retry_after: retryAfter });
      expect(error.message).toContain(`${retryAfter} s`);
    };
    // One domain: its limit, then refused without asking the resolver.
    const [first, ...others] = states;
    for (let i = 0; i < SSO_VERIFY_PER_DOMAIN.max; i++)
      expect((await verifyCall(team, first!.domain)).status).toBe(200);
    await refusal(
      await verifyCall(team, first!.domain),
      'domain',
      SSO_VERIFY_PER_DOMAIN.max,
      SSO_VERIFY_PER_DOMAIN.windowMs,
    );
    expect(await timesAsked(RESOLVER, first!.txt_name)).toBe(SSO_VERIFY_PER_DOMAIN.max);
    // The account: its other domains, each within its own limit, until the account's is spent.
    let spent = SSO_VERIFY_PER_DOMAIN.max;
    for (const state of others.slice(0, -1))
      for (let i = 0; i < SSO_VERIFY_PER_DOMAIN.max; i++, spent++)
        expect((await verifyCall(team, state.domain)).status).toBe(200);
    expect(spent).toBe(SSO_VERIFY_PER_ACCOUNT.max);
    const last = others.at(-1)!;
    await refusal(
      await verifyCall(team, last.domain),
      'account',
      SSO_VERIFY_PER_ACCOUNT.max,
      SSO_VERIFY_PER_ACCOUNT.windowMs,
    );
    expect(await timesAsked(RESOLVER, last.txt_name)).toBe(0);
    // The console's "Check now" says so on the page.
    const page = await team.owner.browser.page('/sso');
    const checked = await team.owner.browser.post('/sso/domains/verify', { _csrf: page.csrf, domain: last.domain });
    expect(checked.status).toBe(429);
    expect(checked.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(await checked.text()).toContain('too many checks of this account');
    expect(await timesAsked(RESOLVER, last.txt_name)).toBe(0);
    // About 40 calls: past the default 5 s on a loaded machine.
  }, 20_000);

  it('the scheduled job looks again at unproved domains, a bounded number per run, each at most every so often', async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    const state = await claimed(team, domain);
    await publishTxt(RESOLVER, state.txt_name, [state.txt_value]);
    // Other files' unproved claims share the database: each run takes the ones looked at longest ago.
    const now = Date.now();
    for (let run = 0; run < 50; run++) {
      const at = now + run;
      await recheckDomains(env, at);
      // Unproved claims only (and the one this run proved): proved ones are looked at under their own cap.
      const looked = await env.DB.prepare(
        'SELECT COUNT(*) AS n FROM sso_domains WHERE checked_at = ?1 AND (verified_at IS NULL OR verified_at = ?1)',
      )
        .bind(at)
        .first<{ n: number }>();
      expect(looked!.n).toBeLessThanOrEqual(SSO_DOMAIN_RECHECK_PER_RUN);
      if (
        await env.DB.prepare('SELECT 1 FROM sso_domains WHERE domain = ? AND verified_at IS NOT NULL')
          .bind(domain)
          .first()
      )
        break;
    }
    expect((await stateOf(await verifyCall(team, domain))).verified).toBe(true);
    // An unproved domain just looked at is not asked about again on the next run.
    const other = await claimed(team, uniqueDomain());
    for (let run = 0; run < 50 && (await timesAsked(RESOLVER, other.txt_name)) === 0; run++)
      await recheckDomains(env, now + 100 + run);
    const asked = await timesAsked(RESOLVER, other.txt_name);
    expect(asked).toBe(1);
    await recheckDomains(env, now + 200);
    expect(await timesAsked(RESOLVER, other.txt_name)).toBe(asked);
  }, 30_000);
});

describe('rechecking a proved SSO domain', () => {
  it('a record missing for several checks over days unproves it (sso.domain_unverified); one miss, or a failing resolver, does not', async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    const state = await claimed(team, domain);
    expect((await prove(team, state)).status).toBe(200);
    const step = SSO_DOMAIN_REVERIFY_INTERVAL_MS + 60_000;
    // The rule as this test walks it: the misses in a row are enough one step before they span long enough.
    expect((SSO_DOMAIN_UNVERIFY_MISSES - 1) * step).toBeLessThan(SSO_DOMAIN_UNVERIFY_AFTER_MS);
    expect(SSO_DOMAIN_UNVERIFY_MISSES * step).toBeGreaterThanOrEqual(SSO_DOMAIN_UNVERIFY_AFTER_MS);
    const row = () =>
      env.DB.prepare('SELECT verified_at, checked_at FROM sso_domains WHERE domain = ?')
        .bind(domain)
        .first<{ verified_at: number | null; checked_at: number }>();
    let at = Date.now();
    /** The scheduled job a step later, run until it has looked at the domain (other files' claims share D1). */
    const later = async (resolver: Record<string, string> = {}): Promise<boolean> => {
      at += step;
      for (let run = 0; run < 50; run++) {
        await recheckDomains({ ...env, ...resolver }, at + run);
        const now = await row();
        if (now!.checked_at >= at) return now!.verified_at !== null;
      }
      throw new Error('the scheduled job never looked at the domain');
    };
    // Published: looked at again, still proved; not asked again within the interval.
    expect(await later()).toBe(true);
    const asked = await timesAsked(RESOLVER, state.txt_name);
    await recheckDomains(env, at + 1_000);
    expect(await timesAsked(RESOLVER, state.txt_name)).toBe(asked);
    // Missing once, then back: still proved, and the misses start over.
    await publishTxt(RESOLVER, state.txt_name, []);
    expect(await later()).toBe(true);
    await publishTxt(RESOLVER, state.txt_name, [state.txt_value]);
    expect(await later()).toBe(true);
    // Missing again: enough misses in a row, but not yet over SSO_DOMAIN_UNVERIFY_AFTER_MS.
    await publishTxt(RESOLVER, state.txt_name, ['v=spf1 -all']);
    for (let miss = 0; miss < SSO_DOMAIN_UNVERIFY_MISSES; miss++) expect(await later()).toBe(true);
    // A resolver that fails is no miss, however long it has been.
    expect(await later({ DNS_RESOLVER_URL: `${RESOLVER}/failing` })).toBe(true);
    // The next miss is enough.
    expect(await later()).toBe(false);
    const audit = await env.DB.prepare(
      "SELECT actor_type, target, details FROM audit_logs WHERE account_id = ? AND action = 'sso.domain_unverified'",
    )
      .bind(team.accountId)
      .all<{ actor_type: string; target: string; details: string }>();
    expect(audit.results.map((r) => [r.actor_type, r.target, JSON.parse(r.details)])).toEqual([
      ['operator', domain, { domain, txt_name: state.txt_name, missed_checks: SSO_DOMAIN_UNVERIFY_MISSES + 1 }],
    ]);
    // It routes nobody to SSO any more; publishing the record and "Check now" prove it again.
    expect((await new Browser().fetch(`/sso/start?email=ann@${domain}`)).status).toBe(404);
    expect((await stateOf(await verifyCall(team, domain))).verified).toBe(false);
    expect((await prove(team, state)).status).toBe(200);
    expect((await row())!.verified_at).not.toBeNull();
  }, 30_000);
});

describe('linking an existing member to an SSO identity', () => {
  it('the password on the proof page links the member; a wrong one does not', async () => {
    const domain = uniqueDomain();
    const team = await enterpriseTeam('enterprise', `owner@${domain}`);
    await configure(team, domain);
    const browser = new Browser();
    const done = await ssoSignIn(browser, team.owner.email);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/sso/link');
    const page = await browser.page('/sso/link');
    expect(page.html).toContain('Confirm with my password');
    expect(page.html).toContain('Email me a link');
    const wrong = await browser.post('/sso/link', { _csrf: page.csrf, password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('That password is not right');
    expect((await memberRow(team.owner.email))!.sso_subject).toBeNull();
    // A forged form (no CSRF token) changes nothing either.
    expect((await browser.post('/sso/link', { password: PASSWORD })).status).toBe(403);
    const right = await browser.post('/sso/link', { _csrf: page.csrf, password: PASSWORD });
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe('/');
    expect((await browser.page('/')).html).toContain('Sign out');
    expect((await memberRow(team.owner.email))!.sso_subject).toBe(team.owner.email);
    const audit = await env.DB.prepare(
      "SELECT action, actor_id, details FROM audit_logs WHERE account_id = ? AND action IN ('member.sso_linked', 'session.sign_in_failed') ORDER BY seq",
    )
      .bind(team.accountId)
      .all<{ action: string; actor_id: string | null; details: string }>();
    expect(audit.results.map((r) => [r.action, r.actor_id, JSON.parse(r.details)])).toEqual([
      ['session.sign_in_failed', null, { method: 'sso', reason: 'link_proof_password' }],
      ['member.sso_linked', team.owner.memberId, { method: 'password' }],
    ]);
    // The proof is used up; from now on the issuer signs the member in directly.
    expect((await browser.fetch('/sso/link')).status).toBe(410);
    const next = await ssoSignIn(new Browser(), team.owner.email);
    expect(next.headers.get('location')).toBe('/');
  });

  it('a link mailed to the member links them, once, in the browser that signed in', async () => {
    const domain = uniqueDomain();
    const team = await enterpriseTeam('enterprise', `owner@${domain}`);
    const admin = await join(team, 'admin', team.owner, `admin-${crypto.randomUUID().slice(0, 6)}@${domain}`);
    await configure(team, domain);
    const browser = new Browser();
    expect((await ssoSignIn(browser, admin.email)).headers.get('location')).toBe('/sso/link');
    const page = await browser.page('/sso/link');
    const before = (await mailsTo(admin.email)).length;
    const mailed = await browser.post('/sso/link/mail', { _csrf: page.csrf });
    expect(mailed.status).toBe(200);
    expect(await mailed.text()).toContain(`We sent a link to ${admin.email}`);
    const mails = await mailsTo(admin.email, before + 1);
    const mail = mails[mails.length - 1]!;
    expect(mail.subject).toContain('Confirm single sign-on');
    expect(mail.text).toContain(ISSUER);
    const link = new URL(linkIn(mail, '/sso/link/confirm?token='));
    const path = `${link.pathname}${link.search}`;
    // Another browser (the member's own, say, opening a mail they did not ask for) cannot use it.
    const elsewhere = new Browser();
    const other = await elsewhere.page(path);
    expect(other.res.status).toBe(403);
    expect(other.html).toContain('works only in the browser where you signed in');
    const forced = await elsewhere.post('/sso/link/confirm', {
      _csrf: other.csrf,
      token: link.searchParams.get('token')!,
    });
    expect(forced.status).toBe(410);
    expect((await memberRow(admin.email))!.sso_subject).toBeNull();
    // The browser that signed in: a button (mail scanners open links), then signed in and linked.
    const confirm = await browser.page(path);
    expect(confirm.res.status).toBe(200);
    expect((await memberRow(admin.email))!.sso_subject).toBeNull();
    const used = await browser.post('/sso/link/confirm', {
      _csrf: confirm.csrf,
      token: link.searchParams.get('token')!,
    });
    expect(used.status).toBe(303);
    expect((await memberRow(admin.email))!.sso_subject).toBe(admin.email);
    expect((await browser.page('/')).html).toContain('Sign out');
    // Single use.
    expect((await new Browser().fetch(path)).status).toBe(410);
    const audit = await env.DB.prepare(
      "SELECT details FROM audit_logs WHERE account_id = ? AND action = 'member.sso_linked' AND target = ?",
    )
      .bind(team.accountId, admin.memberId)
      .first<{ details: string }>();
    expect(JSON.parse(audit!.details)).toEqual({ method: 'mail' });
  });

  it('a member without a password is offered the mailed link only; new addresses are still made just in time', async () => {
    const domain = uniqueDomain();
    const team = await enterpriseTeam('enterprise', uniqueEmail());
    await configure(team, domain);
    const email = `nopass@${domain}`;
    await env.DB.prepare(
      "INSERT INTO members (id, account_id, email, name, role, created_at) VALUES (?, ?, ?, 'No Password', 'viewer', 0)",
    )
      .bind(`mem_np${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`, team.accountId, email)
      .run();
    const browser = new Browser();
    expect((await ssoSignIn(browser, email)).headers.get('location')).toBe('/sso/link');
    const page = await browser.page('/sso/link');
    expect(page.html).not.toContain('Confirm with my password');
    expect(page.html).toContain('Email me a link');
    expect((await browser.post('/sso/link', { _csrf: page.csrf, password: 'anything at all' })).status).toBe(401);
    expect((await memberRow(email))!.sso_subject).toBeNull();
    const fresh = `fresh@${domain}`;
    expect((await ssoSignIn(new Browser(), fresh)).headers.get('location')).toBe('/');
    expect((await memberRow(fresh))!.sso_subject).toBe(fresh);
  });
});

describe('the console SSO page', () => {
  it("shows each domain's record to publish and checks it now", async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    const state = await claimed(team, domain);
    const page = await team.owner.browser.page('/sso');
    expect(page.html).toContain(state.txt_name);
    expect(page.html).toContain(state.txt_value);
    expect(page.html).toContain('not verified yet');
    expect(page.html).toContain('Check now');
    const notYet = await team.owner.browser.post('/sso/domains/verify', { _csrf: page.csrf, domain });
    expect(notYet.status).toBe(200);
    expect(await notYet.text()).toContain(`No TXT record with the value was found at ${state.txt_name} yet`);
    await publishTxt(RESOLVER, state.txt_name, [state.txt_value]);
    const done = await team.owner.browser.post('/sso/domains/verify', { _csrf: page.csrf, domain });
    expect(done.status).toBe(200);
    const html = await done.text();
    expect(html).toContain(`${domain} is verified`);
    expect(html).not.toContain('Check now');
    // A signed-in member of another account cannot check this account's domain.
    const other = await signedUp();
    await env.DB.prepare("UPDATE accounts SET tools_tier = 'enterprise' WHERE email = ?").bind(other.email).run();
    const refused = await other.browser.post('/sso/domains/verify', { _csrf: other.csrf, domain });
    expect(refused.status).toBe(400);
  });
});
