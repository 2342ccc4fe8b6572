// API keys over the management API: list, create (the full key is in this answer only), revoke. Callable
// with a `manage` key or the console session (accountAuth); the rules are the console's (src/keys/service.ts).
import { manageDoc, manageRoute } from './manage-route.ts';
import { requires } from './requires.ts';
import { readRoute, requestMeta } from './manage-read.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { createKey, listKeys, revokeKey } from '../keys/service.ts';
import { MAX_KEYS_CREATED_PER_DAY } from '../keys/limits.ts';
import { MAX_ACTIVE_KEYS } from '../keys/limits.ts';
import { clock } from '../env.ts';
import { accountAuth } from '../http/account-auth.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import type { AppEnv } from '../http/context.ts';
import { ApiError } from '../errors.ts';
import { parseJsonBody } from '../http/json-body.ts';
import { roleRefusal } from '../http/roles.ts';
import { secondsUntil, toUnixSeconds } from '../metering/windows.ts';
import { CreateKeyBody, CreatedKey, KeyIdParam, KeyList, RevokedKey } from './console-schema.ts';
import { MANAGE_NOTE } from './manage-schema.ts';
import { jsonOk } from './schemas.ts';

export const KEYS_PATH = '/api/v1/keys';

const listRoute = readRoute(
  KEYS_PATH,
  "The account's API keys, newest first, revoked ones included",
  'The keys (never the keys themselves: only prefixes)',
  KeyList,
);

const createDoc = manageDoc({
  method: 'post',
  path: KEYS_PATH,
  summary: 'Create an API key; the full key is in this answer and never again',
  description:
    `Scopes: image (the Image API), tools (the Tools API) or both; or manage alone (this API). A manage key acts as an admin, so only ` +
    `owners and admins (and manage keys) make one (403 forbidden otherwise); it records its maker (a manage key's maker is the one of the key ` +
    `that made it) and is revoked when that member is removed or demoted below admin. An account holds at most ${MAX_ACTIVE_KEYS} active keys (400 above) and creates ` +
    `at most ${MAX_KEYS_CREATED_PER_DAY} keys per UTC day, revoked ones included (429 rate_limit_exceeded with Retry-After above). ` +
    `Sends the key.created webhook event.${MANAGE_NOTE}`,
  request: { body: { required: true, content: { 'application/json': { schema: CreateKeyBody } } } },
  responses: {
    201: jsonOk('The new key, with the full key in data.key', CreatedKey),
  },
  errors: ['bad_request', 'email_unverified', 'payload_too_large', 'rate_limit_exceeded'],
});

const revokeRoute = manageRoute(requires('keys:write'), [accountAuth], {
  method: 'delete',
  path: `${KEYS_PATH}/{id}`,
  summary: 'Revoke an API key: refused everywhere from the next request on',
  description: `Revoking a revoked key changes nothing and answers 200 again. Sends the key.revoked webhook event (once).${MANAGE_NOTE}`,
  request: { params: KeyIdParam },
  responses: {
    200: jsonOk('The key, now revoked', RevokedKey),
  },
  errors: ['email_unverified', 'not_found'],
});

export function registerKeys(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listRoute, async (c) => {
    const keys = await listKeys(c.env.DB, c.var.principal.accountId);
    return c.json({ data: keys, meta: { ...requestMeta(c), total: keys.length } }, 200);
  });

  // The body is read by hand (capped while streaming) and checked with the documented schema.
  app.openAPIRegistry.registerPath(createDoc);
  app.post(KEYS_PATH, requires('keys:write'), accountAuth, async (c) => {
    const body = await parseJsonBody(c.req.raw, CreateKeyBody, FORM_BODY_MAX_BYTES, '{"name":"CI","scopes":["image"]}');
    const { accountId, role, maker } = c.var.principal;
    const created = await createKey(c.env, accountId, body, { role, maker }, clock(c.env), auditOrigin(c));
    if (!created.ok && created.reason === 'forbidden') throw roleRefusal(role, 'keys:manage');
    if (!created.ok && created.reason === 'maker_lost_role') {
      throw new ApiError(
        'forbidden',
        'the member this key or session acts for is no longer an owner or admin, so it cannot make manage keys',
        { details: { maker } },
      );
    }
    if (!created.ok && created.reason === 'too_many_today') {
      const retryAfter = secondsUntil(created.reset, clock(c.env));
      throw new ApiError(
        'rate_limit_exceeded',
        `an account may create at most ${created.max} keys per day (UTC), revoked ones included; try again in ${retryAfter} s, after 00:00 UTC`,
        {
          details: { max: created.max, reset: toUnixSeconds(created.reset) },
          headers: { 'Retry-After': String(retryAfter) },
        },
      );
    }
    if (!created.ok) {
      throw new ApiError('bad_request', `an account may hold at most ${created.max} active keys; revoke one first`, {
        details: { max: created.max },
      });
    }
    c.header('Location', `${KEYS_PATH}/${created.key.id}`);
    return c.json({ data: created.key, meta: requestMeta(c) }, 201);
  });

  app.openapi(revokeRoute, async (c) => {
    const key = await revokeKey(
      c.env,
      c.var.principal.accountId,
      c.req.valid('param').id,
      clock(c.env),
      auditOrigin(c),
    );
    if (!key) throw new ApiError('not_found', 'no key with this id in your account', { param: 'id' });
    return c.json({ data: key, meta: requestMeta(c) }, 200);
  });
}
