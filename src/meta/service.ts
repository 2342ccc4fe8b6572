// Meta tags of one URL (cache, fetch under the rules, extract) and of many (six at a time, in order,
// each failure kept to its own entry).
import { FETCH_TIMEOUT_MS } from '../fetch/limits.ts';
import { failure, safeFetch } from '../fetch/safe-fetch.ts';
import { parseFetchUrl, checkFetchUrl } from '../fetch/url-policy.ts';
import { ApiError } from '../errors.ts';
import { cacheKey, lookup, store } from './cache.ts';
import type { MetaConfig } from './config.ts';
import type { CharsetChoice } from './charset.ts';
import { extract } from './extract.ts';
import type { PageData } from './page-data.ts';
import { BULK_CONCURRENCY, BULK_DEADLINE_MS } from './limits.ts';

export type CacheStatus = 'hit' | 'miss';

export interface MetaResult {
  data: PageData;
  cache: CacheStatus;
  /** The encoding the page was read in and how it was chosen (null for pages that are not HTML). */
  charset: CharsetChoice | null;
}

export interface MetaContext extends MetaConfig {
  /** Keeps a promise alive after the response (the Worker's waitUntil). */
  defer: (work: Promise<unknown>) => void;
}

export async function metaTags(raw: string, ctx: MetaContext, deadline?: AbortSignal): Promise<MetaResult> {
  const url = parseFetchUrl(raw);
  url.hash = '';
  // Refused URLs are refused before the cache is asked, so a cached page never outlives a rule.
  checkFetchUrl(url, ctx);
  const key = cacheKey(ctx.cacheOrigin, url);
  if (ctx.cacheTtl > 0) {
    const hit = await lookup(key);
    if (hit) return { ...hit, cache: 'hit' };
  }
  const timeout = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const signal = deadline ? AbortSignal.any([timeout, deadline]) : timeout;
  const fetched = await safeFetch(url, { ...ctx, signal });
  const extracted = await extract(url, fetched, { signal, failure: (err) => failure(fetched.finalUrl, err, signal) });
  if (ctx.cacheTtl > 0) ctx.defer(store(key, extracted, ctx.cacheTtl).catch(() => {}));
  return { ...extracted, cache: 'miss' };
}

export type BulkItem =
  | { url: string; ok: true; data: PageData; cache: CacheStatus; charset: CharsetChoice | null }
  | { url: string; ok: false; error: { code: string; message: string; details?: Record<string, unknown> } };

export async function bulkMetaTags(urls: string[], ctx: MetaContext): Promise<BulkItem[]> {
  const deadline = AbortSignal.timeout(BULK_DEADLINE_MS);
  // The same URL named twice is fetched once.
  const inFlight = new Map<string, Promise<BulkItem>>();
  const one = (url: string): Promise<BulkItem> => {
    let item = inFlight.get(url);
    if (!item) {
      item = metaTags(url, ctx, deadline).then(
        (r): BulkItem => ({ url, ok: true, data: r.data, cache: r.cache, charset: r.charset }),
        (err: unknown): BulkItem => ({ url, ok: false, error: errorOf(err) }),
      );
      inFlight.set(url, item);
    }
    return item;
  };
  return mapLimited(urls, BULK_CONCURRENCY, one);
}

function errorOf(err: unknown): { code: string; message: string; details?: Record<string, unknown> } {
  if (!(err instanceof ApiError)) {
    console.error('meta-tags bulk item failed', err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    return { code: 'internal_error', message: 'Something went wrong on our side with this URL.' };
  }
  return { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
}

/** Runs `task` over `items` with at most `limit` running, keeping the input order in the results. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
