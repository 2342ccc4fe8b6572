// The console's webhooks pages (forms, signed-in session, CSRF token in each form). Thin: the domain is
// src/webhooks/, the views src/web/views/webhooks.ts; the rules are those of /api/v1/webhooks.
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
import { field, readForm, type FormFields } from '../http/form-body.ts';
import { redirectPage, sendPage } from '../http/pages.ts';
import { loadSession, requireSessionPage } from '../http/session.ts';
import { endpointPage, webhooksPage, type EndpointState, type WebhooksState } from '../web/views/webhooks.ts';
import { messagePage } from '../web/views/message.ts';
import { dispatcher } from '../webhooks/dispatcher-stub.ts';
import { createEndpoint, getEndpoint, listEndpoints, rotateSecret } from '../webhooks/endpoints.ts';
import * as service from '../webhooks/service.ts';
import { checkEndpointUrl } from '../webhooks/url.ts';
import { CreateEndpointBody, PatchEndpointBody } from './webhooks-schema.ts';

const EXPIRED_FORM = 'This form had expired or came from another site. Nothing was changed; please try again.';
/** What a redirect back to an endpoint's page may say: fixed words, so a crafted link cannot say anything else. */
const NOTICES: Record<string, string> = {
  saved: 'Saved.',
  test: 'A test event is on its way: it appears in the log below.',
  retried: 'The message is being sent again, with the same id.',
};

const tooMany = (max: number) =>
  `Your account has sent ${max} test events and retries in the last hour, the most it may. Try again later.`;

const signedIn = [loadSession, requireSessionPage] as const;
const accountOf = (c: Context<AppEnv>) => c.var.session!.account;
const allowed = (c: Context<AppEnv>) => can({ tools: accountOf(c).tools_tier }, 'webhooks');
const events = (form: FormFields) => (Array.isArray(form.events) ? form.events : []);

async function listPage(c: Context<AppEnv>, extra: Partial<WebhooksState> = {}, status: 200 | 400 | 403 = 200) {
  const endpoints = allowed(c) ? await listEndpoints(c.env.DB, accountOf(c).id) : [];
  return sendPage(
    c,
    webhooksPage({ csrf: csrfTokenFor(c), account: accountOf(c), allowed: allowed(c), endpoints, ...extra }),
    status,
  );
}

async function onePage(c: Context<AppEnv>, extra: Partial<EndpointState> = {}, status: 200 | 400 | 403 | 429 = 200) {
  const endpoint = await getEndpoint(c.env.DB, accountOf(c).id, c.req.param('id') ?? '');
  if (!endpoint || !allowed(c)) {
    return sendPage(
      c,
      messagePage({
        title: 'Not found',
        message: 'There is no webhook endpoint with this id in your account.',
        csrf: csrfTokenFor(c),
        account: accountOf(c),
      }),
      404,
    );
  }
  const deliveries = await dispatcher(c.env, accountOf(c).id).deliveries(endpoint.id);
  return sendPage(
    c,
    endpointPage({ csrf: csrfTokenFor(c), account: accountOf(c), endpoint, deliveries, ...extra }),
    status,
  );
}

const caller = (c: Context<AppEnv>): service.WebhookCaller => ({
  env: c.env,
  accountId: accountOf(c).id,
  now: clock(c.env),
  origin: auditOrigin(c),
});

/** A refused test or retry, as the endpoint's page saying why. */
function manualRefusal(c: Context<AppEnv>, refused: Exclude<service.ManualSendOutcome, { ok: true }>) {
  switch (refused.reason) {
    case 'not_found':
      return onePage(c);
    case 'disabled':
      return onePage(c, { error: 'This endpoint is disabled: enable it first.' }, 400);
    case 'no_message':
      return onePage(c, { error: 'This endpoint has no message with this id.' }, 400);
    case 'too_many':
      return onePage(c, { error: tooMany(refused.max) }, 429);
  }
}

/** The first problem with the submitted values, in words for the page. */
function problem(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const issue = issues[0];
  if (!issue) return 'The form is not valid.';
  return issue.path[0] === 'events'
    ? 'Choose at least one event to send.'
    : `The ${String(issue.path[0] ?? 'form')} ${issue.message}.`;
}

