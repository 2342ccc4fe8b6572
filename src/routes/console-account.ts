// The owners' account page (/account): billing tiers, and deleting the account. Owners only (`requires`).
import { requires } from './requires.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { clock } from '../env.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor, csrfValid } from '../http/csrf.ts';
import { field, readForm } from '../http/form-body.ts';
import { redirectPage, sendPage } from '../http/pages.ts';
import { clearCookie, loadSession, requireSessionPage } from '../http/session.ts';
import { deleteAccount } from '../teams/delete-account.ts';
import { accountSettingsPage } from '../web/views/account-settings.ts';

const signedIn = [loadSession, requireSessionPage] as const;

const page = (c: Context<AppEnv>, error?: string, status: 200 | 400 | 403 = 200) =>
  sendPage(
    c,
    accountSettingsPage({ csrf: csrfTokenFor(c), account: c.var.session!.account, ...(error ? { error } : {}) }),
    status,
  );

export function registerConsoleAccount(app: OpenAPIHono<AppEnv>): void {
  app.get('/account', requires('account:owner'), ...signedIn, (c) => page(c));

  app.post('/account/delete', requires('account:owner'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf'))))
      return page(c, 'This form had expired or came from another site. Nothing was changed; please try again.', 403);
    const { account } = c.var.session!;
    if (field(form, 'confirm').trim() !== account.name)
      return page(c, "The name you typed is not the account's name. Nothing was deleted.", 400);
    await deleteAccount(c.env, account.id, clock(c.env), auditOrigin(c));
    clearCookie(c, 'session');
    return redirectPage(c, '/');
  });
}
