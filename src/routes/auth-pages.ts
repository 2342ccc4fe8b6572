// Sign-up, sign-in and sign-out pages: thin handlers over src/auth. Form posts check the origin and the
// CSRF token first; every failure re-renders the form with a message, never a JSON error.
import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { signIn, signUp, type AuthOutcome } from '../auth/accounts.ts';
import { EMAIL_MAX_LENGTH, FORM_BODY_MAX_BYTES, NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH } from '../auth/limits.ts';
import { passwordIterations } from '../auth/password.ts';
import { deleteSession } from '../auth/sessions.ts';
import { recordFailedSignIn } from '../audit/log.ts';
import { clock } from '../env.ts';
import { ssoAccountFor } from '../sso/domains.ts';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor, csrfValid } from '../http/csrf.ts';
import { field, readForm } from '../http/form-body.ts';
import { clientIp } from '../http/client-ip.ts';
import { redirectPage, sendPage } from '../http/pages.ts';
import { clearCookie, loadSession, sessionToken } from '../http/session.ts';
import { checkEmailPage } from '../web/views/account-mail.ts';
import { signInPage, signUpPage, type FieldErrors } from '../web/views/auth.ts';
import { messagePage } from '../web/views/message.ts';
import {
  afterAnswer,
  EmailField,
  EXPIRED_FORM,
  NewPasswordField,
  safeNext,
  signInOrigin,
  startSession,
  throttledMessage,
  VERIFY_LINK_HOURS,
} from './auth-forms.ts';

const SignUpForm = z.object({
  name: z
    .string()
    .trim()
    .min(1, { error: 'Enter your name.' })
    .max(NAME_MAX_LENGTH, { error: `Use at most ${NAME_MAX_LENGTH} characters.` }),
  email: EmailField,
  password: NewPasswordField,
});

const SignInForm = z.object({
  email: z
    .string()
    .trim()
    .min(1, { error: 'Enter your email address.' })
    .max(EMAIL_MAX_LENGTH, { error: 'That is not an email address we could have.' }),
  password: z
    .string()
    .min(1, { error: 'Enter your password.' })
    .max(PASSWORD_MAX_LENGTH, { error: 'That password is longer than any we accept.' }),
});

function fieldErrors(issues: readonly { path: PropertyKey[]; message: string }[]): FieldErrors {
  const out: FieldErrors = {};
  for (const issue of issues) {
    const name = issue.path[0];
    if ((name === 'name' || name === 'email' || name === 'password') && out[name] === undefined)
      out[name] = issue.message;
  }
  return out;
}

const originOf = (c: Context<AppEnv>): string => new URL(c.req.url).origin;

function refusal(
  c: Context<AppEnv>,
  outcome: Exclude<AuthOutcome, { ok: true }>,
): { message: string; status: 401 | 403 | 429 } {
  switch (outcome.reason) {
    case 'sso_required':
      return {
        message: 'Your organisation signs in with single sign-on: use "Sign in with SSO" with this email.',
        status: 403,
      };
    case 'throttled':
      return { message: throttledMessage(c, outcome.retryAfter), status: 429 };
    case 'invalid_credentials':
      // The same words for a wrong password, an unknown email and a sign-up not yet confirmed (which is no
      // account yet): the answer must not tell which addresses are registered.
      return {
        message:
          'That email and password do not match an account. If you signed up, confirm your email first: open the link we mailed you, or have it sent again.',
        status: 401,
      };
  }
}

