import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { accountData, type EndpointInfo } from '../accounts/account-view.ts';
import { IMAGE_TIER_NAMES, SCOPES, TOOLS_TIER_NAMES } from '../accounts/tiers.ts';
import { toolsAuth } from '../http/auth.ts';
import type { AppEnv } from '../http/context.ts';
import { envelope } from '../http/envelope.ts';
import { errorResponses, TOOLS_SECURITY, ToolsMeta, toolsOk, WindowUsage } from './schemas.ts';

const Account = z
  .object({
    data: z.object({
      account: z.object({ id: z.string(), name: z.string(), email: z.string() }),
      key: z.object({
        id: z.string(),
        name: z.string(),
        prefix: z.string().openapi({ example: 'sr_live_Ab3d' }),
        scopes: z.array(z.enum(SCOPES)),
        created_at: z.string(),
        last_used_at: z.string().nullable(),
      }),
      tiers: z.object({ image: z.enum(IMAGE_TIER_NAMES), tools: z.enum(TOOLS_TIER_NAMES) }),
      usage: z.object({ minute: WindowUsage, day: WindowUsage, month_compressions: WindowUsage }),
      endpoints: z.array(z.object({ method: z.string(), path: z.string(), description: z.string() })),
    }),
    meta: ToolsMeta,
  })
  .openapi('Account');

export const accountRoute = createRoute({
  method: 'get',
  path: '/api/v1/account',
  summary: "The calling key's account, tiers, live usage of every window, and the endpoint list",
  tags: ['Tools API'],
  security: TOOLS_SECURITY,
  middleware: [toolsAuth({ count: true, usage: true })] as const,
  responses: {
    200: toolsOk('Account information', Account),
    ...errorResponses('unauthorized', 'forbidden', 'rate_limit_exceeded'),
  },
});

export function registerAccount(app: OpenAPIHono<AppEnv>, endpoints: () => EndpointInfo[]): void {
  app.openapi(accountRoute, (c) => c.json(envelope(c, accountData(c.var.key, c.var.usage!, endpoints())), 200));
}
