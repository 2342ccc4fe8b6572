// Single sign-on in the Worker tests: the real OpenID provider (test/fixtures/oidc.ts) reached by a browser
// in miniature, SSO configured for a team, and its domains proved at the DNS-over-HTTPS resolver fixture
// (test/fixtures/doh.ts).
import { expect, inject } from 'vitest';
import { publishTxt } from '../fixtures/doh-client.ts';
import { TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../fixtures/oidc-client.ts';
import type { Browser } from './console-helpers.ts';
import type { Team } from './team-helpers.ts';

export const ISSUER = inject('oidcIssuer');
export const FIXTURE = inject('fixtureOrigin');
export const PRIVATE_JWK = JSON.parse(inject('oidcPrivateJwk')) as Record<string, unknown>;
export const ORIGIN = 'https://api.shrinkray.test';
export const RESOLVER = inject('dnsResolver');

export interface DomainState {
  domain: string;
  verified: boolean;
  txt_name: string;
  txt_value: string;
}

export const uniqueDomain = (): string => `corp-${crypto.randomUUID().slice(0, 8)}.example`;

/** A person's browser at the provider: a cookie jar, redirects followed by hand until they come back to us. */
export async function throughProvider(authorizationUrl: string, login: string): Promise<string> {
  const jar = new Map<string, string>();
  const go = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (jar.size) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    return res;
  };
  let res = await go(authorizationUrl);
  for (let hops = 0; hops < 10; hops++) {
    const location = res.headers.get('location');
    if (location) {
      const next = new URL(location, ISSUER).href;
      if (next.startsWith(ORIGIN)) return next;
      res = await go(next);
      continue;
    }
    // The provider's login form: any login (our email) and password.
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    expect(action, html.slice(0, 500)).toBeDefined();
    res = await go(new URL(action!, ISSUER).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ prompt: 'login', login, password: 'anything' }),
    });
  }
  throw new Error('the provider never sent the browser back');
}

/** The TXT record of a domain's claim published at the resolver fixture, and the domain proved over the API. */
export async function prove(team: Team, state: DomainState): Promise<Response> {
  await publishTxt(RESOLVER, state.txt_name, [state.txt_value]);
  return team.owner.browser.json(`/api/v1/sso/domains/${state.domain}/verify`, {
    method: 'POST',
    csrf: team.owner.csrf,
  });
}

/** PUT /api/v1/sso for one domain; when it is stored, the domain is proved too unless `prove` is false. */
export async function configure(
  team: Team,
  domain: string,
  requireSso = false,
  issuer = ISSUER,
  options: { prove?: boolean } = {},
): Promise<Response> {
  const res = await team.owner.browser.json('/api/v1/sso', {
    method: 'PUT',
    csrf: team.owner.csrf,
    body: {
      issuer,
      client_id: TEST_CLIENT_ID,
      client_secret: TEST_CLIENT_SECRET,
      domains: [domain],
      require_sso: requireSso,
    },
  });
  if (res.status === 200 && options.prove !== false) {
    const state = ((await res.clone().json()) as { data: { domains: DomainState[] } }).data.domains[0]!;
    const proved = await prove(team, state);
    expect(proved.status, await proved.clone().text()).toBe(200);
    expect(((await proved.json()) as { data: DomainState }).data.verified).toBe(true);
  }
  return res;
}

/** /sso/start → the provider → /sso/callback, in a console browser; returns the callback's answer. */
export async function ssoSignIn(browser: Browser, email: string): Promise<Response> {
  const start = await browser.fetch(`/sso/start?email=${encodeURIComponent(email)}`);
  expect(start.status, await start.clone().text()).toBe(302);
  const callback = await throughProvider(start.headers.get('location')!, email);
  return browser.fetch(callback.slice(ORIGIN.length));
}
