// The signing secrets page (signed image URLs): the account id URLs carry, the secrets (ids and dates),
// the create form, the new secret shown once, and the delete confirmation.
import type { CreatedSecret, SigningSecretView } from '../../signing/secrets.ts';
import { MAX_SIGNING_SECRETS } from '../../signing/limits.ts';
import { html, type Html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { confirmCard, secretField } from './secret.ts';

type Account = { id: string; name: string; email: string };

export interface SigningState {
  csrf: string;
  account: Account;
  secrets: SigningSecretView[];
  /** The secret just created: the only time it is on a page. */
  created?: CreatedSecret;
  error?: string;
  notice?: string;
}

const when = (iso: string): Html => html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;

function createdPanel(secret: CreatedSecret): Html {
  return html`<section class="card" aria-labelledby="new-secret-heading">
<h2 id="new-secret-heading">Your new signing secret</h2>
<p class="warning" role="status"><strong>Copy it now.</strong> This is the only time the secret is shown. Sign new URLs with it, then delete the old secret.</p>
${secretField('new-secret', 'Signing secret', secret.secret)}
</section>`;
}

const row = (s: SigningSecretView): Html => html`<tr data-secret-id="${s.id}">
<th scope="row"><code>${s.id}</code></th>
<td>${when(s.created_at)}</td>
<td><a href="/signing-secrets/${s.id}/delete" aria-label="Delete ${s.id}">Delete</a></td>
</tr>`;

export function signingPage(state: SigningState): string {
  const full = state.secrets.length >= MAX_SIGNING_SECRETS;
  const body = html`<h1>Image URL signing secrets</h1>
${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
${state.created ? createdPanel(state.created) : ''}
<p>Signed image URLs (<code>/api/v1/img/{account}/{signature}/{options}/{source}</code>) carry no key: each is signed with one of these secrets.
Your account id in those URLs is <code data-testid="account-id">${state.account.id}</code>. The README's "Signed image URLs" has the signing snippet.</p>
<section class="card" aria-labelledby="create-heading">
<h2 id="create-heading">Create a secret</h2>
<form method="post" action="/signing-secrets">
<input type="hidden" name="_csrf" value="${state.csrf}">
<p class="hint">${state.secrets.length} of ${MAX_SIGNING_SECRETS} secrets in use: two at once let you rotate without a gap.</p>
<button type="submit"${full ? html` disabled` : ''}>Create secret</button>
</form>
</section>
<div class="table-wrap">
<table>
<caption>Your signing secrets</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Created</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${state.secrets.length === 0 ? html`<tr><td colspan="3">No secrets yet: create one above.</td></tr>` : state.secrets.map(row)}</tbody>
</table>
</div>`;
  return renderPage({ title: 'Image URL signing', csrf: state.csrf, account: state.account, section: 'signing', body });
}

export function deleteSecretPage(csrf: string, account: Account, secret: SigningSecretView): string {
  const body = html`<h1>Delete the secret <code>${secret.id}</code>?</h1>
${confirmCard(
  html`Image URLs signed with it are refused (403) from the next request on, cached ones too. This cannot be undone.`,
  `/signing-secrets/${secret.id}/delete`,
  csrf,
  'Delete secret',
  '/signing-secrets',
)}`;
  return renderPage({ title: `Delete ${secret.id}`, csrf, account, section: 'signing', narrow: true, body });
}
