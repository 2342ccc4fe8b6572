// A trailing slash names the same resource: every route answers it (or, for a page's GET, redirects to the
// slashless address with 308), never 404 `not_found` or a 405 that lists the very method it refused.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { call } from './helpers.ts';

interface Probe {
  method: string;
  path: string;
}

const withValues = (path: string) => path.replace(/\{\w+\}|:\w+/g, 'x1');

async function documentedRoutes(): Promise<Probe[]> {
  const doc = (await (await call('/api/v1/openapi.json')).json()) as { paths: Record<string, object> };
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path: withValues(path) })),
  );
}

/** Every route the app registers outside the API: the console's pages, forms and assets. */
function consoleRoutes(): Probe[] {
  return createApp()
    .routes.filter((r) => r.method !== 'ALL' && !r.path.startsWith('/api/') && r.path !== '/' && !r.path.includes('*'))
    .map((r) => ({ method: r.method, path: withValues(r.path) }));
}

async function expectServed({ method, path }: Probe) {
  const res = await call(`${path}/?a=1`, { method, redirect: 'manual' });
  const label = `${method} ${path}/ → ${res.status}`;
  expect(res.status, label).not.toBe(405);
  if (res.status === 404) {
    // A 404 of the resource itself (an unknown id) is fine; "no endpoint" is not.
    const text = await res.text();
    expect(text, label).not.toMatch(/no endpoint at|Page not found/);
  }
  if (res.status === 308) expect(res.headers.get('location'), label).toBe(`${path}?a=1`);
  return res;
}

describe('a trailing slash', () => {
  it('is served on every route of the OpenAPI document', async () => {
    const routes = await documentedRoutes();
    expect(routes.length).toBeGreaterThan(30);
    for (const route of routes) {
      const res = await expectServed(route);
      // API clients (curl without -L) get the answer itself, not a redirect.
      expect(res.status, `${route.method} ${route.path}/`).not.toBe(308);
    }
  });

  it('answers the named examples with the route itself', async () => {
    const compress = await call('/api/v1/compress/', { method: 'POST' });
    expect(compress.status).toBe(401);
    const tools = await call('/api/v1/tools/');
    expect(tools.status).toBe(401);
    const account = await call('/api/v1/account/');
    expect(account.status).toBe(401);
  });

  it("redirects a page's GET to the slashless address, and serves its other methods", async () => {
    const routes = consoleRoutes();
    expect(routes.map((r) => r.path)).toEqual(expect.arrayContaining(['/docs', '/keys', '/signup']));
    for (const route of routes) {
      const res = await expectServed(route);
      if (route.method === 'GET') expect(res.status, `GET ${route.path}/`).toBe(308);
    }
  });

  it('keeps the query on the redirect of /docs/, /keys/ and /signup/', async () => {
    for (const path of ['/docs', '/keys', '/signup']) {
      const res = await call(`${path}/?next=%2Fkeys`, { redirect: 'manual' });
      expect(res.status).toBe(308);
      expect(res.headers.get('location')).toBe(`${path}?next=%2Fkeys`);
    }
  });

  it('never redirects to another host', async () => {
    const res = await call('https://api.shrinkray.test//evil.example/', { redirect: 'manual' });
    expect(res.status).not.toBe(308);
    expect(res.headers.get('location')).toBeNull();
  });

  it('still leaves an unknown path a 404 and a wrong method a 405 naming the allowed ones', async () => {
    const unknown = await call('/api/v1/nothing-here/', { method: 'POST' });
    expect(unknown.status).toBe(404);
    const wrong = await call('/api/v1/compress/', { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });
});
