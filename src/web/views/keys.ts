// The API keys page: the list, the create form, the new key shown once, and the revoke confirmation.
import type { ConsoleKey } from '../../console/keys.ts';
import { KEY_NAME_MAX_LENGTH, MAX_ACTIVE_KEYS } from '../../console/limits.ts';
import { html, type Html } from '../html.ts';
import { renderPage } from '../layout.ts';

export interface KeysState {
  csrf: string;
  account: { name: string; email: string };
  keys: ConsoleKey[];
  /** The key just created: the only time its secret is on a page. */
  created?: ConsoleKey & { key: string };
  error?: string;
  notice?: string;
  values?: { name?: string; scopes?: string[] };
}

const SCOPE_LABELS = { image: 'Image API', tools: 'Tools API', manage: 'Management API' } as const;

const when = (iso: string | null, none: string): Html =>
  iso === null ? html`<span class="hint">${none}</span>` : html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;

function createdPanel(key: ConsoleKey & { key: string }): Html {
  return html`<section class="card" aria-labelledby="new-key-heading">
<h2 id="new-key-heading">Your new key "${key.name}"</h2>
<p class="warning" role="status"><strong>Copy it now.</strong> This is the only time the key is shown: we keep only a hash of it. If you lose it, revoke it and create another.</p>
<label for="new-key">API key</label>
<div class="secret">
<input id="new-key" data-testid="new-key" type="text" readonly value="${key.key}" spellcheck="false" autocomplete="off">
<button type="button" data-copy="new-key">Copy</button>
</div>
<p class="hint" id="new-key-status" role="status"></p>
<p class="hint">Keep keys on servers and in CI secrets, never in client-side code or a repository.</p>
</section>`;
}

function keyRow(key: ConsoleKey): Html {
  const active = key.revoked_at === null;
  return html`<tr data-key-id="${key.id}">
<th scope="row">${key.name}</th>
<td><code>${key.prefix}…</code></td>
<td>${key.scopes.map((s) => SCOPE_LABELS[s]).join(', ')}</td>
<td>${when(key.created_at, '')}</td>
<td>${when(key.last_used_at, 'never')}</td>
<td>${active ? html`<span class="status-active">Active</span>` : html`<span class="status-revoked">Revoked</span> ${when(key.revoked_at, '')}`}</td>
<td>${active ? html`<a href="/keys/${key.id}/revoke" aria-label="Revoke ${key.name}">Revoke</a>` : ''}</td>
</tr>`;
}

export function keysPage(state: KeysState): string {
  const active = state.keys.filter((k) => k.revoked_at === null).length;
  const scopes = state.values?.scopes ?? ['image', 'tools'];
  const body = html`<h1>API keys</h1>
${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
${state.created ? createdPanel(state.created) : ''}
<section class="card" aria-labelledby="create-heading">
<h2 id="create-heading">Create a key</h2>
<form method="post" action="/keys">
<input type="hidden" name="_csrf" value="${state.csrf}">
<label for="key-name">Key name</label>
<input id="key-name" name="name" type="text" required maxlength="${KEY_NAME_MAX_LENGTH}" value="${state.values?.name ?? ''}" aria-describedby="key-name-hint">
<p class="hint" id="key-name-hint">Where the key will live, such as "CI pipeline" or "image worker".</p>
<fieldset><legend>What it may call</legend>
<label class="check"><input type="checkbox" name="scopes" value="image"${scopes.includes('image') ? html` checked` : ''}> Image API</label>
<label class="check"><input type="checkbox" name="scopes" value="tools"${scopes.includes('tools') ? html` checked` : ''}> Tools API</label>
<label class="check"><input type="checkbox" name="scopes" value="manage"${scopes.includes('manage') ? html` checked` : ''}> Management API (keys and webhooks; on its own)</label>
</fieldset>
<p class="hint">${active} of ${MAX_ACTIVE_KEYS} active keys in use.</p>
<button type="submit">Create key</button>
</form>
</section>
<div class="table-wrap">
<table>
<caption>Your API keys</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${state.keys.length === 0 ? html`<tr><td colspan="7">No keys yet: create one above.</td></tr>` : state.keys.map(keyRow)}</tbody>
</table>
</div>
<p class="hint">"Last used" is updated at most once a minute.</p>`;
  return renderPage({ title: 'API keys', csrf: state.csrf, account: state.account, section: 'keys', body });
}

export function revokePage(csrf: string, account: { name: string; email: string }, key: ConsoleKey): string {
  const body = html`<h1>Revoke the key "${key.name}"?</h1>
<div class="card">
<p>The key <code>${key.prefix}…</code> (${key.scopes.map((s) => SCOPE_LABELS[s]).join(', ')}) will be refused from the next request on, everywhere. This cannot be undone.</p>
<form method="post" action="/keys/${key.id}/revoke" class="inline">
<input type="hidden" name="_csrf" value="${csrf}">
<button type="submit" class="danger">Revoke key</button>
</form>
<a class="button secondary" href="/keys">Cancel</a>
</div>`;
  return renderPage({ title: `Revoke ${key.name}`, csrf, account, section: 'keys', narrow: true, body });
}
