// Calling the meta-tag endpoints against the loopback fixture origin (test/fixtures/origin.ts), which
// the Worker may fetch only because these calls set FETCH_TEST_ORIGIN to it.
import { inject } from 'vitest';
import { call, toolsHeaders } from './helpers.ts';

export const ORIGIN = inject('fixtureOrigin');

export interface MetaCallOptions {
  /** Replaces vars for this call; caching is off unless META_CACHE_TTL is given here. */
  env?: Record<string, unknown>;
}

const testEnv = (options: MetaCallOptions) => ({ FETCH_TEST_ORIGIN: ORIGIN, META_CACHE_TTL: '0', ...options.env });

/** GET /api/v1/meta-tags for `url`; a path is taken to be on the fixture origin. */
export async function metaTags(key: string, url: string, options: MetaCallOptions = {}) {
  const target = url.startsWith('/') ? ORIGIN + url : url;
  const res = await call(`/api/v1/meta-tags?url=${encodeURIComponent(target)}`, {
    headers: toolsHeaders(key),
    env: testEnv(options),
  });
  return { res, body: await res.json<any>() };
}

export async function bulk(
  key: string,
  body: unknown,
  options: MetaCallOptions & { raw?: string; type?: string } = {},
) {
  const res = await call('/api/v1/meta-tags/bulk', {
    method: 'POST',
    headers: { ...toolsHeaders(key), 'Content-Type': options.type ?? 'application/json' },
    body: options.raw ?? JSON.stringify(body),
    env: testEnv(options),
  });
  return { res, body: await res.json<any>() };
}
