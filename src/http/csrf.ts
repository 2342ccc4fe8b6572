// CSRF protection of every state-changing console request, two layers deep:
//   1. the request must come from our own origin (Origin and Sec-Fetch-Site, where the browser sends them);
//   2. it must carry the CSRF token: the session's own (form field `_csrf` or header `X-CSRF-Token`), or,
//      before sign-in, the double-submit token of the `sr_csrf` cookie, so sign-in itself cannot be forged.
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { secretsEqual } from '../accounts/constant-time.ts';
import { randomToken } from '../auth/sessions.ts';
import type { AppEnv } from './context.ts';
import { ApiError } from '../errors.ts';
import { cookieName, cookieOptions } from './session.ts';

export const CSRF_HEADER = 'X-CSRF-Token';
/** The pre-sign-in token cookie lives as long as a sign-in form may sit open in a tab. */
const ANON_CSRF_MAX_AGE_S = 24 * 3600;

/** False when the browser says the request was made by another site. */
export function fromOwnOrigin(c: Context<AppEnv>): boolean {
  const origin = c.req.header('origin');
  if (origin !== undefined && origin !== new URL(c.req.url).origin) return false;
  const site = c.req.header('sec-fetch-site');
  return site === undefined || site === 'same-origin' || site === 'none';
}

/** The token a page embeds in its forms: the session's, or a pre-sign-in one (set as a cookie if new). */
export function csrfTokenFor(c: Context<AppEnv>): string {
  if (c.var.session) return c.var.session.csrfToken;
  const existing = getCookie(c, cookieName(c, 'csrf'));
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  setCookie(c, cookieName(c, 'csrf'), token, cookieOptions(c, ANON_CSRF_MAX_AGE_S));
  return token;
}

/** Checks origin and token. `provided` is the form field or header value the request carried. */
export async function csrfValid(c: Context<AppEnv>, provided: string | undefined): Promise<boolean> {
  if (!fromOwnOrigin(c) || !provided) return false;
  const expected = c.var.session ? c.var.session.csrfToken : getCookie(c, cookieName(c, 'csrf'));
  if (!expected) return false;
  return secretsEqual(expected, provided);
}

/** JSON endpoints of the console: unsafe methods need the session's token in X-CSRF-Token. */
export const requireCsrfHeader = createMiddleware<AppEnv>(async (c, next) => {
  if (!(await csrfValid(c, c.req.header(CSRF_HEADER)))) {
    throw new ApiError(
      'forbidden',
      `missing or wrong ${CSRF_HEADER} header: send the token of the console page (<meta name="csrf-token">); requests from other sites are refused`,
    );
  }
  await next();
});
