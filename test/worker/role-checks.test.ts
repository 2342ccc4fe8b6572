// Role checks, table-driven: every console page and management endpoint, called by an owner, an admin,
// a developer, a viewer and a manage key, is refused (403, naming the permission) exactly when the
// role table of docs/teams.md says so. A second test walks the app's routes: a console or management route
// that declares no permission where it is registered, or is missing from this table, fails it, so none
// goes unchecked.
import { PAGE_ALIASES } from '../../src/routes/fallback-pages.ts';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { requirementOf } from '../../src/routes/requires.ts';
import type { Role } from '../../src/teams/roles.ts';
import { manage } from './webhook-helpers.ts';
import { makeKey } from './helpers.ts';
import { enterpriseTeam, join, type Person } from './team-helpers.ts';

/** The least role that may call the route (docs/teams.md: owner ⊃ admin ⊃ developer ⊃ viewer). */
type Least = 'viewer' | 'developer' | 'admin' | 'owner';
const RANK: Record<Role, number> = { viewer: 0, developer: 1, admin: 2, owner: 3 };

/** A well-formed id of each resource, so a request reaches the role check before any lookup. */
const IDS: Record<string, string> = {
  keys: 'key_0000000000000000',
  webhooks: 'ep_0000000000000000',
  members: 'mem_0000000000000000',
  'signing-secrets': 'sig_0000000000000000',
  deliveries: 'msg_x',
  domains: 'example.com',
};
/** The query a route cannot be called without. */
const QUERY: Record<string, string> = { '/audit/export': '?format=csv', '/api/v1/audit-logs/export': '?format=ndjson' };
/** A concrete path of a route: each `:param` given the id of the resource before it. */
const pathOf = (route: string): string =>
  route.replace(/([a-z-]+)\/:[a-z_]+/g, (_, resource: string) => `${resource}/${IDS[resource]}`) + (QUERY[route] ?? '');

/** [method, route as registered, least role]. */
const TABLE: [string, string, Least][] = [
  ['GET', '/', 'viewer'],
  ['GET', '/keys', 'viewer'],
  ['POST', '/keys', 'developer'],
  ['GET', '/keys/:id/revoke', 'developer'],
  ['POST', '/keys/:id/revoke', 'developer'],
  ['GET', '/try', 'developer'],
  ['GET', '/webhooks', 'viewer'],
  ['POST', '/webhooks', 'admin'],
  ['GET', '/webhooks/:id', 'viewer'],
  ['POST', '/webhooks/:id', 'admin'],
  ['POST', '/webhooks/:id/test', 'admin'],
  ['POST', '/webhooks/:id/rotate-secret', 'admin'],
  ['POST', '/webhooks/:id/delete', 'admin'],
  ['POST', '/webhooks/:id/deliveries/:msg/retry', 'admin'],
  ['GET', '/members', 'viewer'],
  ['POST', '/members/invitations', 'admin'],
  ['POST', '/members/invitations/:id/send', 'admin'],
  ['POST', '/members/:id/role', 'admin'],
  ['POST', '/members/:id/remove', 'admin'],
  ['GET', '/audit', 'admin'],
  ['GET', '/audit/export', 'admin'],
  ['GET', '/sso', 'admin'],
  ['POST', '/sso', 'admin'],
  ['POST', '/sso/delete', 'admin'],
  ['POST', '/sso/domains/verify', 'admin'],
  ['GET', '/account', 'owner'],
  ['POST', '/account/delete', 'owner'],
  ['GET', '/api/v1/usage', 'viewer'],
  ['POST', '/api/v1/console/compress', 'developer'],
  ['POST', '/api/v1/console/compress/plan', 'developer'],
  ['GET', '/api/v1/keys', 'viewer'],
  ['POST', '/api/v1/keys', 'developer'],
  ['DELETE', '/api/v1/keys/:id', 'developer'],
  ['GET', '/api/v1/webhooks', 'viewer'],
  ['POST', '/api/v1/webhooks', 'admin'],
  ['GET', '/api/v1/webhooks/:id', 'viewer'],
  ['PATCH', '/api/v1/webhooks/:id', 'admin'],
  ['DELETE', '/api/v1/webhooks/:id', 'admin'],
  ['POST', '/api/v1/webhooks/:id/test', 'admin'],
  ['POST', '/api/v1/webhooks/:id/rotate-secret', 'admin'],
  ['GET', '/api/v1/webhooks/:id/deliveries', 'viewer'],
  ['POST', '/api/v1/webhooks/:id/deliveries/:msg_id/retry', 'admin'],
  ['GET', '/api/v1/members', 'viewer'],
  ['POST', '/api/v1/members/invitations', 'admin'],
  ['POST', '/api/v1/members/invitations/:id/send', 'admin'],
  ['PATCH', '/api/v1/members/:id', 'admin'],
  ['DELETE', '/api/v1/members/:id', 'admin'],
  ['GET', '/api/v1/sso', 'admin'],
  ['PUT', '/api/v1/sso', 'admin'],
  ['DELETE', '/api/v1/sso', 'admin'],
  ['POST', '/api/v1/sso/domains/:domain/verify', 'admin'],
  ['GET', '/api/v1/audit-logs', 'admin'],
  ['GET', '/api/v1/audit-logs/export', 'admin'],
  ['GET', '/signing-secrets', 'viewer'],
  ['POST', '/signing-secrets', 'developer'],
  ['GET', '/signing-secrets/:id/delete', 'developer'],
  ['POST', '/signing-secrets/:id/delete', 'developer'],
  ['GET', '/api/v1/signing-secrets', 'viewer'],
  ['POST', '/api/v1/signing-secrets', 'developer'],
  ['DELETE', '/api/v1/signing-secrets/:id', 'developer'],
  ['GET', '/api/v1/image-source-hosts', 'viewer'],
  ['PUT', '/api/v1/image-source-hosts', 'developer'],
];

