// A management endpoint's description: the tag and the ways to call it (MANAGE_SECURITY), and for the
// routes registered from their description, the role check first and then the route's guards. The
// permission is the first argument, so a management route cannot be written without one.
import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/context.ts';
import type { ErrorCode } from '../errors.ts';
import { MANAGE_SECURITY, MANAGE_TAG } from './manage-schema.ts';
import { errorResponses } from './schemas.ts';

type ManageConfig = Omit<RouteConfig, 'tags' | 'security' | 'middleware'> & {
  /** The endpoint's own error codes, besides the 401 and 403 every management endpoint may answer. */
  errors?: readonly ErrorCode[];
};

/**
 * The description of a management endpoint registered by hand (its body is read and checked in the
 * handler). Every one is behind the key or session check and a role: 401 `unauthorized` and 403
 * `forbidden` are documented here, once.
 */
export const manageDoc = <R extends ManageConfig>({ errors = [], ...config }: R) => ({
  ...config,
  responses: { ...config.responses, ...errorResponses('unauthorized', 'forbidden', ...errors) },
  tags: [MANAGE_TAG],
  security: MANAGE_SECURITY,
});

/** A management endpoint: `requirement` is its `requires(...)`, run before the guards. */
export const manageRoute = <P extends string, R extends ManageConfig & { path: P }>(
  requirement: MiddlewareHandler<AppEnv>,
  guards: readonly MiddlewareHandler<AppEnv>[],
  config: R,
) => createRoute({ ...manageDoc(config), middleware: [requirement, ...guards] });
