// The proof an existing member gives before an SSO identity is linked to them: the callback sends the
// browser here with the proof's token in a cookie; the page takes the member's password or mails a
// single-use link that works in this browser only. Thin: src/sso/link-proof.ts.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { recordFailedSignIn } from '../audit/log.ts';
import { FORM_BODY_MAX_BYTES, PASSWORD_MAX_LENGTH } from '../auth/limits.ts';
import { hit, mailRequestRules } from '../auth/throttle.ts';
import { clock } from '../env.ts';
import type { AppEnv } from '../http/context.ts';
import { clientIp } from '../http/client-ip.ts';
import { csrfTokenFor, csrfValid } from '../http/csrf.ts';
import { field, readForm } from '../http/form-body.ts';
import { sendPage } from '../http/pages.ts';
import { cookieOptions, loadSession } from '../http/session.ts';
import {
  mailedLinkOpen,
  mailLinkProof,
  openLinkProof,
  proveWithMail,
  proveWithPassword,
  type LinkOutcome,
} from '../sso/link-proof.ts';
import { messagePage } from '../web/views/message.ts';
import { ssoLinkConfirmPage, ssoLinkPage, type LinkProofState } from '../web/views/sso.ts';
import { EXPIRED_FORM, signInOrigin, startSession, throttledMessage } from './auth-forms.ts';
import { linkCookie, SSO_LINK_PATH } from './sso-answers.ts';

const proofOf = (c: Context<AppEnv>) => getCookie(c, linkCookie(c));

const gone = (c: Context<AppEnv>) =>
  sendPage(
    c,
    messagePage({
      title: 'Sign in again',
      message:
        'This single sign-on has expired or was already used. Start again from "Sign in with SSO", in this browser.',
      csrf: csrfTokenFor(c),
      account: null,
    }),
    410,
  );

/** Signed in after the proof, the cookie gone; or the refusal's page. */
async function finish(c: Context<AppEnv>, outcome: LinkOutcome, state?: Omit<LinkProofState, 'error'>) {
  if (outcome.ok) {
    setCookie(c, linkCookie(c), '', cookieOptions(c, 0));
    return startSession(c, outcome, outcome.next ?? undefined, 'sso');
  }
  if (outcome.reason === 'gone' || !state) return gone(c);
  if (outcome.reason === 'throttled')
    return sendPage(c, ssoLinkPage({ ...state, error: throttledMessage(c, outcome.retryAfter) }), 429);
  const details = { method: 'sso', reason: 'link_proof_password' };
  await recordFailedSignIn(c.env.DB, signInOrigin(c, null), outcome.accountId, details, clock(c.env));
  return sendPage(
    c,
    ssoLinkPage({ ...state, error: 'That password is not right. Try again, or email yourself a link.' }),
    401,
  );
}

/**
 * A form posted on the proof page: this browser's proof still open and the CSRF token right, before any
 * proof is tried; otherwise the page that says why.
 */
async function proofForm(c: Context<AppEnv>) {
  const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
  const now = clock(c.env);
  const pending = await openLinkProof(c.env.DB, proofOf(c), now);
  if (!pending) return gone(c);
  const state = { csrf: csrfTokenFor(c), pending };
  if (!(await csrfValid(c, field(form, '_csrf'))))
    return sendPage(c, ssoLinkPage({ ...state, error: EXPIRED_FORM }), 403);
  return { form, now, pending, state };
}

export function registerSsoLink(app: OpenAPIHono<AppEnv>): void {
  app.get(SSO_LINK_PATH, loadSession, async (c) => {
    const pending = await openLinkProof(c.env.DB, proofOf(c), clock(c.env));
    if (!pending) return gone(c);
    return sendPage(c, ssoLinkPage({ csrf: csrfTokenFor(c), pending }));
  });

  app.post(SSO_LINK_PATH, loadSession, async (c) => {
    const opened = await proofForm(c);
    if (opened instanceof Response) return opened;
    const { form, now, state } = opened;
    const password = field(form, 'password') ?? '';
    if (password.length === 0 || password.length > PASSWORD_MAX_LENGTH)
      return sendPage(c, ssoLinkPage({ ...state, error: 'Enter your password.' }), 400);
    const outcome = await proveWithPassword(c.env, proofOf(c), password, clientIp(c), now, (id) => signInOrigin(c, id));
    return finish(c, outcome, state);
  });

  app.post(`${SSO_LINK_PATH}/mail`, loadSession, async (c) => {
    const opened = await proofForm(c);
    if (opened instanceof Response) return opened;
    const { now, pending, state } = opened;
    const gate = await hit(c.env.DB, mailRequestRules(clientIp(c), pending.email), now);
    if (!gate.allowed) return sendPage(c, ssoLinkPage({ ...state, error: throttledMessage(c, gate.retryAfter) }), 429);
    const mailed = await mailLinkProof(c.env, proofOf(c), now);
    if (!mailed.ok) return gone(c);
    if (!mailed.sent)
      return sendPage(
        c,
        ssoLinkPage({
          ...state,
          error: 'The mail could not be sent just now. Try again in a moment, or use your password.',
        }),
        502,
      );
    return sendPage(c, ssoLinkPage({ ...state, pending: { ...pending, mailed: true }, sent: true }));
  });

  // The mailed link's page only shows a button: mail scanners open links, and must not use them up.
  app.get(`${SSO_LINK_PATH}/confirm`, loadSession, async (c) => {
    const token = c.req.query('token') ?? '';
    const now = clock(c.env);
    if (!(await mailedLinkOpen(c.env.DB, token, now))) return gone(c);
    const otherBrowser = (await openLinkProof(c.env.DB, proofOf(c), now)) === null;
    return sendPage(c, ssoLinkConfirmPage({ csrf: csrfTokenFor(c), token, otherBrowser }), otherBrowser ? 403 : 200);
  });

  app.post(`${SSO_LINK_PATH}/confirm`, loadSession, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const token = field(form, 'token') ?? '';
    if (!(await csrfValid(c, field(form, '_csrf'))))
      return sendPage(c, ssoLinkConfirmPage({ csrf: csrfTokenFor(c), token, otherBrowser: false }), 403);
    const outcome = await proveWithMail(c.env.DB, proofOf(c), token, clock(c.env), (id) => signInOrigin(c, id));
    return finish(c, outcome);
  });
}