/** Routes open to anyone, or authenticated by an image/tools key or the operator token: no member role applies. */
const PUBLIC = [
  '/signin',
  '/signup',
  '/signout',
  '/verify-email',
  '/verify-email/resend',
  '/forgot-password',
  '/reset-password',
  '/docs',
  '/docs/:page',
  '/invitations/:token',
  '/sso/start',
  '/sso/callback',
  // The proof an existing member gives after an SSO sign-in: its cookie, not a session, names the member.
  '/sso/link',
  '/sso/link/mail',
  '/sso/link/confirm',
  '/api/v1/health',
  '/api/v1/account',
  '/api/v1/openapi.json',
  '/api/v1/compress',
  '/api/v1/tools',
  '/api/v1/tools/:slug',
  '/api/v1/categories',
  '/api/v1/qr',
  '/api/v1/qr/image',
  '/api/v1/meta-tags',
  '/api/v1/meta-tags/bulk',
  // Key-free: its signature is the credential.
  '/api/v1/img/:account_id/:signature/:options/:source',
];
const isPublic = (path: string): boolean =>
  PUBLIC.includes(path) ||
  // Redirects from what people type (/login) to the real pages, which check roles themselves.
  Object.hasOwn(PAGE_ALIASES, path) ||
  path.startsWith('/internal/') ||
  path.startsWith('/assets/') ||
  path === '*' ||
  path === '/*';

async function callAs(person: Person, method: string, path: string): Promise<Response> {
  if (path.startsWith('/api/'))
    return person.browser.json(path, {
      method,
      csrf: person.csrf,
      ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }),
    });
  if (method === 'GET') return person.browser.fetch(path);
  return person.browser.post(path, { _csrf: person.csrf });
}

/** A refusal by the role check, told apart from other 403s (CSRF, tier) by what it says. */
async function roleRefused(res: Response, api: boolean): Promise<boolean> {
  if (res.status !== 403) return false;
  const text = await res.text();
  return api
    ? (JSON.parse(text) as { error: { details?: { permission?: string } } }).error.details?.permission !== undefined
    : text.includes('does not allow this page');
}

describe('role checks', () => {
  it('refuse exactly the routes a role may not use, for every console route and management endpoint', async () => {
    const team = await enterpriseTeam();
    const people: Person[] = [
      team.owner,
      await join(team, 'admin'),
      await join(team, 'developer'),
      await join(team, 'viewer'),
    ];
    const key = await makeKey({ tools: 'enterprise', scopes: ['manage'] });
    const mismatches: string[] = [];
    for (const [method, route, least] of TABLE) {
      const path = pathOf(route);
      const api = path.startsWith('/api/');
      for (const person of people) {
        const refused = await roleRefused(await callAs(person, method, path), api);
        if (refused !== RANK[person.role] < RANK[least])
          mismatches.push(`${person.role} ${method} ${path}: ${refused ? 'refused' : 'allowed'}`);
      }
      if (api) {
        const res = await manage(key.key, path, {
          method,
          ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }),
        });
        if ((await roleRefused(res, true)) !== (least === 'owner')) mismatches.push(`manage key ${method} ${path}`);
      }
    }
    expect(mismatches).toEqual([]);
  }, 60_000);

  it('cover every console and management route the app has, each declaring its permission where it is registered', () => {
    const app = createApp();
    const name = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
    const routes = new Set(app.routes.filter((r) => r.method !== 'ALL').map(name));
    const declaring = new Set(app.routes.filter((r) => requirementOf(r.handler) !== undefined).map(name));
    const guarded = [...routes].filter((r) => !isPublic(r.slice(r.indexOf(' ') + 1)));
    // A route registered without `requires(...)` would be open to every role.
    expect(guarded.filter((r) => !declaring.has(r))).toEqual([]);
    const known = new Set(TABLE.map(([method, route]) => `${method} ${route}`));
    expect(guarded.filter((r) => !known.has(r))).toEqual([]);
    // And the table names no route that does not exist (a typo would check nothing).
    expect([...known].filter((r) => !routes.has(r))).toEqual([]);
  });
});
