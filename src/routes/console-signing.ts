// The console's signing secrets page (/signing-secrets): list, create (the secret rendered once, never
// redirected to), delete behind a confirmation. Thin: the store is src/signing/secrets.ts.
import { requires } from './requires.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { clock } from '../env.ts';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor, csrfValid } from '../http/csrf.ts';
import { field, readForm } from '../http/form-body.ts';
import { redirectPage, sendPage } from '../http/pages.ts';
import { loadSession, requireSessionPage } from '../http/session.ts';
import { createSecret, deleteSecret, listSecrets } from '../signing/secrets.ts';
import { messagePage } from '../web/views/message.ts';
import { deleteSecretPage, signingPage, type SigningState } from '../web/views/signing.ts';

const EXPIRED_FORM = 'This form had expired or came from another site. Nothing was changed; please try again.';
const signedIn = [loadSession, requireSessionPage] as const;
const accountOf = (c: Context<AppEnv>) => c.var.session!.account;

async function render(
  c: Context<AppEnv>,
  extra: Partial<SigningState> = {},
  status: 200 | 400 | 403 = 200,
): Promise<Response> {
  const secrets = await listSecrets(c.env.DB, accountOf(c).id);
  return sendPage(c, signingPage({ csrf: csrfTokenFor(c), account: accountOf(c), secrets, ...extra }), status);
}

const notFound = (c: Context<AppEnv>): Response =>
  sendPage(
    c,
    messagePage({
      title: 'Not found',
      message: 'There is no signing secret with this id in your account.',
      csrf: csrfTokenFor(c),
      account: accountOf(c),
    }),
    404,
  );

export function registerConsoleSigning(app: OpenAPIHono<AppEnv>): void {
  app.get('/signing-secrets', requires('read'), ...signedIn, async (c) => {
    const deleted = c.req.query('deleted');
    // Only an id's shape is echoed, so a crafted link cannot make the page say anything else.
    const notice =
      deleted && /^sig_[A-Za-z0-9_-]{1,40}$/.test(deleted)
        ? `The secret ${deleted} is deleted: URLs signed with it are refused from now on.`
        : undefined;
    return render(c, { notice });
  });

  app.post('/signing-secrets', requires('keys:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return render(c, { error: EXPIRED_FORM }, 403);
    const created = await createSecret(c.env.DB, accountOf(c).id, clock(c.env));
    if (!created.ok)
      return render(
        c,
        {
          error: `You have ${created.max} signing secrets, the most an account may hold. Delete the one no longer in use first.`,
        },
        400,
      );
    // Rendered, not redirected: the secret must never travel in a URL or be shown twice.
    return render(c, { created: created.created });
  });

  app.get('/signing-secrets/:id/delete', requires('keys:write'), ...signedIn, async (c) => {
    const secret = (await listSecrets(c.env.DB, accountOf(c).id)).find((s) => s.id === c.req.param('id'));
    if (!secret) return notFound(c);
    return sendPage(c, deleteSecretPage(csrfTokenFor(c), accountOf(c), secret));
  });

  app.post('/signing-secrets/:id/delete', requires('keys:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return render(c, { error: EXPIRED_FORM }, 403);
    if (!(await deleteSecret(c.env.DB, accountOf(c).id, c.req.param('id')))) return notFound(c);
    return redirectPage(c, `/signing-secrets?deleted=${c.req.param('id')}`);
  });
}
