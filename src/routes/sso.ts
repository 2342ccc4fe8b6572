// Single sign-on: the configuration over the management API (GET/PUT/DELETE /api/v1/sso; the secret is
// never returned), and the browser's way through it: /sso/start?email= → the issuer → /sso/callback →
// the console, signed in. The domain is src/sso/.
import { manageDoc, manageRoute } from './manage-route.ts';
import { isEmailAddress } from '../auth/credentials.ts';
import { requires } from './requires.ts';
import { requestMeta } from './manage-read.ts';
import { requireFeature } from '../accounts/entitlements.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { recordFailedSignIn } from '../audit/log.ts';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { clock } from '../env.ts';
import { accountAuth } from '../http/account-auth.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor } from '../http/csrf.ts';
import { ApiError } from '../errors.ts';
import { parseJsonBody } from '../http/json-body.ts';
import { PAGE_CSP, pageHeaders, sendPage } from '../http/pages.ts';
import { cookieOptions, isLocalDevelopment, loadSession } from '../http/session.ts';
import { deleteSso, getSso, saveSso } from '../sso/config.ts';
import { verifyDomain } from '../sso/domains.ts';
import { finishSso, startSso, type SsoFailure } from '../sso/flow.ts';
import {
  SSO_LOGIN_TTL_MS,
  SSO_MAX_RESPONSE_BYTES,
  SSO_VERIFY_PER_ACCOUNT,
  SSO_VERIFY_PER_DOMAIN,
} from '../sso/limits.ts';
import { messagePage } from '../web/views/message.ts';
import { ssoStartPage } from '../web/views/sso.ts';
import { safeNext, signInOrigin, startSession } from './auth-forms.ts';
import { MANAGE_NOTE } from './manage-schema.ts';
import { jsonOk } from './schemas.ts';
import { DomainParam, SsoBody, SsoDomainOne, SsoOne } from './sso-schema.ts';
import { redirectUriOf, saveRefusal, sendToLinkProof, verifyRefusal } from './sso-answers.ts';

export const SSO_PATH = '/api/v1/sso';
const NOTE = ` Tools tier enterprise (403 plan_upgrade_required otherwise); a manage key or a signed-in owner or admin.${MANAGE_NOTE}`;

const enterprise = async (c: Context<AppEnv>, next: () => Promise<void>) => {
  requireFeature({ tools: c.var.principal.toolsTier }, 'sso');
  await next();
};
const guards = [accountAuth, enterprise] as const;

const stateCookie = (c: Context<AppEnv>) => (isLocalDevelopment(c.req.url) ? 'sr_sso_state' : '__Host-sr_sso_state');

const getRoute = manageRoute(requires('sso:write'), [...guards], {
  method: 'get',
  path: SSO_PATH,
  summary: "The account's single sign-on configuration (never the secret)",
  description: `404 when none is configured.${NOTE}`,
  responses: {
    200: jsonOk('The configuration', SsoOne),
  },
  errors: ['plan_upgrade_required', 'not_found'],
});

const putDoc = manageDoc({
  method: 'put',
  path: SSO_PATH,
  summary: 'Configure single sign-on (OpenID Connect): issuer, client, email domains, require SSO',
  description:
    'The issuer must serve its discovery document (/.well-known/openid-configuration) naming itself exactly, over https on a public host (the rules of every outbound fetch), ' +
    `without redirects, in at most ${SSO_MAX_RESPONSE_BYTES / 1024} KB (502 fetch_failed past that, or when the issuer cannot be reached). ` +
    'Register redirect_uri (in the answer) with the issuer. Each domain is answered with the TXT record that proves it (`txt_name`, `txt_value`): ' +
    'until it is published and seen (POST /api/v1/sso/domains/{domain}/verify, or the periodic check), the domain routes nobody to SSO. ' +
    'A domain kept from the last configuration keeps its value and its proof. A domain another account proved is refused (400). Writes sso.configured.' +
    NOTE,
  request: { body: { required: true, content: { 'application/json': { schema: SsoBody } } } },
  responses: {
    200: jsonOk('The configuration as stored', SsoOne),
  },
  errors: ['bad_request', 'plan_upgrade_required', 'payload_too_large', 'fetch_failed'],
});

