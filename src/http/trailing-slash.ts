// A trailing slash names the same resource (docs/using-the-api.md, "Paths"). The app routes without strict
// paths, so `/api/v1/compress/` is `/api/v1/compress`; API answers come straight back (curl does not follow
// redirects by default), while a page's GET moves with 308 to the one address its links and bookmarks use.
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './context.ts';

export const pageAddressOf = (url: URL): string | undefined => {
  const path = url.pathname;
  if (path.length <= 1 || !path.endsWith('/') || path.startsWith('/api/')) return undefined;
  const slashless = path.slice(0, -1);
  // `//host` would be a protocol-relative Location, an open redirect: such paths are left to the 404.
  if (slashless.startsWith('//')) return undefined;
  return `${slashless}${url.search}`;
};

export const trailingSlashRedirect = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === 'GET' || c.req.method === 'HEAD') {
    const target = pageAddressOf(new URL(c.req.url));
    if (target !== undefined) return c.redirect(target, 308);
  }
  await next();
});
