// What the SSO routes (the management API, the console's SSO page, the callback and the link proof) answer
// alike: the callback URL, the refusals' words, and the way to the link proof. Apart from the routes, so
// none imports another.
import type { Context } from 'hono';
import { setCookie } from 'hono/cookie';
import { ApiError } from '../errors.ts';
import type { AppEnv } from '../http/context.ts';
import { redirectPage } from '../http/pages.ts';
import { cookieOptions, isLocalDevelopment } from '../http/session.ts';
import type { SaveOutcome } from '../sso/config.ts';
import type { VerifyOutcome } from '../sso/domains.ts';
import { SSO_LINK_PROOF_TTL_MS, SSO_VERIFY_PER_ACCOUNT, SSO_VERIFY_PER_DOMAIN } from '../sso/limits.ts';

export const redirectUriOf = (c: Context<AppEnv>): string => `${new URL(c.req.url).origin}/sso/callback`;

export function saveRefusal(outcome: Exclude<SaveOutcome, { ok: true }>): ApiError {
  return new ApiError(
    'bad_request',
    `these domains were proved by another account's SSO: ${outcome.domains.join(', ')}`,
    { param: 'domains', details: { domains: outcome.domains } },
  );
}

/** The verify endpoint's refusals (the console's "Check now" says the same words). */
export function verifyRefusal(outcome: Exclude<VerifyOutcome, { ok: true }>, domain: string): ApiError {
  switch (outcome.reason) {
    case 'not_found':
      return new ApiError('not_found', `${domain} is not a domain of this account's single sign-on`, {
        param: 'domain',
      });
    case 'taken':
      return new ApiError('bad_request', `${domain} was proved by another account's single sign-on`, {
        param: 'domain',
        details: { reason: 'domain_taken' },
      });
    case 'throttled': {
      const { scope, max, retryAfter } = outcome;
      const rule = scope === 'domain' ? SSO_VERIFY_PER_DOMAIN : SSO_VERIFY_PER_ACCOUNT;
      const what = scope === 'domain' ? `checks of ${domain}` : "checks of this account's domains";
      return new ApiError(
        'rate_limit_exceeded',
        `too many ${what}: at most ${max} per ${rule.windowMs / 60_000} minutes (the scheduled check keeps looking meanwhile); try again in ${retryAfter} s`,
        { details: { scope, max, retry_after: retryAfter }, headers: { 'Retry-After': String(retryAfter) } },
      );
    }
  }
}

export const SSO_LINK_PATH = '/sso/link';

export const linkCookie = (c: Context<AppEnv>) =>
  isLocalDevelopment(c.req.url) ? 'sr_sso_link' : '__Host-sr_sso_link';

/** The callback found an existing member: the browser keeps the proof's token and goes to its page. */
export function sendToLinkProof(c: Context<AppEnv>, proof: string): Response {
  setCookie(c, linkCookie(c), proof, cookieOptions(c, Math.round(SSO_LINK_PROOF_TTL_MS / 1000)));
  return redirectPage(c, SSO_LINK_PATH);
}
