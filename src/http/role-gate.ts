// The one role check of the console's pages and the management endpoints: every such route is in
// ROUTE_PERMISSIONS with the permission it needs (src/teams/roles.ts), and this middleware, in front of
// all routes, refuses a signed-in member whose role lacks it: 403 JSON on /api/, a 403 page elsewhere.
// A manage key is judged as KEY_ROLE. Requests with neither go on, and the route asks them to sign in.
// The role-check test walks the app's routes and fails on any console or management route missing here.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { can, KEY_ROLE, type Permission } from '../teams/roles.ts';
import { messagePage } from '../web/views/message.ts';
import type { AppEnv } from './context.ts';
import { csrfTokenFor } from './csrf.ts';
import { sendPage } from './pages.ts';
import { roleRefusal } from './roles.ts';
import { loadSession } from './session.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteRule {
  method: Method;
  /** Hono-style path: `:name` is one segment. */
  path: string;
  permission: Permission;
  /** A member may do this to themself whatever their role (leave the team). */
  self?: true;
}

const r = (method: Method, path: string, permission: Permission, self?: true): RouteRule => ({
  method,
  path,
  permission,
  ...(self ? { self } : {}),
});

export const ROUTE_PERMISSIONS: readonly RouteRule[] = [
  // Console pages.
  r('GET', '/', 'read'),
  r('GET', '/keys', 'read'),
  r('POST', '/keys', 'keys:write'),
  r('GET', '/keys/:id/revoke', 'keys:write'),
  r('POST', '/keys/:id/revoke', 'keys:write'),
  r('GET', '/try', 'keys:write'),
  r('GET', '/webhooks', 'read'),
  r('POST', '/webhooks', 'webhooks:write'),
  r('GET', '/webhooks/:id', 'read'),
  r('POST', '/webhooks/:id', 'webhooks:write'),
  r('POST', '/webhooks/:id/test', 'webhooks:write'),
  r('POST', '/webhooks/:id/rotate-secret', 'webhooks:write'),
  r('POST', '/webhooks/:id/delete', 'webhooks:write'),
  r('POST', '/webhooks/:id/deliveries/:msg/retry', 'webhooks:write'),
  r('GET', '/members', 'read'),
  r('POST', '/members/invitations', 'members:write'),
  r('POST', '/members/:id/role', 'members:write'),
  r('POST', '/members/:id/remove', 'members:write', true),
  r('GET', '/audit', 'audit:read'),
  r('GET', '/audit/export', 'audit:read'),
  r('GET', '/sso', 'sso:write'),
  r('POST', '/sso', 'sso:write'),
  r('POST', '/sso/delete', 'sso:write'),
  // Signed image URLs: their secrets and allowed source hosts spend the account's compressions, as keys do.
  r('GET', '/signing-secrets', 'read'),
  r('POST', '/signing-secrets', 'keys:write'),
  r('GET', '/signing-secrets/:id/delete', 'keys:write'),
  r('POST', '/signing-secrets/:id/delete', 'keys:write'),
  r('GET', '/account', 'account:owner'),
  r('POST', '/account/delete', 'account:owner'),
  // Console JSON and the management API.
  r('GET', '/api/v1/usage', 'read'),
  r('POST', '/api/v1/console/compress', 'keys:write'),
  // The "Try it" planner, for whoever may use Try it.
  r('POST', '/api/v1/console/compress/plan', 'keys:write'),
  r('GET', '/api/v1/keys', 'read'),
  r('POST', '/api/v1/keys', 'keys:write'),
  r('DELETE', '/api/v1/keys/:id', 'keys:write'),
  r('GET', '/api/v1/webhooks', 'read'),
  r('POST', '/api/v1/webhooks', 'webhooks:write'),
  r('GET', '/api/v1/webhooks/:id', 'read'),
  r('PATCH', '/api/v1/webhooks/:id', 'webhooks:write'),
  r('DELETE', '/api/v1/webhooks/:id', 'webhooks:write'),
  r('POST', '/api/v1/webhooks/:id/test', 'webhooks:write'),
  r('POST', '/api/v1/webhooks/:id/rotate-secret', 'webhooks:write'),
  r('GET', '/api/v1/webhooks/:id/deliveries', 'read'),
  r('POST', '/api/v1/webhooks/:id/deliveries/:msg_id/retry', 'webhooks:write'),
  r('GET', '/api/v1/members', 'read'),
  r('POST', '/api/v1/members/invitations', 'members:write'),
  r('PATCH', '/api/v1/members/:id', 'members:write'),
  r('DELETE', '/api/v1/members/:id', 'members:write', true),
  r('GET', '/api/v1/sso', 'sso:write'),
  r('PUT', '/api/v1/sso', 'sso:write'),
  r('DELETE', '/api/v1/sso', 'sso:write'),
  r('GET', '/api/v1/signing-secrets', 'read'),
  r('POST', '/api/v1/signing-secrets', 'keys:write'),
  r('DELETE', '/api/v1/signing-secrets/:id', 'keys:write'),
  r('GET', '/api/v1/image-source-hosts', 'read'),
  r('PUT', '/api/v1/image-source-hosts', 'keys:write'),
  r('GET', '/api/v1/audit-logs', 'audit:read'),
  r('GET', '/api/v1/audit-logs/export', 'audit:read'),
];

interface Compiled {
  rule: RouteRule;
  pattern: RegExp;
}

const compiled: Compiled[] = ROUTE_PERMISSIONS.map((rule) => ({
  rule,
  pattern: new RegExp(`^${rule.path.replace(/:[a-z_]+/g, '(?<$&>[^/]+)').replace(/\(\?<:/g, '(?<')}/?$`),
}));

export function ruleFor(method: string, path: string): { rule: RouteRule; id: string | undefined } | undefined {
  // HEAD is answered by the GET route.
  const m = method === 'HEAD' ? 'GET' : method;
  for (const c of compiled) {
    if (c.rule.method !== m) continue;
    const match = c.pattern.exec(path);
    if (match) return { rule: c.rule, id: match.groups?.id };
  }
  return undefined;
}

const carriesKey = (c: Context<AppEnv>): boolean =>
  c.req.raw.headers.has('authorization') || c.req.raw.headers.has('x-api-key');
const done = async (): Promise<void> => undefined;

export const roleGate = createMiddleware<AppEnv>(async (c, next) => {
  const found = ruleFor(c.req.method, c.req.path);
  if (!found) return next();
  const { rule, id } = found;
  const api = c.req.path.startsWith('/api/');
  if (api && carriesKey(c)) {
    if (!can(KEY_ROLE, rule.permission)) throw roleRefusal(`${KEY_ROLE} (manage key)`, rule.permission);
    return next();
  }
  await loadSession(c, done);
  const session = c.var.session;
  if (!session || can(session.member.role, rule.permission) || (rule.self && id === session.member.id)) return next();
  if (api) throw roleRefusal(session.member.role, rule.permission);
  const message = `Your role in this account (${session.member.role}) does not allow this page or action. Ask an owner or admin of the account.`;
  return sendPage(
    c,
    messagePage({ title: 'Not allowed', message, csrf: csrfTokenFor(c), account: session.account }),
    403,
  );
});
