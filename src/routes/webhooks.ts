// Webhook endpoints over the management API: register, list, read, change, delete, send a test, rotate
// the secret, read the delivery log, retry a message. Callable with a `manage` key or the console session
// (accountAuth), for accounts whose tools tier has webhooks. The domain is src/webhooks/.
import { manageDoc, manageRoute } from './manage-route.ts';
import { requires } from './requires.ts';
import { requestMeta } from './manage-read.ts';
import { requireFeature, tiersWith } from '../accounts/entitlements.ts';
import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { clock } from '../env.ts';
import { accountAuth } from '../http/account-auth.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import type { AppEnv } from '../http/context.ts';
import { ApiError, type ErrorCode } from '../errors.ts';
import { parseJsonBody } from '../http/json-body.ts';
import { dispatcher } from '../webhooks/dispatcher-stub.ts';
import { createEndpoint, getEndpoint, listEndpoints, rotateSecret, type EndpointView } from '../webhooks/endpoints.ts';
import * as service from '../webhooks/service.ts';
import { MAX_ENDPOINTS_PER_ACCOUNT, MAX_MANUAL_SENDS_PER_HOUR } from '../webhooks/limits.ts';
import { checkEndpointUrl } from '../webhooks/url.ts';
import { MANAGE_NOTE } from './manage-schema.ts';
import { jsonOk } from './schemas.ts';
import {
  CreateEndpointBody,
  DeliveryList,
  DeliveryParams,
  EndpointIdParam,
  EndpointList,
  EndpointOne,
  EndpointWithSecret,
  MessageAccepted,
  PatchEndpointBody,
} from './webhooks-schema.ts';

export const WEBHOOKS_PATH = '/api/v1/webhooks';
const TIER_NOTE = ` Tools tier ${tiersWith('webhooks').join(' or ')} (403 plan_upgrade_required otherwise).${MANAGE_NOTE}`;
/** Besides 401 and 403 (manageDoc): the tier, and an endpoint that is not the account's. */
const ERRORS = ['plan_upgrade_required', 'not_found'] as const;

/** accountAuth, then the tier: every route here. */
const webhooksTier = async (c: Context<AppEnv>, next: () => Promise<void>) => {
  requireFeature({ tools: c.var.principal.toolsTier }, 'webhooks');
  await next();
};
const guards = [accountAuth, webhooksTier] as const;

/** Tests and manual retries make us POST to a URL of the caller's choosing: a budget per hour. */
function tooManyManualSends(refused: { retryAfterMs: number; max: number }): ApiError {
  const retryAfter = Math.max(1, Math.ceil(refused.retryAfterMs / 1000));
  return new ApiError(
    'rate_limit_exceeded',
    `an account may send at most ${refused.max} test events and manual retries per hour; try again in ${retryAfter} s`,
    {
      details: { max: refused.max },
      headers: { 'Retry-After': String(retryAfter) },
    },
  );
}

const noEndpoint = (): ApiError =>
  new ApiError('not_found', 'no webhook endpoint with this id in your account', { param: 'id' });

async function endpointOr404(c: Context<AppEnv>, id: string): Promise<EndpointView> {
  const endpoint = await getEndpoint(c.env.DB, c.var.principal.accountId, id);
  if (!endpoint) throw noEndpoint();
  return endpoint;
}

const caller = (c: Context<AppEnv>): service.WebhookCaller => ({
  env: c.env,
  accountId: c.var.principal.accountId,
  now: clock(c.env),
  origin: auditOrigin(c),
});

/** A test or retry that went out, or the error its refusal is. */
function manualSent(outcome: service.ManualSendOutcome): { msgId: string } {
  if (outcome.ok) return outcome;
  switch (outcome.reason) {
    case 'not_found':
      throw noEndpoint();
    case 'disabled':
      throw new ApiError('bad_request', 'this endpoint is disabled: enable it first (PATCH with "enabled": true)', {
        param: 'id',
      });
    case 'no_message':
      throw new ApiError('not_found', 'this endpoint has no message with this id', { param: 'msg_id' });
    case 'too_many':
      throw tooManyManualSends(outcome);
  }
}

