// The meta-tag vars of wrangler.toml with their defaults, and the bot's User-Agent.
import { integerVar, type Env } from '../env.ts';
import { VERSION } from '../version.ts';
import { DEFAULT_META_CACHE_TTL_S, MAX_META_CACHE_TTL_S } from './limits.ts';

export interface MetaConfig {
  testOrigin: string | undefined;
  cacheTtl: number;
  userAgent: string;
  /** Origin under which extractions are cached: this service's own, as the Cache API expects. */
  cacheOrigin: string;
}

export function metaConfig(env: Env, requestUrl: string): MetaConfig {
  const cacheTtl = integerVar('META_CACHE_TTL', env.META_CACHE_TTL, DEFAULT_META_CACHE_TTL_S);
  if (cacheTtl > MAX_META_CACHE_TTL_S)
    throw new Error(`the var META_CACHE_TTL must be at most ${MAX_META_CACHE_TTL_S}`);
  const own = new URL(requestUrl).origin;
  const serviceUrl = env.TOOLS_API_HOST ? `https://${env.TOOLS_API_HOST}` : own;
  return {
    testOrigin: env.FETCH_TEST_ORIGIN?.trim() || undefined,
    cacheTtl,
    userAgent: `ShrinkrayBot/${VERSION} (+${serviceUrl}/)`,
    cacheOrigin: own,
  };
}
