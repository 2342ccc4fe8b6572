// The webhook endpoints' use cases, for the management API and the console alike: what happens to the
// deliveries when an endpoint is switched off or deleted, and when a test or a retry may be sent. The
// adapters only translate the outcomes (JSON errors, or a page that says it).
import type { ManualSend } from './dispatcher.ts';
import { dispatcher } from './dispatcher-stub.ts';
import {
  deleteEndpoint,
  type EndpointPatch,
  type EndpointView,
  getEndpoint,
  updateEndpoint,
  type WebhookCaller,
} from './endpoints.ts';

export type { WebhookCaller };

export type ManualSendOutcome =
  | { ok: true; msgId: string }
  | { ok: false; reason: 'not_found' }
  /** A disabled endpoint is sent nothing, not even a test: it has to be enabled first. */
  | { ok: false; reason: 'disabled' }
  /** A retry names a message this endpoint never had. */
  | { ok: false; reason: 'no_message' }
  /** The hour's budget of tests and retries is spent. */
  | { ok: false; reason: 'too_many'; max: number; retryAfterMs: number };

/** Changes an endpoint; switching it off gives up what was waiting for it. Null: no such endpoint. */
export async function changeEndpoint(
  caller: WebhookCaller,
  id: string,
  patch: EndpointPatch,
): Promise<EndpointView | null> {
  const endpoint = await updateEndpoint(caller, id, patch);
  if (endpoint && !endpoint.enabled) await dispatcher(caller.env, caller.accountId).giveUp(endpoint.id);
  return endpoint;
}

/** Deletes an endpoint with its deliveries and log. Null: no such endpoint. */
export async function removeEndpoint(caller: WebhookCaller, id: string): Promise<EndpointView | null> {
  const endpoint = await deleteEndpoint(caller, id);
  if (endpoint) await dispatcher(caller.env, caller.accountId).forget(endpoint.id);
  return endpoint;
}

/** A test event to the endpoint, now. */
export function sendTestEvent(caller: WebhookCaller, id: string): Promise<ManualSendOutcome> {
  return manualSend(caller, id, (endpointId) =>
    dispatcher(caller.env, caller.accountId).sendTest(caller.accountId, endpointId, caller.now),
  );
}

/** A message sent again, now, with the same id. */
export function retryDelivery(caller: WebhookCaller, id: string, msgId: string): Promise<ManualSendOutcome> {
  return manualSend(caller, id, (endpointId) => dispatcher(caller.env, caller.accountId).retry(endpointId, msgId));
}

async function manualSend(
  caller: WebhookCaller,
  id: string,
  send: (endpointId: string) => Promise<ManualSend | null>,
): Promise<ManualSendOutcome> {
  const endpoint = await getEndpoint(caller.env.DB, caller.accountId, id);
  if (!endpoint) return { ok: false, reason: 'not_found' };
  if (!endpoint.enabled) return { ok: false, reason: 'disabled' };
  const sent = await send(endpoint.id);
  if (!sent) return { ok: false, reason: 'no_message' };
  if (!sent.ok) return { ok: false, reason: 'too_many', max: sent.max, retryAfterMs: sent.retryAfterMs };
  return { ok: true, msgId: sent.msgId };
}