/** The path parameters a path names: an endpoint's id, and a message's id below it. */
const paramsOf = (path: string) =>
  path.includes('{msg_id}') ? { params: DeliveryParams } : path.includes('{id}') ? { params: EndpointIdParam } : {};

const route = <P extends string>(
  method: 'get' | 'post' | 'patch' | 'delete',
  path: P,
  summary: string,
  description: string,
  responses: RouteConfig['responses'],
  errors: readonly ErrorCode[] = [],
) =>
  // Reading needs only a seat in the account; every change is an admin's.
  manageRoute(requires(method === 'get' ? 'read' : 'webhooks:write'), guards, {
    method,
    path,
    summary,
    description: description + TIER_NOTE,
    ...(path.includes('{') ? { request: paramsOf(path) } : {}),
    responses,
    errors: [...errors, ...ERRORS],
  });

const bodyDoc = (
  method: 'post' | 'patch',
  path: string,
  summary: string,
  description: string,
  schema: typeof CreateEndpointBody | typeof PatchEndpointBody,
  ok: RouteConfig['responses'],
): RouteConfig =>
  manageDoc({
    method,
    path,
    summary,
    description: description + TIER_NOTE,
    request: {
      ...paramsOf(path),
      body: { required: true, content: { 'application/json': { schema } } },
    },
    responses: ok,
    errors: ['bad_request', 'payload_too_large', ...ERRORS],
  });

const createDoc = bodyDoc(
  'post',
  WEBHOOKS_PATH,
  'Register a webhook endpoint; its signing secret is in this answer (and after rotate-secret) only',
  `At most ${MAX_ENDPOINTS_PER_ACCOUNT} endpoints per account (400 above). The url must be https on a public host.`,
  CreateEndpointBody,
  {
    201: jsonOk('The endpoint, with its secret', EndpointWithSecret),
  },
);
const patchDoc = bodyDoc(
  'patch',
  `${WEBHOOKS_PATH}/{id}`,
  'Change an endpoint: url, events, description, or enabled (switch it off or back on)',
  'Switching it off gives up the deliveries waiting for it; switching it on clears disabled_reason.',
  PatchEndpointBody,
  { 200: jsonOk('The endpoint as it is now', EndpointOne) },
);

const listRoute = route('get', WEBHOOKS_PATH, "The account's webhook endpoints", 'Secrets are never listed.', {
  200: jsonOk('The endpoints', EndpointList),
});
const oneRoute = route(
  'get',
  `${WEBHOOKS_PATH}/{id}`,
  'One webhook endpoint',
  'Says whether it is enabled, and why not.',
  {
    200: jsonOk('The endpoint', EndpointOne),
  },
);
const deleteRoute = route(
  'delete',
  `${WEBHOOKS_PATH}/{id}`,
  'Delete a webhook endpoint, its deliveries and their log',
  'Nothing more is sent to it.',
  {
    200: jsonOk('The endpoint as it was', EndpointOne),
  },
);
const testRoute = route(
  'post',
  `${WEBHOOKS_PATH}/{id}/test`,
  'Send a webhook.test message to the endpoint',
  `Delivered like any event (signed, retried on the schedule). 400 when the endpoint is disabled; at most ${MAX_MANUAL_SENDS_PER_HOUR} tests and manual retries per account per hour (429).`,
  {
    202: jsonOk('Accepted: the message id', MessageAccepted),
  },
  ['bad_request', 'rate_limit_exceeded'],
);
const rotateRoute = route(
  'post',
  `${WEBHOOKS_PATH}/{id}/rotate-secret`,
  'Replace the signing secret; the new one is in this answer only',
  'Attempts from now on are signed with the new secret, retries of older messages too.',
  {
    200: jsonOk('The endpoint, with its new secret', EndpointWithSecret),
  },
);
const deliveriesRoute = route(
  'get',
  `${WEBHOOKS_PATH}/{id}/deliveries`,
  "The endpoint's delivery log: each message, its attempts (time, status), state and next attempt",
  'Newest first.',
  {
    200: jsonOk('The log', DeliveryList),
  },
);
const retryRoute = route(
  'post',
  `${WEBHOOKS_PATH}/{id}/deliveries/{msg_id}/retry`,
  'Send a message to the endpoint again, now, with the same id',
  `One attempt, whatever state the delivery was in (a pending one is brought forward). 400 when the endpoint is disabled; counts towards the ${MAX_MANUAL_SENDS_PER_HOUR} manual sends per hour (429).`,
  {
    202: jsonOk('Accepted', MessageAccepted),
  },
  ['bad_request', 'rate_limit_exceeded'],
);

