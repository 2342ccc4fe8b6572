import type { Context } from 'hono';
import type { ToolsTier } from '../accounts/tiers.ts';
import type { AppEnv } from './context.ts';

type EnvelopeMeta<M> = M & { tier: ToolsTier; request_id: string };

/** The Tools API success envelope: `{ data, meta }`, where meta always carries the key's tier. */
export function envelope<T, M extends Record<string, unknown> = Record<never, never>>(
  c: Context<AppEnv>,
  data: T,
  meta?: M,
): { data: T; meta: EnvelopeMeta<M> } {
  return { data, meta: { ...(meta as M), tier: c.var.key.tiers.tools, request_id: c.var.requestId } };
}
