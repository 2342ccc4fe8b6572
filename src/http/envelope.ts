import type { Context } from 'hono';
import type { AppEnv } from './context.ts';

/** The API B success envelope: `{ data, meta }`, where meta always carries the key's tier. */
export function envelope<T, M extends Record<string, unknown>>(c: Context<AppEnv>, data: T, meta?: M) {
  return { data, meta: { ...meta, tier: c.var.key.tiers.tools, request_id: c.var.requestId } };
}
