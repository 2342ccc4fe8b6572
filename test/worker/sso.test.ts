// Single sign-on against a real OpenID provider (oidc-provider on loopback, test/fixtures/oidc.ts, with its
// default claim settings: the email only at userinfo): the configuration (secret encrypted, never
// returned; issuer under the fetch rules), a member signing in end to end and being made just in time,
// userinfo naming another subject refused, "require SSO" against the password path with the owner's
// break-glass password, an admin's manage key that configures SSO for the owner's domain not signed in as
// the owner (issue 47; every domain here is proved at the DNS-over-HTTPS resolver fixture first, and the
// proofs themselves are in sso-proof.test.ts), and the ID token checks refusing tampered, wrong-nonce, wrong-audience, expired
// and wrong-issuer tokens signed with the provider's own key. Then misbehaving issuers on the fixture
// origin (test/fixtures/oidc-issuers.ts): answers of 300 MB, gzip bombs and outages end in a 502 (a page in
// the browser's way), read no further than SSO_MAX_RESPONSE_BYTES and the buffers on the way.
import { env } from 'cloudflare:test';
import { importJWK, SignJWT, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { discover, fetchJwks } from '../../src/sso/discovery.ts';
import { verifyIdToken } from '../../src/sso/flow.ts';
import { SSO_MAX_RESPONSE_BYTES } from '../../src/sso/limits.ts';
import { MAX_MEMBERS_PER_ACCOUNT } from '../../src/teams/limits.ts';
import { publishTxt } from '../fixtures/doh-client.ts';
import { TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../fixtures/oidc-client.ts';
import { Browser, PASSWORD } from './console-helpers.ts';
import { expectEachRefused, FORBIDDEN_HOSTS, makeKey } from './helpers.ts';
import {
  configure,
  type DomainState,
  FIXTURE,
  ISSUER,
  ORIGIN,
  PRIVATE_JWK,
  RESOLVER,
  ssoSignIn,
  throughProvider,
  uniqueDomain,
} from './sso-helpers.ts';
import { enterpriseTeam, invitationPath, join } from './team-helpers.ts';
import { addKey, manage } from './webhook-helpers.ts';

describe('single sign-on configuration', () => {
  it('stores the secret encrypted and never returns it', async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    const res = await configure(team, domain, false, ISSUER, { prove: false });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { data: Record<string, unknown> };
    expect(body.data).toEqual({
      issuer: ISSUER,
      client_id: TEST_CLIENT_ID,
      domains: [
        {
          domain,
          verified: false,
          txt_name: `_shrinkray-challenge.${domain}`,
          txt_value: expect.stringMatching(/^shrinkray-verify=[A-Za-z0-9]{32}$/),
        },
      ],
      require_sso: false,
      redirect_uri: `${ORIGIN}/sso/callback`,
      updated_at: expect.any(String),
    });
    const again = await team.owner.browser.json('/api/v1/sso');
    expect(JSON.stringify(await again.json())).not.toContain(TEST_CLIENT_SECRET);
    const row = await env.DB.prepare('SELECT client_secret_enc FROM sso_configs WHERE account_id = ?')
      .bind(team.accountId)
      .first<{ client_secret_enc: string }>();
    expect(row!.client_secret_enc).toMatch(/^v1\./);
    expect(row!.client_secret_enc).not.toContain(TEST_CLIENT_SECRET);
    // sso.configured in the audit log, without the secret.
    const audit = await env.DB.prepare(
      "SELECT details FROM audit_logs WHERE account_id = ? AND action = 'sso.configured'",
    )
      .bind(team.accountId)
      .first<{ details: string }>();
    expect(JSON.parse(audit!.details)).toEqual({
      issuer: ISSUER,
      client_id: TEST_CLIENT_ID,
      domains: [domain],
      require_sso: false,
      members_unlinked: true,
    });
    expect(audit!.details).not.toContain(TEST_CLIENT_SECRET);
  });

  it('refuses issuers the fetch rules forbid, a mismatched issuer, a domain another account has, and other tiers', async () => {
    const team = await enterpriseTeam();
    await expectEachRefused(
      [
        'http://login.example.com',
        ...FORBIDDEN_HOSTS.map((host) => `https://${host}`),
        'https://localhost:8443',
        `${ISSUER}/`,
      ],
      (issuer) => configure(team, uniqueDomain(), false, issuer),
      { param: 'issuer' },
    );
    const domain = uniqueDomain();
    expect((await configure(team, domain)).status).toBe(200);
    const other = await enterpriseTeam();
    expect((await configure(other, domain)).status).toBe(400);
    const free = await makeKey({ tools: 'developer', scopes: ['manage'] });
    const res = await manage(free.key, '/api/v1/sso');
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('plan_upgrade_required');
  });
});

describe('signing in with SSO', () => {
  it('a member signs in end to end through the provider, made just in time as a developer', async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    expect((await configure(team, domain)).status).toBe(200);
    const email = `grace@${domain}`;
    const browser = new Browser();
    const done = await ssoSignIn(browser, email);
    expect(done.status, await done.clone().text()).toBe(303);
    expect(done.headers.get('location')).toBe('/');
    const home = await browser.page('/');
    expect(home.html).toContain('Sign out');
    const member = await env.DB.prepare('SELECT id, role, sso_subject, password_hash FROM members WHERE email = ?')
      .bind(email)
      .first<{ id: string; role: string; sso_subject: string; password_hash: null }>();
    expect(member).toMatchObject({ role: 'developer', sso_subject: email, password_hash: null });
    // The password path has nothing for this member, and the sign-in page points at SSO.
    const pw = new Browser();
    const form = await pw.page('/signin');
    const refused = await pw.post('/signin', { _csrf: form.csrf, email, password: PASSWORD });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('single sign-on');
    // The second sign-in finds the same member.
    expect((await ssoSignIn(new Browser(), email)).status).toBe(303);
    expect(
      (await env.DB.prepare('SELECT COUNT(*) AS n FROM members WHERE email = ?').bind(email).first<{ n: number }>())!.n,
    ).toBe(1);
    const actions = await env.DB.prepare(
      "SELECT action, actor_id, details FROM audit_logs WHERE account_id = ? AND action IN ('member.joined', 'session.signed_in') ORDER BY seq",
    )
      .bind(team.accountId)
      .all<{ action: string; actor_id: string; details: string }>();
    expect(
      actions.results.map((r) => [r.action, r.actor_id, JSON.parse(r.details).method ?? JSON.parse(r.details).via]),
    ).toEqual([
      ['session.signed_in', team.owner.memberId, 'password'],
      ['member.joined', member!.id, 'sso'],
      ['session.signed_in', member!.id, 'sso'],
      ['session.signed_in', member!.id, 'sso'],
    ]);
  });

  it('refuses a userinfo answer that names another subject than the ID token: a page, no member', async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    expect((await configure(team, domain)).status).toBe(200);
    // The fixture's userinfo names another subject for logins starting with `othersub`.
    const email = `othersub@${domain}`;
    const res = await ssoSignIn(new Browser(), email);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('failed our checks');
    expect(await env.DB.prepare('SELECT 1 FROM members WHERE email = ?').bind(email).first()).toBeNull();
    const audit = await env.DB.prepare(
      "SELECT details FROM audit_logs WHERE account_id = ? AND action = 'session.sign_in_failed'",
    )
      .bind(team.accountId)
      .first<{ details: string }>();
    expect(JSON.parse(audit!.details)).toMatchObject({ method: 'sso', reason: 'userinfo' });
  });

  it('a pending invitation for the email gives its role at the first SSO sign-in, and is used up', async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    await configure(team, domain);
    const email = `lin@${domain}`;
    const res = await team.owner.browser.json('/api/v1/members/invitations', {
      method: 'POST',
      csrf: team.owner.csrf,
      body: { email, role: 'admin' },
    });
    expect(res.status).toBe(201);
    const path = await invitationPath(email);
    // The link's page offers SSO for this email rather than a password.
    expect((await new Browser().page(path)).html).toContain(`/sso/start?email=${encodeURIComponent(email)}`);
    expect((await ssoSignIn(new Browser(), email)).status).toBe(303);
    expect(await env.DB.prepare('SELECT role FROM members WHERE email = ?').bind(email).first()).toEqual({
      role: 'admin',
    });
    expect((await new Browser().page(path)).res.status).toBe(404);
  });

  it('makes no member just in time when the team is full', async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    await configure(team, domain);
    const fill = Array.from({ length: MAX_MEMBERS_PER_ACCOUNT - 1 }, (_, i) =>
      env.DB.prepare(
        "INSERT INTO members (id, account_id, email, name, role, created_at) VALUES (?, ?, ?, 'Filler', 'viewer', 0)",
      ).bind(
        `mem_fill${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`,
        team.accountId,
        `filler${i}-${crypto.randomUUID().slice(0, 6)}@filler.example`,
      ),
    );
    await env.DB.batch(fill);
    const res = await ssoSignIn(new Browser(), `late@${domain}`);
    expect(res.status).toBe(401);
    expect(await res.text()).toContain('as many members as it may');
    expect(await env.DB.prepare('SELECT 1 FROM members WHERE email = ?').bind(`late@${domain}`).first()).toBeNull();
  });

  it('a callback is single use and must come back to the browser that started it', async () => {
    const team = await enterpriseTeam();
    const domain = uniqueDomain();
    await configure(team, domain);
    const browser = new Browser();
    const start = await browser.fetch(`/sso/start?email=ann@${domain}`);
    const callback = (await throughProvider(start.headers.get('location')!, `ann@${domain}`)).slice(ORIGIN.length);
    // Another browser (no state cookie) is refused, and that spends the state.
    expect((await new Browser().fetch(callback)).status).toBe(400);
    expect((await browser.fetch(callback)).status).toBe(400);
    expect(
      (await new Browser().fetch('/sso/callback?state=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA&code=x')).status,
    ).toBe(400);
    // The start form may lead to the issuer (browsers apply form-action to the redirect); other pages may not.
    const form = await new Browser().fetch('/sso/start');
    expect(form.headers.get('content-security-policy')).toMatch(
      new RegExp(`form-action 'self' https: [^;]*${ISSUER.replaceAll('.', '\\.')}[ ;]`),
    );
    expect((await new Browser().fetch('/signin')).headers.get('content-security-policy')).toContain(
      "form-action 'self';",
    );
    // A domain without SSO says so.
    expect((await new Browser().fetch('/sso/start?email=someone@no-sso.example')).status).toBe(404);
  });

  it('"require SSO" turns the password path off for the domain\'s members; the owner keeps a break-glass password', async () => {
    const domain = uniqueDomain();
    const team = await enterpriseTeam('enterprise', `owner@${domain}`);
    const member = await join(team, 'admin', team.owner, `admin@${domain}`);
    const passwordSignIn = async (email: string) => {
      const b = new Browser();
      const form = await b.page('/signin');
      return b.post('/signin', { _csrf: form.csrf, email, password: PASSWORD });
    };
    expect((await passwordSignIn(member.email)).status).toBe(303);
    expect((await configure(team, domain, true)).status).toBe(200);
    const refused = await passwordSignIn(member.email);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('single sign-on');
    expect((await passwordSignIn(team.owner.email)).status).toBe(303);
    // The admin signs in through SSO instead, as the same member, once they proved it with their password.
    const browser = new Browser();
    expect((await ssoSignIn(browser, member.email)).headers.get('location')).toBe('/sso/link');
    const proof = await browser.page('/sso/link');
    expect((await browser.post('/sso/link', { _csrf: proof.csrf, password: PASSWORD })).status).toBe(303);
    const me = await browser.json('/api/v1/members');
    expect(
      ((await me.json()) as { data: { email: string; sign_in: string[] }[] }).data.find(
        (m) => m.email === member.email,
      )!.sign_in,
    ).toEqual(['password', 'sso']);
  });
});

