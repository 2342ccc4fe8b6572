// The schema hook of every route: a failed check becomes the 400 envelope, naming the parameter at fault.
import type { Hook } from '@hono/zod-openapi';
import type { AppEnv } from './context.ts';
import { badRequestFrom } from '../errors.ts';

export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) throw badRequestFrom(result.error.issues);
};