export function registerAuthPages(app: OpenAPIHono<AppEnv>): void {
  app.get('/signin', loadSession, (c) => {
    const next = safeNext(c.req.query('next'), originOf(c));
    if (c.var.session) return redirectPage(c, next ?? '/');
    const notice =
      c.req.query('reset') === 'done'
        ? 'Your password is changed and every session signed out: sign in with the new password.'
        : next
          ? 'Sign in to continue.'
          : undefined;
    return sendPage(c, signInPage({ csrf: csrfTokenFor(c), next, notice }));
  });

  app.post('/signin', loadSession, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const next = safeNext(field(form, 'next'), originOf(c));
    const values = { email: field(form, 'email') };
    const again = (status: 400 | 401 | 403 | 429, error: string, fields?: FieldErrors, resend?: boolean) =>
      sendPage(c, signInPage({ csrf: csrfTokenFor(c), next, values, error, fields, resend }), status);
    if (!(await csrfValid(c, field(form, '_csrf')))) return again(403, EXPIRED_FORM);
    const parsed = SignInForm.safeParse({ email: field(form, 'email'), password: field(form, 'password') });
    if (!parsed.success) return again(400, 'Please fix the fields below.', fieldErrors(parsed.error.issues));
    const outcome = await signIn(
      c.env.DB,
      parsed.data.email,
      parsed.data.password,
      clientIp(c),
      clock(c.env),
      passwordIterations(c.env),
    );
    if (!outcome.ok) {
      // After the answer: an address without an account has no audit log, so a record written before the
      // answer made a registered address answer later than an unknown one (an oracle by timing).
      if ((outcome.reason === 'invalid_credentials' || outcome.reason === 'sso_required') && outcome.accountId) {
        const details = { method: 'password', reason: outcome.reason };
        const record = recordFailedSignIn(c.env.DB, signInOrigin(c, null), outcome.accountId, details, clock(c.env));
        afterAnswer(c, record, 'sign_in_audit');
      }
      const { message, status } = refusal(c, outcome);
      const unmatched = outcome.reason === 'invalid_credentials';
      // The email's domain signs in by SSO: say so (members made by SSO have no password at all).
      const sso = unmatched && (await ssoAccountFor(c.env.DB, parsed.data.email)) !== null;
      return again(
        status,
        sso ? `${message} Your organisation also offers single sign-on: use "Sign in with SSO" below.` : message,
        undefined,
        unmatched,
      );
    }
    return startSession(c, outcome, next);
  });

  app.get('/signup', loadSession, (c) => {
    if (c.var.session) return redirectPage(c, '/');
    return sendPage(c, signUpPage({ csrf: csrfTokenFor(c) }));
  });

  app.post('/signup', loadSession, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const values = { name: field(form, 'name'), email: field(form, 'email') };
    const again = (status: 400 | 403 | 429, error: string, fields?: FieldErrors) =>
      sendPage(c, signUpPage({ csrf: csrfTokenFor(c), values, error, fields }), status);
    if (!(await csrfValid(c, field(form, '_csrf')))) return again(403, EXPIRED_FORM);
    const parsed = SignUpForm.safeParse({ ...values, password: field(form, 'password') });
    if (!parsed.success) return again(400, 'Please fix the fields below.', fieldErrors(parsed.error.issues));
    const outcome = await signUp(c.env, parsed.data, clientIp(c), clock(c.env));
    if (!outcome.ok) {
      if (outcome.reason === 'throttled') return again(429, throttledMessage(c, outcome.retryAfter));
      return again(
        403,
        'Your organisation signs in with single sign-on: use "Sign in with SSO" on the sign-in page with this email.',
        { email: 'Sign in with SSO instead.' },
      );
    }
    // Nobody is signed in yet: the mailed link does that. A registered email reads the very same page.
    return sendPage(
      c,
      checkEmailPage({
        csrf: csrfTokenFor(c),
        email: parsed.data.email,
        mail: outcome.mail.ok ? 'sent' : outcome.mail.reason === 'not_configured' ? 'off' : 'failed',
        hours: VERIFY_LINK_HOURS,
      }),
    );
  });

  app.post('/signout', loadSession, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    // A forged sign-out is refused too: it would be a nuisance, and every state change is guarded alike.
    if (!(await csrfValid(c, field(form, '_csrf')))) {
      if (!c.var.session) return redirectPage(c, '/');
      const page = messagePage({
        title: 'Still signed in',
        message: `${EXPIRED_FORM} Use the Sign out button on this page.`,
        csrf: csrfTokenFor(c),
        account: c.var.session.account,
      });
      return sendPage(c, page, 403);
    }
    await deleteSession(c.env.DB, sessionToken(c));
    clearCookie(c, 'session');
    return redirectPage(c, '/');
  });
}
