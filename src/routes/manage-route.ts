// A management endpoint's description: the tag and the ways to call it (MANAGE_SECURITY), and for the
// routes registered from their description, the role check first and then the route's guards. The
// permission is the first argument, so a management route cannot be written without one.
import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/context.ts';
import { MANAGE_SECURITY, MANAGE_TAG } from './manage-schema.ts';

type ManageConfig = Omit<RouteConfig, 'tags' | 'security' | 'middleware'>;

/** The description of a management endpoint registered by hand (its body is read and checked in the handler). */
export const manageDoc = <R extends ManageConfig>(config: R) => ({
  ...config,
  tags: [MANAGE_TAG],
  security: MANAGE_SECURITY,
});

/** A management endpoint: `requirement` is its `requires(...)`, run before the guards. */
export const manageRoute = <P extends string, R extends ManageConfig & { path: P }>(
  requirement: MiddlewareHandler<AppEnv>,
  guards: readonly MiddlewareHandler<AppEnv>[],
  config: R,
) => createRoute({ ...manageDoc(config), middleware: [requirement, ...guards] });
