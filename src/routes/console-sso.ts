// The console's single sign-on settings page (owners and admins, by `requires`). Thin: src/sso/.
import { requires } from './requires.ts';
import { can } from '../accounts/entitlements.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { clock } from '../env.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor, csrfValid } from '../http/csrf.ts';
import { ApiError } from '../errors.ts';
import { field, readForm } from '../http/form-body.ts';
import { redirectPage, sendPage } from '../http/pages.ts';
import { loadSession, requireSessionPage } from '../http/session.ts';
import { deleteSso, getSso, saveSso } from '../sso/config.ts';
import { verifyDomain } from '../sso/domains.ts';
import { ssoSettingsPage, type SsoSettingsState } from '../web/views/sso.ts';
import { SsoBody } from './sso-schema.ts';
import { redirectUriOf, saveRefusal, verifyRefusal } from './sso-answers.ts';

const EXPIRED_FORM = 'This form had expired or came from another site. Nothing was changed; please try again.';
const signedIn = [loadSession, requireSessionPage] as const;

async function settings(
  c: Context<AppEnv>,
  extra: Partial<SsoSettingsState> = {},
  status: 200 | 400 | 403 | 429 = 200,
) {
  const s = c.var.session!;
  const enterprise = can({ tools: s.account.tools_tier }, 'sso');
  const sso = enterprise ? await getSso(c.env.DB, s.account.id) : null;
  return sendPage(
    c,
    ssoSettingsPage({
      csrf: csrfTokenFor(c),
      account: s.account,
      enterprise,
      sso,
      redirectUri: redirectUriOf(c),
      ...extra,
    }),
    status,
  );
}

export function registerConsoleSso(app: OpenAPIHono<AppEnv>): void {
  app.get('/sso', requires('sso:write'), ...signedIn, (c) =>
    settings(c, c.req.query('saved') === '1' ? { notice: 'Saved.' } : {}),
  );

  app.post('/sso', requires('sso:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const values = {
      issuer: field(form, 'issuer'),
      client_id: field(form, 'client_id'),
      domains: field(form, 'domains'),
      require_sso: field(form, 'require_sso') === '1',
    };
    if (!(await csrfValid(c, field(form, '_csrf')))) return settings(c, { error: EXPIRED_FORM, values }, 403);
    const s = c.var.session!;
    if (!can({ tools: s.account.tools_tier }, 'sso')) return settings(c, {}, 403);
    const parsed = SsoBody.safeParse({
      ...values,
      client_secret: field(form, 'client_secret'),
      domains: values.domains
        .split(',')
        .map((d) => d.trim())
        .filter(Boolean),
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return settings(
        c,
        { error: `The ${String(issue?.path[0] ?? 'form')} ${issue?.message ?? 'is not valid'}.`, values },
        400,
      );
    }
    try {
      const saved = await saveSso(c.env, s.account.id, parsed.data, clock(c.env), auditOrigin(c));
      if (!saved.ok) return settings(c, { error: `${saveRefusal(saved).message}.`, values }, 400);
    } catch (err) {
      if (err instanceof ApiError && (err.status < 500 || err.code === 'fetch_failed'))
        return settings(c, { error: `The issuer could not be used: ${err.message}.`, values }, 400);
      throw err;
    }
    return redirectPage(c, '/sso?saved=1');
  });

  // "Check now": the domain's TXT record looked up at once, its state on the page.
  app.post('/sso/domains/verify', requires('sso:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return settings(c, { error: EXPIRED_FORM }, 403);
    const s = c.var.session!;
    if (!can({ tools: s.account.tools_tier }, 'sso')) return settings(c, {}, 403);
    const domain = (field(form, 'domain') ?? '').trim().toLowerCase();
    try {
      const outcome = await verifyDomain(c.env, s.account.id, domain, clock(c.env), auditOrigin(c));
      if (!outcome.ok) {
        const refusal = verifyRefusal(outcome, domain);
        const page = await settings(c, { error: `${refusal.message}.` }, refusal.status === 429 ? 429 : 400);
        for (const [name, value] of Object.entries(refusal.headers)) page.headers.set(name, value);
        return page;
      }
      return settings(
        c,
        outcome.domain.verified
          ? { notice: `${domain} is verified: its people sign in with SSO.` }
          : {
              notice: `No TXT record with the value was found at ${outcome.domain.txt_name} yet. DNS changes can take a while to show; we also check again now and then.`,
            },
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === 'fetch_failed')
        return settings(c, { error: `The DNS lookup failed: ${err.message}. Try again in a moment.` }, 400);
      throw err;
    }
  });

  app.post('/sso/delete', requires('sso:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return settings(c, { error: EXPIRED_FORM }, 403);
    const s = c.var.session!;
    if (can({ tools: s.account.tools_tier }, 'sso'))
      await deleteSso(c.env.DB, s.account.id, clock(c.env), auditOrigin(c));
    return redirectPage(c, '/sso');
  });
}
