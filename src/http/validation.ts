// Turns a failed schema check into the 400 envelope, naming the parameter at fault.
import type { Hook } from '@hono/zod-openapi';
import type { AppEnv } from './context.ts';
import { ApiError } from './errors.ts';

interface Issue {
  path: PropertyKey[];
  message: string;
  code?: string;
  keys?: string[];
}

export function badRequestFrom(issues: readonly Issue[]): ApiError {
  const first = issues[0];
  // An unknown parameter is reported at the object's level; the parameter at fault is the unknown key.
  if (first?.code === 'unrecognized_keys' && first.keys?.[0] !== undefined) {
    return new ApiError('bad_request', first.message, { param: first.keys[0] });
  }
  const param = first && first.path.length > 0 ? first.path.map(String).join('.') : undefined;
  const message = first ? (param ? `${param} ${first.message}` : first.message) : 'invalid request';
  return new ApiError('bad_request', message, param ? { param } : {});
}

export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) throw badRequestFrom(result.error.issues);
};
