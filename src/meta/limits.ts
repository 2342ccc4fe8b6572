// Limits of the meta-tag endpoints (the fetch limits themselves are in src/fetch/limits.ts).
import type { ToolsTier } from '../accounts/tiers.ts';

/** URLs one bulk call may name, per tools tier. */
export const BULK_MAX_URLS: Record<ToolsTier, number> = { free: 5, developer: 25, enterprise: 100 };
/** Pages fetched at once by a bulk call: the Workers limit of simultaneous open connections per request. */
export const BULK_CONCURRENCY = 6;
/** A bulk call ends by then: URLs not fetched in time fail with fetch_failed, the others are answered. */
export const BULK_DEADLINE_MS = 30_000;
/** Largest bulk request body: 100 URLs of the longest allowed length, with room for JSON. */
export const BULK_BODY_MAX_BYTES = 256 * 1024;
/** Default of the var META_CACHE_TTL: seconds a successful extraction is kept. */
export const DEFAULT_META_CACHE_TTL_S = 300;
/** Most a deployment may set META_CACHE_TTL to: a day. */
export const MAX_META_CACHE_TTL_S = 86_400;
