// Successful extractions in the Workers Cache API, keyed by the normalised URL, for META_CACHE_TTL
// seconds. The cache is per data centre; a miss costs only a fetch.
import type { Extracted } from './extract.ts';

/** Changes whenever the shape or content of an extraction for the same page could change. */
const EXTRACTOR_VERSION = 'x2';

export function cacheKey(cacheOrigin: string, url: URL): Request {
  return new Request(`${cacheOrigin}/__cache/meta-tags/${EXTRACTOR_VERSION}?url=${encodeURIComponent(url.href)}`);
}

export async function lookup(key: Request): Promise<Extracted | null> {
  const hit = await caches.default.match(key);
  return hit ? ((await hit.json()) as Extracted) : null;
}

export function store(key: Request, data: Extracted, ttl: number): Promise<void> {
  return caches.default.put(
    key,
    new Response(JSON.stringify(data), {
      headers: { 'Content-Type': 'application/json', 'Cache-Control': `public, max-age=${ttl}` },
    }),
  );
}
