// Outermost middleware: request id in, and on the way out the headers every response carries, errors
// included (X-Request-Id, X-RateLimit-*, Retry-After on 429).
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './context.ts';
import { requestIdFor } from './request-id.ts';

export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const id = requestIdFor(c.req.header('x-request-id'));
  c.set('requestId', id);
  c.set('rate', undefined);
  await next();
  c.header('X-Request-Id', id);
  c.header('X-Content-Type-Options', 'nosniff');
  // Answers are per key: no shared cache may keep them, unless a route says otherwise (signed images).
  if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  if (c.res.headers.get('Content-Type') === 'application/json')
    c.header('Content-Type', 'application/json; charset=utf-8');
  const rate = c.var.rate;
  if (!rate) return;
  c.header('X-RateLimit-Limit', String(rate.limit));
  c.header('X-RateLimit-Remaining', String(rate.remaining));
  c.header('X-RateLimit-Reset', String(rate.reset));
  if (c.res.status === 429 && rate.retryAfter !== undefined) c.header('Retry-After', String(rate.retryAfter));
});