export function registerWebhooks(app: OpenAPIHono<AppEnv>): void {
  const example = '{"url":"https://example.com/hooks","events":["usage.threshold"]}';

  app.openAPIRegistry.registerPath(createDoc);
  app.post(WEBHOOKS_PATH, requires('webhooks:write'), ...guards, async (c) => {
    const parsed = await parseJsonBody(c.req.raw, CreateEndpointBody, FORM_BODY_MAX_BYTES, example);
    const url = checkEndpointUrl(parsed.url, c.env.FETCH_TEST_ORIGIN).href;
    const created = await createEndpoint(caller(c), { ...parsed, url });
    if (!created.ok)
      throw new ApiError(
        'bad_request',
        `an account may have at most ${created.max} webhook endpoints; delete one first`,
        { details: { max: created.max } },
      );
    c.header('Location', `${WEBHOOKS_PATH}/${created.endpoint.id}`);
    return c.json({ data: created.endpoint, meta: requestMeta(c) }, 201);
  });

  app.openapi(listRoute, async (c) => {
    const endpoints = await listEndpoints(c.env.DB, c.var.principal.accountId);
    return c.json({ data: endpoints, meta: { ...requestMeta(c), total: endpoints.length } }, 200);
  });

  app.openapi(oneRoute, async (c) =>
    c.json({ data: await endpointOr404(c, c.req.param('id')), meta: requestMeta(c) }, 200),
  );

  app.openAPIRegistry.registerPath(patchDoc);
  app.patch(`${WEBHOOKS_PATH}/:id`, requires('webhooks:write'), ...guards, async (c) => {
    const parsed = await parseJsonBody(c.req.raw, PatchEndpointBody, FORM_BODY_MAX_BYTES, example);
    const patch = {
      ...parsed,
      ...(parsed.url !== undefined ? { url: checkEndpointUrl(parsed.url, c.env.FETCH_TEST_ORIGIN).href } : {}),
    };
    const endpoint = await service.changeEndpoint(caller(c), c.req.param('id'), patch);
    if (!endpoint) throw noEndpoint();
    return c.json({ data: endpoint, meta: requestMeta(c) }, 200);
  });

  app.openapi(deleteRoute, async (c) => {
    const endpoint = await service.removeEndpoint(caller(c), c.req.param('id'));
    if (!endpoint) throw noEndpoint();
    return c.json({ data: endpoint, meta: requestMeta(c) }, 200);
  });

  app.openapi(testRoute, async (c) => {
    const sent = manualSent(await service.sendTestEvent(caller(c), c.req.param('id')));
    return c.json({ data: { msg_id: sent.msgId }, meta: requestMeta(c) }, 202);
  });

  app.openapi(rotateRoute, async (c) => {
    const endpoint = await rotateSecret(caller(c), c.req.param('id'));
    if (!endpoint) throw noEndpoint();
    return c.json({ data: endpoint, meta: requestMeta(c) }, 200);
  });

  app.openapi(deliveriesRoute, async (c) => {
    const endpoint = await endpointOr404(c, c.req.param('id'));
    return c.json(
      { data: await dispatcher(c.env, c.var.principal.accountId).deliveries(endpoint.id), meta: requestMeta(c) },
      200,
    );
  });

  app.openapi(retryRoute, async (c) => {
    const sent = manualSent(await service.retryDelivery(caller(c), c.req.param('id'), c.req.param('msg_id')));
    return c.json({ data: { msg_id: sent.msgId }, meta: requestMeta(c) }, 202);
  });
}
