// The schema hook of every route: a failed check becomes the 400 envelope, naming the parameter at fault.
import type { Hook } from '@hono/zod-openapi';
import type { AppEnv } from './context.ts';
import { badRequestFrom, givenTwice } from '../errors.ts';

export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (result.success) return;
  // The validator hands the hook the input it checked, though the type leaves it out on failure.
  const input = 'data' in result ? result.data : undefined;
  const repeated = repeatedParameter(result.target, input, result.error.issues[0]);
  if (repeated !== undefined) throw givenTwice(repeated);
  throw badRequestFrom(result.error.issues);
};

/**
 * A query or form parameter sent more than once (`?limit=5&limit=6`) arrives as a list where the schema
 * wants one value: said as such, rather than as the type the schema expected.
 */
function repeatedParameter(
  target: string,
  data: unknown,
  issue: { code?: string; path: PropertyKey[] } | undefined,
): string | undefined {
  if ((target !== 'query' && target !== 'form') || issue?.code !== 'invalid_type' || issue.path.length !== 1) return;
  const name = issue.path[0];
  if (typeof name !== 'string' || typeof data !== 'object' || data === null) return;
  return Array.isArray((data as Record<string, unknown>)[name]) ? name : undefined;
}
