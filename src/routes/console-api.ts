// The console's JSON endpoints, for a signed-in browser session (cookie) rather than an API key: key
// management, usage, and the "Try it" compressor. Unsafe methods also need the X-CSRF-Token header.
import { createRoute, z, type OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { consoleKeyHash, createKey, listKeys, MAX_KEYS_CREATED_PER_DAY, revokeKey } from '../console/keys.ts';
import { MAX_ACTIVE_KEYS } from '../console/limits.ts';
import { accountUsage } from '../console/usage.ts';
import { clock } from '../env.ts';
import { secondsUntil, toUnixSeconds } from '../metering/windows.ts';
import type { AppEnv } from '../http/context.ts';
import { requireCsrfHeader } from '../http/csrf.ts';
import { ApiError } from '../http/errors.ts';
import { readJsonBody } from '../http/json-body.ts';
import { loadSession, requireSession } from '../http/session.ts';
import { badRequestFrom } from '../http/validation.ts';
import { compressDoc } from './compress-doc.ts';
import { compressMetered } from './compress.ts';
import {
  CONSOLE_TAG, CreateKeyBody, CreatedKey, KeyIdParam, KeyList, RevokedKey, SESSION_SECURITY, UsageResponse,
} from './console-schema.ts';
import { errorResponses } from './schemas.ts';

export const KEYS_PATH = '/api/v1/keys';
export const CONSOLE_COMPRESS_PATH = '/api/v1/console/compress';

const session = [loadSession, requireSession] as const;
const CSRF_NOTE = ' Needs the `X-CSRF-Token` header with the token of the console page.';
// Documented as a parameter so the reference and its curl lines show it; checked by requireCsrfHeader,
// which runs first and answers 403 without it.
const CsrfHeader = z.object({
  'x-csrf-token': z.string().openapi({ description: 'The session\'s CSRF token: the content of <meta name="csrf-token"> on any console page', example: '$CSRF' }),
});

const meta = (c: Context<AppEnv>) => ({ request_id: c.var.requestId });
const accountOf = (c: Context<AppEnv>) => c.var.session!.account;

const listRoute = createRoute({
  method: 'get',
  path: KEYS_PATH,
  summary: "The signed-in account's API keys, newest first, revoked ones included",
  tags: [CONSOLE_TAG],
  security: SESSION_SECURITY,
  middleware: [...session] as const,
  responses: {
    200: { description: 'The keys (never the keys themselves: only prefixes)', content: { 'application/json': { schema: KeyList } } },
    ...errorResponses('unauthorized'),
  },
});

const createDoc: RouteConfig = {
  method: 'post',
  path: KEYS_PATH,
  summary: 'Create an API key; the full key is in this answer and never again',
  description:
    `Scopes: image (API A), tools (API B) or both. An account holds at most ${MAX_ACTIVE_KEYS} active keys (400 above) and creates ` +
    `at most ${MAX_KEYS_CREATED_PER_DAY} keys per UTC day, revoked ones included (429 rate_limit_exceeded with Retry-After above).${CSRF_NOTE}`,
  tags: [CONSOLE_TAG],
  security: SESSION_SECURITY,
  request: { headers: CsrfHeader, body: { required: true, content: { 'application/json': { schema: CreateKeyBody } } } },
  responses: {
    201: { description: 'The new key, with the full key in data.key', content: { 'application/json': { schema: CreatedKey } } },
    ...errorResponses('bad_request', 'unauthorized', 'forbidden', 'payload_too_large', 'rate_limit_exceeded'),
  },
};

const revokeRoute = createRoute({
  method: 'delete',
  path: `${KEYS_PATH}/{id}`,
  summary: 'Revoke an API key: refused everywhere from the next request on',
  description: `Revoking a revoked key changes nothing and answers 200 again.${CSRF_NOTE}`,
  tags: [CONSOLE_TAG],
  security: SESSION_SECURITY,
  middleware: [...session, requireCsrfHeader] as const,
  request: { params: KeyIdParam, headers: CsrfHeader },
  responses: {
    200: { description: 'The key, now revoked', content: { 'application/json': { schema: RevokedKey } } },
    ...errorResponses('unauthorized', 'forbidden', 'not_found'),
  },
});

const usageRoute = createRoute({
  method: 'get',
  path: '/api/v1/usage',
  summary: 'Per-day API B requests and compressions of the last 30 days, for the account and each key, and each key\'s windows',
  tags: [CONSOLE_TAG],
  security: SESSION_SECURITY,
  middleware: [...session] as const,
  responses: {
    200: { description: 'Usage', content: { 'application/json': { schema: UsageResponse } } },
    ...errorResponses('unauthorized'),
  },
});

const { security: _apiKeyOnly, ...compressShape } = compressDoc;
const consoleCompressDoc: RouteConfig = {
  ...compressShape,
  path: CONSOLE_COMPRESS_PATH,
  summary: 'The "Try it" compressor: POST /api/v1/compress for the signed-in account, without an API key',
  description:
    `Same parts, rules and answers as POST /api/v1/compress, for the signed-in account: its image tier, and its monthly quota ` +
    `(shared with its keys), counted on the account's console meter in the usage view.${CSRF_NOTE}`,
  tags: [CONSOLE_TAG],
  security: SESSION_SECURITY,
  request: { ...compressShape.request, headers: CsrfHeader },
};

export function registerConsoleApi(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listRoute, async (c) => {
    const keys = await listKeys(c.env.DB, accountOf(c).id);
    return c.json({ data: keys, meta: { ...meta(c), total: keys.length } }, 200);
  });

  // The body is read by hand (capped while streaming) and checked with the documented schema.
  app.openAPIRegistry.registerPath(createDoc);
  app.post(KEYS_PATH, ...session, requireCsrfHeader, async (c) => {
    const parsed = CreateKeyBody.safeParse(await readJsonBody(c.req.raw, FORM_BODY_MAX_BYTES, '{"name":"CI","scopes":["image"]}'));
    if (!parsed.success) throw badRequestFrom(parsed.error.issues);
    const created = await createKey(c.env.DB, accountOf(c).id, parsed.data, clock(c.env));
    if (!created.ok && created.reason === 'too_many_today') {
      const retryAfter = secondsUntil(created.reset, clock(c.env));
      throw new ApiError(
        'rate_limit_exceeded',
        `an account may create at most ${created.max} keys per day (UTC), revoked ones included; try again in ${retryAfter} s, after 00:00 UTC`,
        { details: { max: created.max, reset: toUnixSeconds(created.reset) }, headers: { 'Retry-After': String(retryAfter) } },
      );
    }
    if (!created.ok) {
      throw new ApiError('bad_request', `an account may hold at most ${created.max} active keys; revoke one first`, { details: { max: created.max } });
    }
    c.header('Location', `${KEYS_PATH}/${created.key.id}`);
    return c.json({ data: created.key, meta: meta(c) }, 201);
  });

  app.openapi(revokeRoute, async (c) => {
    const key = await revokeKey(c.env, accountOf(c).id, c.req.valid('param').id, clock(c.env));
    if (!key) throw new ApiError('not_found', 'no key with this id in your account', { param: 'id' });
    return c.json({ data: key, meta: meta(c) }, 200);
  });

  app.openapi(usageRoute, async (c) => c.json({ data: await accountUsage(c.env, accountOf(c), clock(c.env)), meta: meta(c) }, 200));

  app.openAPIRegistry.registerPath(consoleCompressDoc);
  app.post(CONSOLE_COMPRESS_PATH, ...session, requireCsrfHeader, async (c) => {
    const hash = await consoleKeyHash(c.env.DB, accountOf(c).id, clock(c.env));
    return compressMetered(c, hash, c.env.METER.get(c.env.METER.idFromName(hash)));
  });
}
