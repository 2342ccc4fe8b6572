// The console's JSON endpoints, for a signed-in browser session (cookie) rather than an API key: usage
// and the "Try it" compressor (key management is in keys.ts: a session or a manage key). Unsafe methods
// also need the X-CSRF-Token header.
import { requires } from './requires.ts';
import { createRoute, type OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { consoleKeyHash } from '../keys/service.ts';
import { accountUsage } from '../console/usage.ts';
import { clock } from '../env.ts';
import { keyMeter } from '../metering/key-meter-stub.ts';
import type { AppEnv } from '../http/context.ts';
import { requireCsrfHeader } from '../http/csrf.ts';
import { loadSession, requireSession } from '../http/session.ts';
import { compressDoc } from './compress-doc.ts';
import { compressUpload } from './compress-upload.ts';
import {
  CONSOLE_COMPRESS_PATH,
  CONSOLE_TAG,
  CSRF_NOTE,
  CsrfHeader,
  SESSION_SECURITY,
  UsageResponse,
} from './console-schema.ts';
import { errorResponses, jsonOk } from './schemas.ts';
import { requestMeta } from './manage-read.ts';

const session = [loadSession, requireSession] as const;

const accountOf = (c: Context<AppEnv>) => c.var.session!.account;

const usageRoute = createRoute({
  method: 'get',
  path: '/api/v1/usage',
  summary:
    "Per-day Tools API requests and Image API compressions of the last 30 days, for the account and each key, and each key's windows",
  tags: [CONSOLE_TAG],
  security: SESSION_SECURITY,
  middleware: [requires('read'), ...session] as const,
  responses: {
    200: jsonOk('Usage', UsageResponse),
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
  app.openapi(usageRoute, async (c) =>
    c.json({ data: await accountUsage(c.env, accountOf(c), clock(c.env)), meta: requestMeta(c) }, 200),
  );

  app.openAPIRegistry.registerPath(consoleCompressDoc);
  app.post(CONSOLE_COMPRESS_PATH, requires('keys:write'), ...session, requireCsrfHeader, async (c) => {
    const hash = await consoleKeyHash(c.env.DB, accountOf(c).id, clock(c.env));
    return compressUpload(c, hash, keyMeter(c.env, hash));
  });
}
