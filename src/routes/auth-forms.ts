// What the sign-in, sign-up, e-mail and SSO pages share: the form fields and messages they word alike, the
// safe `next` redirect, and starting a session. Apart from the pages themselves, so no page route imports
// another.
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AuditOrigin } from '../audit/log.ts';
import { EMAIL_PATTERN } from '../auth/credentials.ts';
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, VERIFY_LINK_TTL_MS } from '../auth/limits.ts';
import { createSession } from '../auth/sessions.ts';
import { clock } from '../env.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import type { AppEnv } from '../http/context.ts';
import { redirectPage } from '../http/pages.ts';
import { clearCookie, setSessionCookie } from '../http/session.ts';

export const EXPIRED_FORM = 'This form had expired or came from another site. Please try again.';
/** Where a new account lands: the keys page, which then offers "Create your first key". */
export const FIRST_STOP_AFTER_SIGN_UP = '/keys';
/** Sign-up and the console's "send again": how long the mailed confirmation link works, as the pages say it. */
export const VERIFY_LINK_HOURS = VERIFY_LINK_TTL_MS / 3_600_000;

/** An address we can mail: what sign-up, "forgot password" and "send again" accept. */
export const EmailField = z
  .string()
  .trim()
  .max(EMAIL_MAX_LENGTH, { error: `Use at most ${EMAIL_MAX_LENGTH} characters.` })
  .regex(EMAIL_PATTERN, { error: 'Enter an email address like name@example.com.' });

/** A new password: sign-up and reset. */
export const NewPasswordField = z
  .string()
  .min(PASSWORD_MIN_LENGTH, { error: `Use at least ${PASSWORD_MIN_LENGTH} characters.` })
  .max(PASSWORD_MAX_LENGTH, { error: `Use at most ${PASSWORD_MAX_LENGTH} characters.` });

/** Bytes browsers strip or stop at in a URL (controls, space, DEL) and the backslash they read as `/`. */
const UNSAFE_IN_NEXT = /[\u0000-\u0020\u007f\\]/;

/**
 * Where to go after sign-in: only a path on this site, or nothing (no open redirect). A browser drops tabs
 * and newlines from a URL, so `/\t/evil.example` is `//evil.example` to it: any byte up to 0x20, DEL or a
 * backslash refuses the whole value. What is left must start with `/` and, resolved against our own origin,
 * stay on it; the answer is the resolved path (percent-encoded, so always a valid header). Dot segments
 * resolve away (`/.//evil.example`, `/%2e%2e//evil.example` become `//evil.example`), so the resolved path,
 * not the value, is what must not start with `//` or `/\`: a browser reads either as another host.
 */
export function safeNext(value: string | undefined, origin: string): string | undefined {
  if (!value || value.length > 200 || UNSAFE_IN_NEXT.test(value) || !value.startsWith('/')) return undefined;
  let url: URL;
  try {
    url = new URL(value, origin);
  } catch {
    return undefined;
  }
  const path = `${url.pathname}${url.search}${url.hash}`;
  if (url.origin !== origin || /^\/[/\\]/.test(path)) return undefined;
  return path;
}

/** Work after the answer; its failure is logged, never the request's. */
export function afterAnswer(c: Context<AppEnv>, work: Promise<void>, what: string): void {
  c.executionCtx.waitUntil(
    work.catch((err: unknown) => console.error(`${what}_failed`, err instanceof Error ? err.message : String(err))),
  );
}

/** The person signing in acts as themself: the member. */
export const signInOrigin = (c: Context<AppEnv>, actorId: string | null): AuditOrigin => ({
  ...auditOrigin(c),
  actor: actorId ? { type: 'member', id: actorId } : { type: 'anonymous', id: null },
});

const waitFor = (seconds: number): string => {
  if (seconds < 60) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  const m = Math.ceil(seconds / 60);
  return m === 1 ? '1 minute' : `${m} minutes`;
};

export async function startSession(
  c: Context<AppEnv>,
  who: { accountId: string; memberId: string },
  next: string | undefined,
  method: 'password' | 'sso' = 'password',
): Promise<Response> {
  // `next` passed safeNext (a percent-encoded path), so the redirect below cannot fail after the row.
  const session = await createSession(c.env.DB, who, clock(c.env), signInOrigin(c, who.memberId), method);
  setSessionCookie(c, session);
  // The pre-sign-in token has done its job; the session brings its own.
  clearCookie(c, 'csrf');
  return redirectPage(c, next ?? '/');
}

/** A throttled form's words, with its Retry-After header set. */
export function throttledMessage(c: Context<AppEnv>, retryAfter: number): string {
  c.header('Retry-After', String(retryAfter));
  return `Too many attempts. For your account's safety, please wait ${waitFor(retryAfter)} and try again.`;
}
