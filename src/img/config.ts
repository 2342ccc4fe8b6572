// What image URLs read from the environment: the one loopback origin tests may fetch, and the
// User-Agent sources see (the meta-tag bot's: one fetcher, one name).
import type { Env } from '../env.ts';
import { VERSION } from '../version.ts';
import type { SourcePolicy } from './source.ts';

export function sourcePolicy(env: Env, requestUrl: string): SourcePolicy {
  const serviceUrl = env.IMAGE_API_HOST ? `https://${env.IMAGE_API_HOST}` : new URL(requestUrl).origin;
  return {
    testOrigin: env.FETCH_TEST_ORIGIN?.trim() || undefined,
    userAgent: `ShrinkrayBot/${VERSION} (+${serviceUrl}/)`,
  };
}
