// The console's session cookie: read on every console request, renewed while in use, and required by
// the console's pages (redirect to sign-in) and JSON endpoints (401 envelope).
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { deleteSession, findSession, renewSession, type NewSession, type Session } from '../auth/sessions.ts';
import { clock } from '../env.ts';
import type { AppEnv } from './context.ts';
import { ApiError } from '../errors.ts';
import { redirectPage } from './pages.ts';

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Plain-HTTP loopback is local development: cookies there cannot be `Secure` (the browser would drop
 * them), and cannot take the `__Host-` prefix, which requires `Secure`. Everywhere else they are both.
 */
export function isLocalDevelopment(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'http:' && LOOPBACK.test(hostname);
}

export function cookieName(c: Context<AppEnv>, base: 'session' | 'csrf'): string {
  return isLocalDevelopment(c.req.url) ? `sr_${base}` : `__Host-sr_${base}`;
}

export function cookieOptions(c: Context<AppEnv>, maxAgeSeconds: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'Lax' as const,
    secure: !isLocalDevelopment(c.req.url),
    maxAge: maxAgeSeconds,
  };
}

export function setSessionCookie(c: Context<AppEnv>, session: Pick<NewSession, 'token' | 'expiresAt'>): void {
  const maxAge = Math.max(0, Math.round((session.expiresAt - clock(c.env)) / 1000));
  setCookie(c, cookieName(c, 'session'), session.token, cookieOptions(c, maxAge));
}

export function clearCookie(c: Context<AppEnv>, base: 'session' | 'csrf'): void {
  deleteCookie(c, cookieName(c, base), { path: '/', secure: !isLocalDevelopment(c.req.url) });
}

export const sessionToken = (c: Context<AppEnv>): string | undefined => getCookie(c, cookieName(c, 'session'));

/** Loads the session, if any, into `c.var.session`; renews its expiry (and cookie) when due. */
export const loadSession = createMiddleware<AppEnv>(async (c, next) => {
  // Already loaded for this request (the role check of `requires` runs first): one D1 read per request, not two.
  if (c.var.session !== undefined) return next();
  const token = sessionToken(c);
  const now = clock(c.env);
  const session = await findSession(c.env.DB, token, now);
  c.set('session', session);
  if (session && token && (await renewSession(c.env.DB, session, now)) !== null) {
    setSessionCookie(c, { token, expiresAt: session.expiresAt });
  }
  await next();
});

/**
 * A session whose member has not confirmed their address acts on nothing. Sign-in refuses such members, so
 * none should exist; this holds whatever made one.
 */
export function refuseUnverified(session: Session): void {
  if (!session.member.emailVerified)
    throw new ApiError(
      'email_unverified',
      'confirm your email address first: open the link we mailed you, or have it sent again from the sign-in page',
    );
}

/** JSON endpoints of the console: a session (else 401) of a verified member (else 403). */
export const requireSession = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.var.session) {
    throw new ApiError(
      'unauthorized',
      'sign in to the web console first: this endpoint takes the console session cookie, not an API key',
    );
  }
  refuseUnverified(c.var.session);
  await next();
});

/** Pages: a session, or a redirect to sign-in that comes back here afterwards. */
export const requireSessionPage = createMiddleware<AppEnv>(async (c, next) => {
  const session = c.var.session;
  if (!session) return redirectPage(c, `/signin?next=${encodeURIComponent(c.req.path)}`);
  // Sign-in refuses unconfirmed members, so such a session should not exist: it is ended, and sign-in
  // tells the password's holder to confirm the address first.
  if (!session.member.emailVerified) {
    await deleteSession(c.env.DB, sessionToken(c));
    clearCookie(c, 'session');
    return redirectPage(c, '/signin');
  }
  await next();
});