const deleteRoute = manageRoute(requires('sso:write'), [...guards], {
  method: 'delete',
  path: SSO_PATH,
  summary: 'Remove single sign-on: members sign in with passwords again',
  description: `Writes sso.removed.${NOTE}`,
  responses: {
    200: jsonOk('The configuration as it was', SsoOne),
  },
  errors: ['plan_upgrade_required', 'not_found'],
});

const verifyRoute = manageRoute(requires('sso:write'), [...guards], {
  method: 'post',
  path: `${SSO_PATH}/domains/{domain}/verify`,
  summary: "Look a domain's proof up now: its TXT record, over DNS-over-HTTPS",
  description:
    "Asks the resolver (DNS_RESOLVER_URL) for the TXT records of `txt_name` and answers the domain's state: verified once a record holds `txt_value` " +
    '(writes sso.domain_verified), else as it was (resolvers may remember a missing record for a while; unverified domains are also checked again periodically). ' +
    'Proved domains are looked up again daily: one whose record has been missing for several lookups over days is unproved (sso.domain_unverified) until proved again here. ' +
    `404 for a domain the configuration does not name; 400 when another account proved it first; 502 fetch_failed when the resolver fails. ` +
    `Each lookup is an outbound request: at most ${SSO_VERIFY_PER_DOMAIN.max} per domain per ${SSO_VERIFY_PER_DOMAIN.windowMs / 60_000} minutes and ${SSO_VERIFY_PER_ACCOUNT.max} per account per ${SSO_VERIFY_PER_ACCOUNT.windowMs / 60_000} minutes ` +
    `(429 rate_limit_exceeded with Retry-After, \`details.scope\` \`domain\` or \`account\`; a proved domain is answered without a lookup and counts nothing).${NOTE}`,
  request: { params: DomainParam },
  responses: {
    200: jsonOk("The domain's state", SsoDomainOne),
  },
  errors: ['bad_request', 'plan_upgrade_required', 'not_found', 'rate_limit_exceeded', 'fetch_failed'],
});

const UNAVAILABLE =
  'Your identity provider could not be reached, or gave an answer we could not use. Try again in a moment, or sign in with your password.';

const MESSAGES: Record<SsoFailure, string> = {
  state: 'This sign-in link has expired, was already used, or was started in another browser. Start again.',
  issuer_error: 'Your identity provider did not sign you in.',
  token: "Your identity provider's answer failed our checks, so you are not signed in.",
  email: "Your identity provider did not give an email address that this account's single sign-on covers.",
  other_account: 'This email belongs to another Shrinkray account or identity.',
  team_full: 'This account has as many members as it may have. Ask an owner or admin to remove one.',
  userinfo: "Your identity provider's answer failed our checks, so you are not signed in.",
  issuer_unavailable: UNAVAILABLE,
};

/** The callback's status per failure: the attempt (400), the issuer's fault (502), or who you are (401). */
const failureStatus = (reason: SsoFailure): 400 | 401 | 502 =>
  reason === 'state' ? 400 : reason === 'issuer_unavailable' ? 502 : 401;

/**
 * The "Sign in with SSO" form is answered by a redirect to the issuer, and browsers apply the page's CSP
 * form-action to that redirect too: this one page (no user content) lets forms lead to any https origin,
 * and to the FETCH_TEST_ORIGIN loopback origins in tests and local runs.
 */
function startPage(c: Context<AppEnv>, page: string, status: 200 | 400 | 404 | 502): Response {
  const res = sendPage(c, page, status);
  const test = (c.env.FETCH_TEST_ORIGIN ?? '')
    .split(',')
    .map((o) => URL.parse(o.trim())?.origin)
    .filter((o): o is string => !!o && o !== 'null');
  res.headers.set(
    'Content-Security-Policy',
    PAGE_CSP.replace("form-action 'self'", `form-action 'self' https: ${test.join(' ')}`.trimEnd()),
  );
  return res;
}