/** The URL rules' refusal, in words for the page; anything else is not ours to catch. */
function urlRefusal(c: Context<AppEnv>, url: string): string | null {
  try {
    checkEndpointUrl(url, c.env.FETCH_TEST_ORIGIN);
    return null;
  } catch (err) {
    if (err instanceof ApiError) return `The URL is not allowed: ${err.message}.`;
    throw err;
  }
}

export function registerConsoleWebhooks(app: OpenAPIHono<AppEnv>): void {
  app.get('/webhooks', requires('read'), ...signedIn, (c) => listPage(c));

  app.post('/webhooks', requires('webhooks:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES, ['events']);
    const values = { url: field(form, 'url'), description: field(form, 'description'), events: events(form) };
    if (!(await csrfValid(c, field(form, '_csrf')))) return listPage(c, { error: EXPIRED_FORM, values }, 403);
    if (!allowed(c)) return listPage(c, {}, 403);
    const parsed = CreateEndpointBody.safeParse(values);
    if (!parsed.success) return listPage(c, { error: problem(parsed.error.issues), values }, 400);
    const refusal = urlRefusal(c, parsed.data.url);
    if (refusal) return listPage(c, { error: refusal, values }, 400);
    const url = checkEndpointUrl(parsed.data.url, c.env.FETCH_TEST_ORIGIN).href;
    const created = await createEndpoint(caller(c), { ...parsed.data, url });
    if (!created.ok)
      return listPage(
        c,
        { error: `You have ${created.max} endpoints, the most an account may have. Delete one first.`, values },
        400,
      );
    // Rendered, not redirected: the secret must never travel in a URL or be shown twice.
    return listPage(c, { created: created.endpoint });
  });

  app.get('/webhooks/:id', requires('read'), ...signedIn, (c) => {
    const notice = NOTICES[c.req.query('done') ?? ''];
    return onePage(c, notice ? { notice } : {});
  });

  app.post('/webhooks/:id', requires('webhooks:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES, ['events']);
    if (!(await csrfValid(c, field(form, '_csrf')))) return onePage(c, { error: EXPIRED_FORM }, 403);
    const parsed = PatchEndpointBody.safeParse({
      url: field(form, 'url'),
      description: field(form, 'description'),
      events: events(form),
      enabled: field(form, 'enabled') === '1',
    });
    if (!parsed.success) return onePage(c, { error: problem(parsed.error.issues) }, 400);
    const refusal = urlRefusal(c, parsed.data.url ?? '');
    if (refusal) return onePage(c, { error: refusal }, 400);
    const url = checkEndpointUrl(parsed.data.url ?? '', c.env.FETCH_TEST_ORIGIN).href;
    const endpoint = allowed(c)
      ? await service.changeEndpoint(caller(c), c.req.param('id'), { ...parsed.data, url })
      : null;
    if (!endpoint) return onePage(c);
    return redirectPage(c, `/webhooks/${endpoint.id}?done=saved`);
  });

  app.post('/webhooks/:id/test', requires('webhooks:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return onePage(c, { error: EXPIRED_FORM }, 403);
    if (!allowed(c)) return onePage(c);
    const sent = await service.sendTestEvent(caller(c), c.req.param('id'));
    return sent.ok ? redirectPage(c, `/webhooks/${c.req.param('id')}?done=test`) : manualRefusal(c, sent);
  });

  app.post('/webhooks/:id/rotate-secret', requires('webhooks:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return onePage(c, { error: EXPIRED_FORM }, 403);
    const rotated = allowed(c) ? await rotateSecret(caller(c), c.req.param('id')) : null;
    if (!rotated) return onePage(c);
    return onePage(c, { rotated });
  });

  app.post('/webhooks/:id/delete', requires('webhooks:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return onePage(c, { error: EXPIRED_FORM }, 403);
    const gone = allowed(c) ? await service.removeEndpoint(caller(c), c.req.param('id')) : null;
    if (!gone) return onePage(c);
    return redirectPage(c, '/webhooks');
  });

  app.post('/webhooks/:id/deliveries/:msg/retry', requires('webhooks:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return onePage(c, { error: EXPIRED_FORM }, 403);
    if (!allowed(c)) return onePage(c);
    const sent = await service.retryDelivery(caller(c), c.req.param('id'), c.req.param('msg'));
    return sent.ok ? redirectPage(c, `/webhooks/${c.req.param('id')}?done=retried`) : manualRefusal(c, sent);
  });
}
