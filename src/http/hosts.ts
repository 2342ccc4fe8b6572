// Host routing (docs/operations.md, "Configuration"): with IMAGE_API_HOST / TOOLS_API_HOST set, each API answers
// only on its own host. Unset, both answer everywhere (local development).
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './context.ts';
import { ApiError } from '../errors.ts';

export type ApiName = 'image' | 'tools' | 'any';

// The console's JSON endpoints answer wherever its pages do, since they share the session cookie.
const CONSOLE_PATHS = /^\/api\/v1\/(?:keys|signing-secrets|image-source-hosts|usage|console)(?:\/|$)/;

export function apiOfPath(path: string): ApiName {
  if (path === '/api/v1/compress' || path.startsWith('/api/v1/compress/') || path.startsWith('/api/v1/img/'))
    return 'image';
  if (path === '/api/v1/openapi.json' || !path.startsWith('/api/v1/') || CONSOLE_PATHS.test(path)) return 'any';
  return 'tools';
}

const hostname = (host: string): string => host.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');

export const hostRouting = createMiddleware<AppEnv>(async (c, next) => {
  const api = apiOfPath(c.req.path);
  const required = api === 'image' ? c.env.IMAGE_API_HOST : api === 'tools' ? c.env.TOOLS_API_HOST : undefined;
  if (required && hostname(new URL(c.req.url).host) !== hostname(required)) {
    throw new ApiError('not_found', `no endpoint at ${c.req.path} on this host`);
  }
  await next();
});