export function registerSso(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getRoute, async (c) => {
    const sso = await getSso(c.env.DB, c.var.principal.accountId);
    if (!sso) throw new ApiError('not_found', 'single sign-on is not configured for this account');
    return c.json({ data: { ...sso, redirect_uri: redirectUriOf(c) }, meta: requestMeta(c) }, 200);
  });

  app.openAPIRegistry.registerPath(putDoc);
  app.put(SSO_PATH, requires('sso:write'), ...guards, async (c) => {
    const example =
      '{"issuer":"https://login.example.com","client_id":"…","client_secret":"…","domains":["example.com"],"require_sso":false}';
    const body = await parseJsonBody(c.req.raw, SsoBody, FORM_BODY_MAX_BYTES, example);
    const saved = await saveSso(c.env, c.var.principal.accountId, body, clock(c.env), auditOrigin(c));
    if (!saved.ok) throw saveRefusal(saved);
    return c.json({ data: { ...saved.sso, redirect_uri: redirectUriOf(c) }, meta: requestMeta(c) }, 200);
  });

  app.openapi(verifyRoute, async (c) => {
    const { domain } = c.req.valid('param');
    const outcome = await verifyDomain(c.env, c.var.principal.accountId, domain, clock(c.env), auditOrigin(c));
    if (!outcome.ok) throw verifyRefusal(outcome, domain);
    return c.json({ data: outcome.domain, meta: requestMeta(c) }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const gone = await deleteSso(c.env.DB, c.var.principal.accountId, clock(c.env), auditOrigin(c));
    if (!gone) throw new ApiError('not_found', 'single sign-on is not configured for this account');
    return c.json({ data: { ...gone, redirect_uri: redirectUriOf(c) }, meta: requestMeta(c) }, 200);
  });

  app.get('/sso/start', loadSession, async (c) => {
    const email = (c.req.query('email') ?? '').trim();
    const next = safeNext(c.req.query('next'), new URL(c.req.url).origin);
    if (!isEmailAddress(email)) {
      return startPage(
        c,
        ssoStartPage({
          csrf: csrfTokenFor(c),
          email,
          error: email ? 'Enter an email address like name@example.com.' : undefined,
        }),
        email ? 400 : 200,
      );
    }
    const started = await startSso(c.env, email, redirectUriOf(c), next, clock(c.env));
    if (!started.ok && started.reason === 'no_sso') {
      return startPage(
        c,
        ssoStartPage({
          csrf: csrfTokenFor(c),
          email,
          error: "Single sign-on is not set up for this email's domain. Sign in with your password instead.",
        }),
        404,
      );
    }
    if (!started.ok) {
      console.warn(JSON.stringify({ event: 'sso_start_failed', detail: started.detail }));
      return startPage(c, ssoStartPage({ csrf: csrfTokenFor(c), email, error: UNAVAILABLE }), 502);
    }
    setCookie(c, stateCookie(c), started.state, cookieOptions(c, Math.round(SSO_LOGIN_TTL_MS / 1000)));
    pageHeaders(c);
    return c.redirect(started.url, 302);
  });

  app.get('/sso/callback', loadSession, async (c) => {
    const now = clock(c.env);
    const outcome = await finishSso(
      c.env,
      new URL(c.req.url).searchParams,
      getCookie(c, stateCookie(c)),
      redirectUriOf(c),
      now,
      (id) => signInOrigin(c, id),
    );
    setCookie(c, stateCookie(c), '', cookieOptions(c, 0));
    if (!outcome.ok && outcome.reason === 'proof_needed') return sendToLinkProof(c, outcome.proof);
    if (!outcome.ok) {
      if (outcome.accountId) {
        const details = { method: 'sso', reason: outcome.reason, detail: outcome.detail };
        await recordFailedSignIn(c.env.DB, signInOrigin(c, null), outcome.accountId, details, now);
      }
      const page = messagePage({
        title: 'Not signed in',
        message: MESSAGES[outcome.reason],
        csrf: csrfTokenFor(c),
        account: null,
      });
      return sendPage(c, page, failureStatus(outcome.reason));
    }
    return startSession(c, outcome, outcome.next ?? undefined, 'sso');
  });
}
