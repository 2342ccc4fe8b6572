// The webhooks pages: the endpoint list with the add form (the secret shown once after adding), and one
// endpoint's page (edit, enable or disable, send a test, rotate the secret, delete, the delivery log with
// a retry button per message).
import type { DeliveryView } from '../../webhooks/dispatch-store.ts';
import type { EndpointView } from '../../webhooks/endpoints.ts';
import { EVENT_TYPES } from '../../webhooks/events.ts';
import { DESCRIPTION_MAX_LENGTH, MAX_ENDPOINTS_PER_ACCOUNT } from '../../webhooks/limits.ts';
import { html, type Html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { secretField } from './secret.ts';

type Account = { name: string; email: string };

const EVENT_LABELS: Record<(typeof EVENT_TYPES)[number], string> = {
  'key.created': 'key.created: an API key was made',
  'key.revoked': 'key.revoked: an API key was revoked',
  'usage.threshold': 'usage.threshold: 80 % and 100 % of a month (image API) or day (tools API)',
  'rate_limit.exceeded': "rate_limit.exceeded: a key's first 429 in a window",
  'webhook.test': 'webhook.test: sent when you ask for a test',
};

const when = (iso: string | null): Html =>
  iso === null
    ? html`<span class="hint">none</span>`
    : html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')} UTC</time>`;

function secretPanel(endpoint: EndpointView & { secret: string }, heading: string): Html {
  return html`<section class="card" aria-labelledby="secret-heading">
<h2 id="secret-heading">${heading}</h2>
<p class="warning" role="status"><strong>Copy the signing secret now.</strong> This is the only time it is shown. Verify each message with it (Standard Webhooks: the <code>webhook-signature</code> header).</p>
${secretField('new-secret', 'Signing secret', endpoint.secret)}
</section>`;
}

function eventBoxes(chosen: readonly string[]): Html {
  return html`<fieldset><legend>Events to send</legend>
${EVENT_TYPES.filter((t) => t !== 'webhook.test').map((t) => html`<label class="check"><input type="checkbox" name="events" value="${t}"${chosen.includes(t) ? html` checked` : ''}> ${EVENT_LABELS[t]}</label>`)}
</fieldset>`;
}

const status = (e: EndpointView): Html =>
  e.enabled
    ? html`<span class="status-active">Enabled</span>`
    : html`<span class="status-revoked">Disabled</span> <span class="hint">${e.disabled_reason ?? ''}</span>`;

export interface WebhooksState {
  csrf: string;
  account: Account;
  /** false: the tools tier has no webhooks; the page says how to get them. */
  allowed: boolean;
  endpoints: EndpointView[];
  created?: EndpointView & { secret: string };
  error?: string;
  values?: { url?: string; description?: string; events?: string[] };
}

export function webhooksPage(state: WebhooksState): string {
  if (!state.allowed) {
    const body = html`<h1>Webhooks</h1><div class="card"><p>Webhooks are part of the <strong>developer</strong> and <strong>enterprise</strong> tools tiers. Your account is on the free tier; ask us to upgrade it, and this page lets you add endpoints.</p></div>`;
    return renderPage({ title: 'Webhooks', csrf: state.csrf, account: state.account, section: 'webhooks', body });
  }
  const body = html`<h1>Webhooks</h1>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
${state.created ? secretPanel(state.created, `Endpoint added: ${state.created.url}`) : ''}
<section class="card" aria-labelledby="add-heading">
<h2 id="add-heading">Add an endpoint</h2>
<form method="post" action="/webhooks">
<input type="hidden" name="_csrf" value="${state.csrf}">
<label for="hook-url">URL</label>
<input id="hook-url" name="url" type="url" required placeholder="https://example.com/hooks/shrinkray" value="${state.values?.url ?? ''}" aria-describedby="hook-url-hint">
<p class="hint" id="hook-url-hint">https on a public host and port 443. Each event is POSTed as JSON, signed as Standard Webhooks specifies.</p>
<label for="hook-description">Description (optional)</label>
<input id="hook-description" name="description" type="text" maxlength="${DESCRIPTION_MAX_LENGTH}" value="${state.values?.description ?? ''}">
${eventBoxes(state.values?.events ?? ['usage.threshold', 'rate_limit.exceeded'])}
<p class="hint">${state.endpoints.length} of ${MAX_ENDPOINTS_PER_ACCOUNT} endpoints in use.</p>
<button type="submit">Add endpoint</button>
</form>
</section>
<div class="table-wrap">
<table>
<caption>Your webhook endpoints</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${
    state.endpoints.length === 0
      ? html`<tr><td colspan="4">No endpoints yet: add one above.</td></tr>`
      : state.endpoints.map(
          (
            e,
          ) => html`<tr data-endpoint-id="${e.id}"><th scope="row"><code>${e.url}</code>${e.description ? html`<br><span class="hint">${e.description}</span>` : ''}</th>
<td>${e.events.join(', ')}</td><td>${status(e)}</td><td><a href="/webhooks/${e.id}" aria-label="Manage ${e.url}">Manage</a></td></tr>`,
        )
  }</tbody>
</table>
</div>`;
  return renderPage({ title: 'Webhooks', csrf: state.csrf, account: state.account, section: 'webhooks', body });
}

export interface EndpointState {
  csrf: string;
  account: Account;
  endpoint: EndpointView;
  deliveries: DeliveryView[];
  rotated?: EndpointView & { secret: string };
  notice?: string;
  error?: string;
}

const button = (csrf: string, action: string, label: string, cls = 'secondary'): Html =>
  html`<form method="post" action="${action}" class="inline"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="${cls}">${label}</button></form>`;

function deliveryRow(csrf: string, endpointId: string, d: DeliveryView): Html {
  const last = d.attempts[d.attempts.length - 1];
  return html`<tr data-msg-id="${d.msg_id}">
<th scope="row"><code>${d.msg_id}</code><br><span class="hint">${d.type}</span></th>
<td>${when(d.created_at)}</td>
<td>${d.state}${d.next_attempt_at ? html`<br><span class="hint">next ${when(d.next_attempt_at)}</span>` : ''}</td>
<td>${d.attempts.length}${last ? html`<br><span class="hint">last: ${last.status === null ? (last.error ?? '') : String(last.status)}</span>` : ''}</td>
<td>${button(csrf, `/webhooks/${endpointId}/deliveries/${d.msg_id}/retry`, 'Retry')}</td>
</tr>`;
}

export function endpointPage(state: EndpointState): string {
  const e = state.endpoint;
  const body = html`<h1>Webhook endpoint</h1>
<p><a href="/webhooks">All endpoints</a></p>
${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
${state.rotated ? secretPanel(state.rotated, 'New signing secret') : ''}
<section class="card" aria-labelledby="edit-heading">
<h2 id="edit-heading">Settings</h2>
<p>Status: ${status(e)}</p>
<form method="post" action="/webhooks/${e.id}">
<input type="hidden" name="_csrf" value="${state.csrf}">
<label for="hook-url">URL</label>
<input id="hook-url" name="url" type="url" required value="${e.url}">
<label for="hook-description">Description</label>
<input id="hook-description" name="description" type="text" maxlength="${DESCRIPTION_MAX_LENGTH}" value="${e.description}">
${eventBoxes(e.events)}
<label class="check"><input type="checkbox" name="enabled" value="1"${e.enabled ? html` checked` : ''}> Enabled</label>
<button type="submit">Save</button>
</form>
</section>
<section class="card" aria-labelledby="actions-heading">
<h2 id="actions-heading">Actions</h2>
${e.enabled ? button(state.csrf, `/webhooks/${e.id}/test`, 'Send a test event') : ''}
${button(state.csrf, `/webhooks/${e.id}/rotate-secret`, 'Rotate the signing secret')}
${button(state.csrf, `/webhooks/${e.id}/delete`, 'Delete endpoint', 'danger')}
</section>
<div class="table-wrap">
<table>
<caption>Delivery log (newest first)</caption>
<thead><tr><th scope="col">Message</th><th scope="col">Created</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${state.deliveries.length === 0 ? html`<tr><td colspan="5">Nothing sent yet.</td></tr>` : state.deliveries.map((d) => deliveryRow(state.csrf, e.id, d))}</tbody>
</table>
</div>`;
  return renderPage({ title: 'Webhook endpoint', csrf: state.csrf, account: state.account, section: 'webhooks', body });
}
