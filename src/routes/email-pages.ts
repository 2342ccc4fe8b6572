// The pages of mailed links: confirming an address (/verify-email, and "send the link again"), and password
// reset (/forgot-password, /reset-password). Thin handlers over src/auth/verification.ts and
// src/auth/password-reset.ts. The two that take an email answer before any mail work is done (it runs after
// the answer, in waitUntil), so their words and their time are the same for any email.
import { mailOff } from '../mail/config.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { FORM_BODY_MAX_BYTES, RESET_LINK_TTL_MS } from '../auth/limits.ts';
import { openReset, requestReset, resetPassword } from '../auth/password-reset.ts';
import { hit, mailRequestRules } from '../auth/throttle.ts';
import { resendVerification, verificationOpen, verifyEmail } from '../auth/verification.ts';
import { clock } from '../env.ts';
import type { AppEnv } from '../http/context.ts';
import { clientIp } from '../http/client-ip.ts';
import { csrfTokenFor, csrfValid } from '../http/csrf.ts';
import { field, readForm } from '../http/form-body.ts';
import { redirectPage, sendPage } from '../http/pages.ts';
import { loadSession } from '../http/session.ts';
import {
  checkEmailPage,
  confirmEmailPage,
  forgotPasswordPage,
  linkGonePage,
  resetPasswordPage,
  resetSentPage,
} from '../web/views/account-mail.ts';
import {
  afterAnswer,
  EmailField,
  EXPIRED_FORM,
  FIRST_STOP_AFTER_SIGN_UP,
  NewPasswordField,
  signInOrigin,
  startSession,
  throttledMessage,
  VERIFY_LINK_HOURS,
} from './auth-forms.ts';

const RESET_LINK_MINUTES = RESET_LINK_TTL_MS / 60_000;

/** Mail asked for ("send again", "forgot password"): refused past the hourly limits (mailRequestRules). */
async function mailRequestAllowed(
  c: Context<AppEnv>,
  email: string,
): Promise<{ allowed: boolean; retryAfter: number }> {
  return hit(c.env.DB, mailRequestRules(clientIp(c), email), clock(c.env));
}

const gone = (c: Context<AppEnv>, purpose: 'verify' | 'reset') =>
  sendPage(c, linkGonePage({ csrf: csrfTokenFor(c), purpose }), 410);

export function registerEmailPages(app: OpenAPIHono<AppEnv>): void {
  // The link's page only shows a button: mail scanners open links, and must not use them up (or sign in).
  app.get('/verify-email', loadSession, async (c) => {
    const token = c.req.query('token') ?? '';
    const opens = await verificationOpen(c.env.DB, token, clock(c.env));
    if (!opens) return gone(c, 'verify');
    return sendPage(c, confirmEmailPage({ csrf: csrfTokenFor(c), token, askPassword: opens === 'sign_up' }));
  });

  app.post('/verify-email', loadSession, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const token = field(form, 'token') ?? '';
    // A forged post would sign the victim into someone else's account (login CSRF).
    if (!(await csrfValid(c, field(form, '_csrf'))))
      return sendPage(c, confirmEmailPage({ csrf: csrfTokenFor(c), token, askPassword: true }), 403);
    const password = field(form, 'password') ?? '';
    const outcome = await verifyEmail(c.env, token, password, clock(c.env), (memberId) => signInOrigin(c, memberId));
    if (!outcome.ok && outcome.reason === 'wrong_password') {
      const error =
        'That is not the password chosen at this sign-up. If someone else signed up with your address, sign up yourself instead: the first confirmed sign-up makes the account.';
      return sendPage(c, confirmEmailPage({ csrf: csrfTokenFor(c), token, askPassword: true, error }), 401);
    }
    if (!outcome.ok) return gone(c, 'verify');
    return startSession(c, outcome, FIRST_STOP_AFTER_SIGN_UP);
  });

  app.post('/verify-email/resend', loadSession, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const email = EmailField.safeParse(field(form, 'email') ?? '');
    const csrf = csrfTokenFor(c);
    if (!(await csrfValid(c, field(form, '_csrf'))) || !email.success)
      return sendPage(c, linkGonePage({ csrf, purpose: 'verify' }), email.success ? 403 : 400);
    // The link goes out after the answer; a server without mail says so instead of promising one.
    const mail = mailOff(c.env) === null ? ('sent' as const) : ('off' as const);
    const state = { csrf, email: email.data, mail, hours: VERIFY_LINK_HOURS };
    const gate = await mailRequestAllowed(c, email.data);
    if (!gate.allowed)
      return sendPage(c, checkEmailPage({ ...state, error: throttledMessage(c, gate.retryAfter) }), 429);
    afterAnswer(c, resendVerification(c.env, email.data, clock(c.env)), 'verification_resend');
    return sendPage(c, checkEmailPage(state));
  });

  app.get('/forgot-password', loadSession, (c) => sendPage(c, forgotPasswordPage({ csrf: csrfTokenFor(c) })));

  app.post('/forgot-password', loadSession, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const value = field(form, 'email') ?? '';
    const csrf = csrfTokenFor(c);
    if (!(await csrfValid(c, field(form, '_csrf'))))
      return sendPage(c, forgotPasswordPage({ csrf, email: value, error: EXPIRED_FORM }), 403);
    const email = EmailField.safeParse(value);
    if (!email.success)
      return sendPage(c, forgotPasswordPage({ csrf, email: value, fieldError: email.error.issues[0]?.message }), 400);
    const gate = await mailRequestAllowed(c, email.data);
    if (!gate.allowed)
      return sendPage(c, forgotPasswordPage({ csrf, email: value, error: throttledMessage(c, gate.retryAfter) }), 429);
    afterAnswer(c, requestReset(c.env, email.data, clock(c.env)), 'password_reset_request');
    return sendPage(c, resetSentPage({ csrf, email: email.data, minutes: RESET_LINK_MINUTES }));
  });

  app.get('/reset-password', loadSession, async (c) => {
    const token = c.req.query('token') ?? '';
    if (!(await openReset(c.env.DB, token, clock(c.env)))) return gone(c, 'reset');
    return sendPage(c, resetPasswordPage({ csrf: csrfTokenFor(c), token }));
  });

  app.post('/reset-password', loadSession, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const token = field(form, 'token') ?? '';
    const csrf = csrfTokenFor(c);
    if (!(await csrfValid(c, field(form, '_csrf'))))
      return sendPage(c, resetPasswordPage({ csrf, token, error: EXPIRED_FORM }), 403);
    const password = NewPasswordField.safeParse(field(form, 'password') ?? '');
    if (!password.success) {
      const page = resetPasswordPage({ csrf, token, fieldError: password.error.issues[0]?.message });
      return sendPage(c, page, 400);
    }
    const outcome = await resetPassword(c.env, token, password.data, clock(c.env), (memberId) =>
      signInOrigin(c, memberId),
    );
    if (!outcome.ok) return gone(c, 'reset');
    return redirectPage(c, '/signin?reset=done');
  });
}
