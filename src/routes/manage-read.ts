// What the management API's plain reads share: GET of the account's own list, allowed to every role
// (`read`), answering the list or 401/403; and the `meta` every answer of the management API carries.
import type { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { accountAuth } from '../http/account-auth.ts';
import type { AppEnv } from '../http/context.ts';
import { manageRoute } from './manage-route.ts';
import { requires } from './requires.ts';
import { jsonOk } from './schemas.ts';

/** GET `path` for any member or key of the account: 200 with `schema` (`what` describes it), or 401 / 403. */
export const readRoute = <P extends string, S extends z.ZodType>(path: P, summary: string, what: string, schema: S) =>
  manageRoute(requires('read'), [accountAuth], {
    method: 'get' as const,
    path,
    summary,
    responses: {
      200: jsonOk(what, schema),
    },
    errors: ['email_unverified'],
  });

/** The `meta` of a management answer: the request's id. */
export const requestMeta = (c: Context<AppEnv>) => ({ request_id: c.var.requestId });
