// The API keys page: the list, the create form, the new key shown once, and the revoke confirmation.
import type { ConsoleKey } from '../../keys/service.ts';
import { KEY_NAME_MAX_LENGTH, MAX_ACTIVE_KEYS } from '../../keys/limits.ts';
import { html, type Html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { confirmCard, secretField } from './secret.ts';
import { SAMPLE_FILE } from '../sample.ts';

export interface KeysState {
  csrf: string;
  /** This site's origin: the base URL of the curl lines shown with a new key. */
  origin: string;
  account: { name: string; email: string };
  keys: ConsoleKey[];
  /** The member's role makes management keys (owners and admins): otherwise the form does not offer them. */
  makesManageKeys: boolean;
  /** The key just created: the only time its secret is on a page. */
  created?: ConsoleKey & { key: string };
  error?: string;
  notice?: string;
  values?: { name?: string; scopes?: string[] };
}

const SCOPE_LABELS = { image: 'Image API', tools: 'Tools API', manage: 'Management API' } as const;

const when = (iso: string | null, none: string): Html =>
  iso === null
    ? html`<span class="hint">${none}</span>`
    : html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;

/**
 * Ready-to-run calls with the new key filled in, for what the key may call. The key is in them because
 * this page is the one place it is ever shown; the sample image is in the repository.
 */
export function curlLines(origin: string, key: ConsoleKey & { key: string }): { label: string; command: string }[] {
  const lines: { label: string; command: string }[] = [];
  if (key.scopes.includes('image')) {
    lines.push({
      label: 'Compress the sample image (Image API)',
      command: `curl -sS ${origin}/api/v1/compress -H "Authorization: Bearer ${key.key}" -F image=@${SAMPLE_FILE} -F quality=75 -o sample-small.jpg -D -`,
    });
  }
  if (key.scopes.includes('tools')) {
    lines.push({
      label: 'Your account, tiers and what is left (Tools API)',
      command: `curl -sS ${origin}/api/v1/account -H "X-API-Key: ${key.key}"`,
    });
    lines.push({
      label: 'Search the tools catalogue (Tools API)',
      command: `curl -sS "${origin}/api/v1/tools?search=pdf&limit=3" -H "X-API-Key: ${key.key}"`,
    });
  }
  if (key.scopes.includes('manage')) {
    lines.push({
      label: 'List your keys (Management API)',
      command: `curl -sS ${origin}/api/v1/keys -H "Authorization: Bearer ${key.key}"`,
    });
  }
  return lines;
}

function curlBlock(origin: string, key: ConsoleKey & { key: string }): Html {
  return html`<h3>Try it now</h3>
<p class="hint">Run these from a clone of the repository (the sample image is <code>${SAMPLE_FILE}</code>).</p>
${curlLines(origin, key).map(
  (line, i) => html`<p class="curl-label" id="curl-${i}-label">${line.label}</p>
<div class="curl-line"><pre data-testid="curl-line" aria-labelledby="curl-${i}-label"><code>${line.command}</code></pre>
<input type="hidden" id="curl-${i}" value="${line.command}"><button type="button" class="secondary" data-copy="curl-${i}" aria-label="Copy: ${line.label}">Copy</button></div>
<p class="hint" id="curl-${i}-status" role="status"></p>`,
)}`;
}

function createdPanel(origin: string, key: ConsoleKey & { key: string }): Html {
  return html`<section class="card" aria-labelledby="new-key-heading">
<h2 id="new-key-heading">Your new key "${key.name}"</h2>
<p class="warning" role="status"><strong>Copy it now.</strong> This is the only time the key is shown: we keep only a hash of it. If you lose it, revoke it and create another.</p>
${secretField('new-key', 'API key', key.key)}
<p class="hint">Keep keys on servers and in CI secrets, never in client-side code or a repository.</p>
${curlBlock(origin, key)}
</section>`;
}

/** Who made the key: a member's email (their id once they have left), the operator CLI, or unknown (made before keys recorded it). */
function maker(key: ConsoleKey): Html {
  const by = key.created_by;
  if (by.type === 'operator') return html`<span class="hint">operator</span>`;
  if (by.type === 'unknown' || by.id === null) return html`<span class="hint">unknown</span>`;
  return by.email === null ? html`<code>${by.id}</code> <span class="hint">(left)</span>` : html`${by.email}`;
}

function keyRow(key: ConsoleKey): Html {
  const active = key.revoked_at === null;
  // data-label: at phone width each row becomes a card and every cell says what it is (styles.ts, .stack).
  return html`<tr data-key-id="${key.id}">
<th scope="row">${key.name}</th>
<td data-label="Prefix"><code>${key.prefix}…</code></td>
<td data-label="Scopes">${key.scopes.map((s) => SCOPE_LABELS[s]).join(', ')}</td>
<td data-label="Created">${when(key.created_at, '')}</td>
<td data-label="Made by" data-testid="made-by">${maker(key)}</td>
<td data-label="Last used">${when(key.last_used_at, 'never')}</td>
<td data-label="Status">${active ? html`<span class="status-active">Active</span>` : html`<span class="status-revoked">Revoked</span> ${when(key.revoked_at, '')}`}</td>
<td class="actions">${active ? html`<a href="/keys/${key.id}/revoke" aria-label="Revoke ${key.name}">Revoke</a>` : ''}</td>
</tr>`;
}

export function keysPage(state: KeysState): string {
  const active = state.keys.filter((k) => k.revoked_at === null).length;
  const scopes = state.values?.scopes ?? ['image', 'tools'];
  const first = state.keys.length === 0;
  const body = html`<h1>API keys</h1>
${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
${state.created ? createdPanel(state.origin, state.created) : ''}
<section class="card" aria-labelledby="create-heading">
${
  first
    ? html`<h2 id="create-heading">Create your first key</h2>
<p>Every call to the Image API and the Tools API carries a key. Name it after where it will live; once it is made, this page shows it once, with <code>curl</code> lines ready to paste.</p>`
    : html`<h2 id="create-heading">Create a key</h2>`
}
<form method="post" action="/keys">
<input type="hidden" name="_csrf" value="${state.csrf}">
<label for="key-name">Key name</label>
<input id="key-name" name="name" type="text" required maxlength="${KEY_NAME_MAX_LENGTH}" value="${state.values?.name ?? (first ? 'My first key' : '')}" aria-describedby="key-name-hint"${first ? html` autofocus` : ''}>
<p class="hint" id="key-name-hint">Where the key will live, such as "CI pipeline" or "image worker".</p>
<fieldset><legend>What it may call</legend>
<label class="check"><input type="checkbox" name="scopes" value="image"${scopes.includes('image') ? html` checked` : ''}> Image API</label>
<label class="check"><input type="checkbox" name="scopes" value="tools"${scopes.includes('tools') ? html` checked` : ''}> Tools API</label>
${
  state.makesManageKeys
    ? html`<label class="check"><input type="checkbox" name="scopes" value="manage"${scopes.includes('manage') ? html` checked` : ''}> Management API (keys and webhooks; on its own)</label>`
    : ''
}
</fieldset>
${
  state.makesManageKeys
    ? html`<p class="hint">A Management API key acts as an admin of the account. It lasts while you are an owner or admin: your removal, or a role below admin, revokes it.</p>`
    : html`<p class="hint">Management API keys act as an admin: only owners and admins make them.</p>`
}
<p class="hint">${active} of ${MAX_ACTIVE_KEYS} active keys in use.</p>
<button type="submit">Create key</button>
</form>
</section>
<div class="table-wrap">
<table class="stack keys-table">
<caption>Your API keys</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Made by</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${state.keys.length === 0 ? html`<tr><td colspan="8">No keys yet: create one above.</td></tr>` : state.keys.map(keyRow)}</tbody>
</table>
</div>
<p class="hint">"Last used" is updated at most once a minute.</p>`;
  return renderPage({ title: 'API keys', csrf: state.csrf, account: state.account, section: 'keys', body });
}

export function revokePage(csrf: string, account: { name: string; email: string }, key: ConsoleKey): string {
  const body = html`<h1>Revoke the key "${key.name}"?</h1>
${confirmCard(
  html`The key <code>${key.prefix}…</code> (${key.scopes.map((s) => SCOPE_LABELS[s]).join(', ')}) will be refused from the next request on, everywhere. This cannot be undone.`,
  `/keys/${key.id}/revoke`,
  csrf,
  'Revoke key',
  '/keys',
)}`;
  return renderPage({ title: `Revoke ${key.name}`, csrf, account, section: 'keys', narrow: true, body });
}
