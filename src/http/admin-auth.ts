// The operator's token on the /internal/ endpoints: they do not exist (404) unless the ADMIN_TOKEN secret is
// set, are refused whatever the request carries while it is shorter than ADMIN_TOKEN_MIN_LENGTH (a short
// token could be guessed), and answer 401 unless the request carries it, compared in constant time.
import { createMiddleware } from 'hono/factory';
import { secretsEqual } from '../accounts/constant-time.ts';
import { ApiError } from '../errors.ts';
import { adminTokenProblem } from '../operator/admin-token.ts';
import type { AppEnv } from './context.ts';

export const adminAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = c.env.ADMIN_TOKEN;
  if (!token) throw new ApiError('not_found', `no endpoint at ${c.req.path}`);
  const problem = adminTokenProblem(token);
  if (problem !== null) throw new ApiError('forbidden', `the operator endpoints are off: ${problem}`);
  const match = /^Bearer (\S+)$/.exec(c.req.header('authorization') ?? '');
  if (!match?.[1] || !(await secretsEqual(match[1], token))) {
    throw new ApiError('unauthorized', 'the operator token is missing or wrong');
  }
  await next();
});