describe('taking over an existing member through SSO', () => {
  it("a new issuer or client unlinks every member: an admin's own provider cannot name the owner's subject; the same provider saved again keeps the links", async () => {
    const domain = uniqueDomain();
    const team = await enterpriseTeam('enterprise', `owner@${domain}`);
    expect((await configure(team, domain)).status).toBe(200);
    // The owner links their SSO identity, proving it with their password.
    const browser = new Browser();
    expect((await ssoSignIn(browser, team.owner.email)).headers.get('location')).toBe('/sso/link');
    const proof = await browser.page('/sso/link');
    expect((await browser.post('/sso/link', { _csrf: proof.csrf, password: PASSWORD })).status).toBe(303);
    const subject = () =>
      env.DB.prepare('SELECT sso_subject FROM members WHERE email = ?').bind(team.owner.email).first('sso_subject');
    expect(await subject()).toBe(team.owner.email);
    // Saving the same issuer and client (here, to require SSO) keeps every link.
    expect((await configure(team, domain, true, ISSUER, { prove: false })).status).toBe(200);
    expect(await subject()).toBe(team.owner.email);
    // An admin's manage key points the account at another client (a provider it runs would do the same).
    const key = await addKey({ key: '', id: '', accountId: team.accountId }, ['manage']);
    const put = (clientId: string) =>
      manage(key.key, '/api/v1/sso', {
        method: 'PUT',
        body: {
          issuer: ISSUER,
          client_id: clientId,
          client_secret: TEST_CLIENT_SECRET,
          domains: [domain],
          require_sso: false,
        },
      });
    expect((await put('attackers-own-client')).status).toBe(200);
    expect(await subject()).toBeNull();
    // Back on the real client, the subject the provider names signs nobody in until the owner proves it again.
    expect((await put(TEST_CLIENT_ID)).status).toBe(200);
    expect((await ssoSignIn(new Browser(), team.owner.email)).headers.get('location')).toBe('/sso/link');
    const audit = await env.DB.prepare(
      "SELECT details FROM audit_logs WHERE account_id = ? AND action = 'sso.configured' ORDER BY seq",
    )
      .bind(team.accountId)
      .all<{ details: string }>();
    expect(audit.results.map((r) => JSON.parse(r.details).members_unlinked)).toEqual([true, false, true, true]);
  });

  it("an admin's manage key configures SSO for the owner's domain: the owner is not signed in by the issuer's word", async () => {
    const domain = uniqueDomain();
    const team = await enterpriseTeam('enterprise', `owner@${domain}`);
    const key = await addKey({ key: '', id: '', accountId: team.accountId }, ['manage']);
    // The test provider signs in whoever is named at its login form: an issuer that vouches for anyone.
    const put = await manage(key.key, '/api/v1/sso', {
      method: 'PUT',
      body: {
        issuer: ISSUER,
        client_id: TEST_CLIENT_ID,
        client_secret: TEST_CLIENT_SECRET,
        domains: [domain],
        require_sso: false,
      },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const signedInAsOwner = async (browser: Browser) =>
      (await browser.json('/api/v1/members')).status === 200 &&
      ((await browser.page('/')).html.includes(team.owner.email) || false);
    // The domain is not proved: it routes nobody to SSO.
    const early = new Browser();
    const start = await early.fetch(`/sso/start?email=${encodeURIComponent(team.owner.email)}`);
    if (start.status === 302) {
      const callback = await throughProvider(start.headers.get('location')!, team.owner.email);
      await early.fetch(callback.slice(ORIGIN.length));
    }
    expect(await signedInAsOwner(early)).toBe(false);
    expect(start.status).toBe(404);
    // Even once the domain is proved (the admin may run its DNS), the issuer's word does not link the owner:
    // the sign-in ends on a page asking for the owner's password or mailbox.
    const { txt_name, txt_value } = ((await put.json()) as { data: { domains: DomainState[] } }).data.domains[0]!;
    await publishTxt(RESOLVER, txt_name, [txt_value]);
    const verified = await manage(key.key, `/api/v1/sso/domains/${domain}/verify`, { method: 'POST' });
    expect(((await verified.json()) as { data: DomainState }).data.verified).toBe(true);
    const browser = new Browser();
    const done = await ssoSignIn(browser, team.owner.email);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/sso/link');
    const proof = await browser.page('/sso/link');
    expect(proof.res.status).toBe(200);
    expect(proof.html).toContain('Confirm it is you');
    expect(await signedInAsOwner(browser)).toBe(false);
    const owner = await env.DB.prepare('SELECT role, sso_subject FROM members WHERE id = ?')
      .bind(team.owner.memberId)
      .first<{ role: string; sso_subject: string | null }>();
    expect(owner).toEqual({ role: 'owner', sso_subject: null });
  });
});

describe('the ID token checks', () => {
  const NONCE = 'the-nonce-of-this-sign-in';
  let jwks: { keys: JsonWebKey[] } | undefined;
  const keys = async () =>
    (jwks ??= await fetchJwks(await discover(ISSUER, env.FETCH_TEST_ORIGIN), env.FETCH_TEST_ORIGIN));
  const now = Date.now();
  const sign = async (claims: JWTPayload) =>
    new SignJWT({ sub: 'sub-x', email: 'x@corp.example', nonce: NONCE, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: PRIVATE_JWK.kid as string })
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime((claims.exp as number | undefined) ?? Math.floor(now / 1000) + 300)
      .setIssuer((claims.iss as string | undefined) ?? ISSUER)
      .setAudience((claims.aud as string | undefined) ?? TEST_CLIENT_ID)
      .sign(await importJWK(PRIVATE_JWK as never, 'RS256'));
  const check = async (token: string) =>
    verifyIdToken(token, { issuer: ISSUER, clientId: TEST_CLIENT_ID, nonce: NONCE, jwks: await keys(), now });

  it("accept a token signed by the issuer's key for us, with our nonce", async () => {
    expect((await check(await sign({}))).email).toBe('x@corp.example');
  });

  it('refuse a tampered token, a wrong nonce, a wrong audience, an expired token and another issuer', async () => {
    const good = await sign({});
    const [header, payload, signature] = good.split('.');
    const forged = JSON.parse(
      new TextDecoder().decode(
        Uint8Array.from(atob(payload!.replaceAll('-', '+').replaceAll('_', '/')), (c) => c.charCodeAt(0)),
      ),
    );
    forged.email = 'ceo@corp.example';
    const tampered = `${header}.${btoa(JSON.stringify(forged)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')}.${signature}`;
    await expect(check(tampered)).rejects.toThrow(/signature verification failed/);
    await expect(check(await sign({ nonce: 'another-nonce' }))).rejects.toThrow(/nonce/);
    await expect(check(await sign({ aud: 'someone-else' }))).rejects.toThrow(/"aud" claim/);
    await expect(check(await sign({ exp: Math.floor(now / 1000) - 3600 }))).rejects.toThrow(/"exp" claim/);
    await expect(check(await sign({ iss: 'https://evil.example' }))).rejects.toThrow(/"iss" claim/);
    // And an unsigned token.
    await expect(check(`${btoa('{"alg":"none"}').replace(/=+$/, '')}.${payload}.`)).rejects.toThrow();
  });
});

describe('misbehaving issuers', () => {
  // What may reach the socket past the limit before the reader stops: the buffers between the origin and
  // the reader (the origin's socket, the kernel's loopback buffers, workerd's). Measured: 4 to 5 MB on loopback with a 256 KB limit.
  const BUFFERS = 8 * 1024 * 1024;
  const fixtureEnv = { FETCH_TEST_ORIGIN: `${env.FETCH_TEST_ORIGIN},${FIXTURE}` };
  const issuerOf = (kind: string) => `${FIXTURE}/oidc/${kind}/${crypto.randomUUID().slice(0, 8)}`;
  const sentBy = async (issuer: string) => {
    const stats = await fetch(`${FIXTURE}/oidc-sent/${issuer.slice(`${FIXTURE}/oidc/`.length)}`);
    return (await stats.json()) as { bytes: number; finished: boolean } | null;
  };
  /** An enterprise team whose browsers may reach the fixture origin, its SSO on a working fixture issuer. */
  const fixtureTeam = async (kind = 'huge-token') => {
    const team = await enterpriseTeam();
    team.owner.browser.env = fixtureEnv;
    const domain = uniqueDomain();
    const issuer = issuerOf(kind);
    const res = await configure(team, domain, false, issuer);
    expect(res.status, await res.clone().text()).toBe(200);
    return { team, domain, issuer };
  };
  const browser = () => Object.assign(new Browser(), { env: fixtureEnv });

  it('configuring an issuer whose discovery document is 300 MB stops reading at the limit: 502 fetch_failed', async () => {
    const team = await enterpriseTeam();
    team.owner.browser.env = fixtureEnv;
    const issuer = issuerOf('huge-discovery');
    const started = Date.now();
    const res = await configure(team, uniqueDomain(), false, issuer);
    const sent = await sentBy(issuer);
    expect(sent!.finished).toBe(false);
    expect(sent!.bytes).toBeLessThanOrEqual(SSO_MAX_RESPONSE_BYTES + BUFFERS);
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; details: { reason: string; max_bytes: number } } };
    expect(body.error.code).toBe('fetch_failed');
    expect(body.error.details).toMatchObject({ reason: 'too_large', max_bytes: SSO_MAX_RESPONSE_BYTES });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(
      await env.DB.prepare('SELECT 1 FROM sso_configs WHERE account_id = ?').bind(team.accountId).first(),
    ).toBeNull();
  });

  it('counts a gzip-compressed discovery document at its decompressed size: 502 fetch_failed', async () => {
    const team = await enterpriseTeam();
    team.owner.browser.env = fixtureEnv;
    const issuer = issuerOf('gzip-discovery');
    const res = await configure(team, uniqueDomain(), false, issuer);
    // Compressed bytes on the wire: a thousandth of the document, so the limit is reached within a few KB of them.
    const sent = await sentBy(issuer);
    expect(sent!.finished).toBe(false);
    expect(sent!.bytes).toBeLessThanOrEqual(SSO_MAX_RESPONSE_BYTES + BUFFERS);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string; details: { reason: string } } }).error).toMatchObject({
      code: 'fetch_failed',
      details: { reason: 'too_large' },
    });
  });

  it('/sso/start with an issuer that fails answers the sign-in page with a message, 502, not JSON', async () => {
    for (const kind of ['broken', 'huge-discovery']) {
      const { team, domain } = await fixtureTeam();
      // The issuer went bad after it was configured.
      const issuer = issuerOf(kind);
      await env.DB.prepare('UPDATE sso_configs SET issuer = ? WHERE account_id = ?').bind(issuer, team.accountId).run();
      const res = await browser().fetch(`/sso/start?email=${encodeURIComponent(`ann@${domain}`)}`);
      expect(res.status, kind).toBe(502);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).toContain('<h1>Sign in with SSO</h1>');
      expect(html).toContain('could not be reached');
      if (kind === 'huge-discovery')
        expect((await sentBy(issuer))!.bytes).toBeLessThanOrEqual(SSO_MAX_RESPONSE_BYTES + BUFFERS);
    }
  });

  it('a token endpoint that answers 300 MB is read no further than the limit: the callback is a 502 page', async () => {
    const { team, domain, issuer } = await fixtureTeam('huge-token');
    const person = browser();
    const start = await person.fetch(`/sso/start?email=${encodeURIComponent(`bo@${domain}`)}`);
    expect(start.status, await start.clone().text()).toBe(302);
    // The fixture's authorization endpoint sends the browser straight back with a code.
    const back = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    const callback = back.headers.get('location')!;
    expect(callback.startsWith(`${ORIGIN}/sso/callback?`)).toBe(true);
    const res = await person.fetch(callback.slice(ORIGIN.length));
    const sent = await sentBy(issuer);
    expect(sent!.finished).toBe(false);
    expect(sent!.bytes).toBeLessThanOrEqual(SSO_MAX_RESPONSE_BYTES + BUFFERS);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('could not be reached');
    const audit = await env.DB.prepare(
      "SELECT details FROM audit_logs WHERE account_id = ? AND action = 'session.sign_in_failed'",
    )
      .bind(team.accountId)
      .first<{ details: string }>();
    expect(JSON.parse(audit!.details)).toMatchObject({ method: 'sso', reason: 'issuer_unavailable' });
  });
});
