// The role check of the console's pages and the management endpoints, declared where each route is
// registered: `requires('keys:write')` in front of its other middleware. A signed-in member whose role
// lacks the permission (src/teams/roles.ts) is refused: 403 JSON on /api/, a 403 page elsewhere. A manage
// key is judged as KEY_ROLE. Requests with neither go on, and the route asks them to sign in.
// The role-check test walks every route of the app and fails on a console or management route that
// declares no permission, so none goes unchecked.
import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import { KEY_ROLE, type Permission, roleMay } from '../teams/roles.ts';
import { messagePage } from '../web/views/message.ts';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor } from '../http/csrf.ts';
import { sendPage } from '../http/pages.ts';
import { roleRefusal } from '../http/roles.ts';
import { loadSession } from '../http/session.ts';

export interface Requirement {
  permission: Permission;
  /** A member may do this to themself whatever their role (leave the team): the route's `:id` is theirs. */
  self: boolean;
}

const declared = new WeakMap<MiddlewareHandler<AppEnv>, Requirement>();

/** The permission a route's handler declares, if it is a `requires` middleware. */
export const requirementOf = (handler: unknown): Requirement | undefined =>
  declared.get(handler as MiddlewareHandler<AppEnv>);

const carriesKey = (c: Context<AppEnv>): boolean =>
  c.req.raw.headers.has('authorization') || c.req.raw.headers.has('x-api-key');
const done = async (): Promise<void> => undefined;

export function requires(permission: Permission, options: { self?: true } = {}): MiddlewareHandler<AppEnv> {
  const self = options.self === true;
  const middleware = createMiddleware<AppEnv>(async (c, next) => {
    const api = c.req.path.startsWith('/api/');
    if (api && carriesKey(c)) {
      if (!roleMay(KEY_ROLE, permission)) throw roleRefusal(`${KEY_ROLE} (manage key)`, permission);
      return next();
    }
    await loadSession(c, done);
    const session = c.var.session;
    if (!session || roleMay(session.member.role, permission) || (self && c.req.param('id') === session.member.id)) {
      return next();
    }
    if (api) throw roleRefusal(session.member.role, permission);
    const message = `Your role in this account (${session.member.role}) does not allow this page or action. Ask an owner or admin of the account.`;
    return sendPage(
      c,
      messagePage({ title: 'Not allowed', message, csrf: csrfTokenFor(c), account: session.account }),
      403,
    );
  });
  declared.set(middleware, { permission, self });
  return middleware;
}
