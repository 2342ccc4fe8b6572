// Unknown paths get 404; known paths asked with the wrong method get 405 with an Allow header.
import type { Context } from 'hono';
import type { AppEnv } from './context.ts';
import { ApiError } from '../errors.ts';

interface RouteInfo {
  method: string;
  path: string;
}

function patternOf(path: string): RegExp {
  const escaped = path
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

export function allowedMethods(routes: readonly RouteInfo[], path: string): string[] {
  const methods = new Set<string>();
  for (const r of routes) {
    if (r.method === 'ALL' || !patternOf(r.path).test(path)) continue;
    methods.add(r.method);
    if (r.method === 'GET') methods.add('HEAD');
  }
  return [...methods].sort();
}

export function fallbackError(c: Context<AppEnv>, routes: readonly RouteInfo[]): ApiError {
  const allow = allowedMethods(routes, c.req.path);
  if (allow.length > 0) {
    return new ApiError(
      'method_not_allowed',
      `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allow.join(', ')}`,
      {
        headers: { Allow: allow.join(', ') },
      },
    );
  }
  return new ApiError('not_found', `no endpoint at ${c.req.path}; the API is described at /api/v1/openapi.json`);
}
