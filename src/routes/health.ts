import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { clock } from '../env.ts';
import { toolsAuth } from '../http/auth.ts';
import type { AppEnv } from '../http/context.ts';
import { envelope } from '../http/envelope.ts';
import { VERSION } from '../version.ts';
import { errorResponses, TOOLS_SECURITY, ToolsMeta, toolsOk } from './schemas.ts';

const Health = z
  .object({
    data: z.object({
      status: z.literal('ok'),
      version: z.string().openapi({ example: VERSION }),
      time: z.string().openapi({ example: '2026-11-21T12:00:00.000Z' }),
    }),
    meta: ToolsMeta,
  })
  .openapi('Health');

export const healthRoute = createRoute({
  method: 'get',
  path: '/api/v1/health',
  summary: 'Health check; needs a valid key, never counted against the rate limit',
  tags: ['Tools API'],
  security: TOOLS_SECURITY,
  middleware: [toolsAuth({ count: false })] as const,
  responses: {
    200: toolsOk('The service is up', Health),
    ...errorResponses('unauthorized', 'forbidden'),
  },
});

export function registerHealth(app: OpenAPIHono<AppEnv>): void {
  app.openapi(healthRoute, (c) =>
    c.json(envelope(c, { status: 'ok' as const, version: VERSION, time: new Date(clock(c.env)).toISOString() }), 200),
  );
}
