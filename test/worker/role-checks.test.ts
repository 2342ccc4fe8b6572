// Role checks, table-driven: every console page and management endpoint, called by an owner, an admin,
// a developer, a viewer and a manage key, is refused (403, naming the permission) exactly when the
// role table of docs/teams.md says so. A second test walks the app's routes: a console or management route
// that declares no permission where it is registered, or is missing from this table, fails it, so none
// goes unchecked.
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

const K = 'key_0000000000000000';
const E = 'ep_0000000000000000';
const M = 'mem_0000000000000000';

/** [method, route as registered, a concrete path, least role]. */
const TABLE: [string, string, string, Least][] = [
  ['GET', '/', '/', 'viewer'],
  ['GET', '/keys', '/keys', 'viewer'],
  ['POST', '/keys', '/keys', 'developer'],
  ['GET', '/keys/:id/revoke', `/keys/${K}/revoke`, 'developer'],
  ['POST', '/keys/:id/revoke', `/keys/${K}/revoke`, 'developer'],
  ['GET', '/try', '/try', 'developer'],
  ['GET', '/webhooks', '/webhooks', 'viewer'],
  ['POST', '/webhooks', '/webhooks', 'admin'],
  ['GET', '/webhooks/:id', `/webhooks/${E}`, 'viewer'],
  ['POST', '/webhooks/:id', `/webhooks/${E}`, 'admin'],
  ['POST', '/webhooks/:id/test', `/webhooks/${E}/test`, 'admin'],
  ['POST', '/webhooks/:id/rotate-secret', `/webhooks/${E}/rotate-secret`, 'admin'],
  ['POST', '/webhooks/:id/delete', `/webhooks/${E}/delete`, 'admin'],
  ['POST', '/webhooks/:id/deliveries/:msg/retry', `/webhooks/${E}/deliveries/msg_x/retry`, 'admin'],
  ['GET', '/members', '/members', 'viewer'],
  ['POST', '/members/invitations', '/members/invitations', 'admin'],
  ['POST', '/members/:id/role', `/members/${M}/role`, 'admin'],
  ['POST', '/members/:id/remove', `/members/${M}/remove`, 'admin'],
  ['GET', '/audit', '/audit', 'admin'],
  ['GET', '/audit/export', '/audit/export?format=csv', 'admin'],
  ['GET', '/sso', '/sso', 'admin'],
  ['POST', '/sso', '/sso', 'admin'],
  ['POST', '/sso/delete', '/sso/delete', 'admin'],
  ['GET', '/account', '/account', 'owner'],
  ['POST', '/account/delete', '/account/delete', 'owner'],
  ['GET', '/api/v1/usage', '/api/v1/usage', 'viewer'],
  ['POST', '/api/v1/console/compress', '/api/v1/console/compress', 'developer'],
  ['POST', '/api/v1/console/compress/plan', '/api/v1/console/compress/plan', 'developer'],
  ['GET', '/api/v1/keys', '/api/v1/keys', 'viewer'],
  ['POST', '/api/v1/keys', '/api/v1/keys', 'developer'],
  ['DELETE', '/api/v1/keys/:id', `/api/v1/keys/${K}`, 'developer'],
  ['GET', '/api/v1/webhooks', '/api/v1/webhooks', 'viewer'],
  ['POST', '/api/v1/webhooks', '/api/v1/webhooks', 'admin'],
  ['GET', '/api/v1/webhooks/:id', `/api/v1/webhooks/${E}`, 'viewer'],
  ['PATCH', '/api/v1/webhooks/:id', `/api/v1/webhooks/${E}`, 'admin'],
  ['DELETE', '/api/v1/webhooks/:id', `/api/v1/webhooks/${E}`, 'admin'],
  ['POST', '/api/v1/webhooks/:id/test', `/api/v1/webhooks/${E}/test`, 'admin'],
  ['POST', '/api/v1/webhooks/:id/rotate-secret', `/api/v1/webhooks/${E}/rotate-secret`, 'admin'],
  ['GET', '/api/v1/webhooks/:id/deliveries', `/api/v1/webhooks/${E}/deliveries`, 'viewer'],
  ['POST', '/api/v1/webhooks/:id/deliveries/:msg_id/retry', `/api/v1/webhooks/${E}/deliveries/msg_x/retry`, 'admin'],
  ['GET', '/api/v1/members', '/api/v1/members', 'viewer'],
  ['POST', '/api/v1/members/invitations', '/api/v1/members/invitations', 'admin'],
  ['PATCH', '/api/v1/members/:id', `/api/v1/members/${M}`, 'admin'],
  ['DELETE', '/api/v1/members/:id', `/api/v1/members/${M}`, 'admin'],
  ['GET', '/api/v1/sso', '/api/v1/sso', 'admin'],
  ['PUT', '/api/v1/sso', '/api/v1/sso', 'admin'],
  ['DELETE', '/api/v1/sso', '/api/v1/sso', 'admin'],
  ['GET', '/api/v1/audit-logs', '/api/v1/audit-logs', 'admin'],
  ['GET', '/api/v1/audit-logs/export', '/api/v1/audit-logs/export?format=ndjson', 'admin'],
  ['GET', '/signing-secrets', '/signing-secrets', 'viewer'],
  ['POST', '/signing-secrets', '/signing-secrets', 'developer'],
  ['GET', '/signing-secrets/:id/delete', '/signing-secrets/sig_0000000000000000/delete', 'developer'],
  ['POST', '/signing-secrets/:id/delete', '/signing-secrets/sig_0000000000000000/delete', 'developer'],
  ['GET', '/api/v1/signing-secrets', '/api/v1/signing-secrets', 'viewer'],
  ['POST', '/api/v1/signing-secrets', '/api/v1/signing-secrets', 'developer'],
  ['DELETE', '/api/v1/signing-secrets/:id', '/api/v1/signing-secrets/sig_0000000000000000', 'developer'],
  ['GET', '/api/v1/image-source-hosts', '/api/v1/image-source-hosts', 'viewer'],
  ['PUT', '/api/v1/image-source-hosts', '/api/v1/image-source-hosts', 'developer'],
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
    for (const [method, , path, least] of TABLE) {
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
