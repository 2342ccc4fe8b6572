// The role check of the management endpoints (after accountAuth) and of the console's pages.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { can, type Permission } from '../teams/roles.ts';
import type { AppEnv } from './context.ts';
import { ApiError } from './errors.ts';

export const roleRefusal = (role: string, permission: Permission): ApiError =>
  new ApiError('forbidden', `your role (${role}) does not allow this: it needs the permission ${permission}`, { details: { role, permission } });

/** Management endpoints: the principal (key or session) must hold the permission. */
export const requirePermission = (permission: Permission) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const { role } = c.var.principal;
    if (!can(role, permission)) throw roleRefusal(role, permission);
    await next();
  });

export const holds = (c: Context<AppEnv>, permission: Permission): boolean => c.var.principal !== undefined && can(c.var.principal.role, permission);
