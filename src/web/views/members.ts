// The members page (list, invite form, the new link shown once, role changes, removal) and the page an
// invitation link opens (name and password, or SSO).
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, NAME_MAX_LENGTH } from '../../auth/limits.ts';
import type { InvitationView, MemberView } from '../../teams/members.ts';
import { ROLES, type Role } from '../../teams/roles.ts';
import { html, type Html } from '../html.ts';
import { renderPage } from '../layout.ts';

export interface MembersState {
  csrf: string;
  account: { name: string; email: string };
  me: { id: string; role: Role };
  enterprise: boolean;
  manage: boolean;
  members: MemberView[];
  invitations: InvitationView[];
  created?: InvitationView & { url: string; mailed: boolean };
  error?: string;
}

const ROLE_HINTS: Record<Role, string> = {
  owner: 'everything, billing tiers, can delete the account',
  admin: 'keys, webhooks, members, SSO, audit log',
  developer: 'keys and usage',
  viewer: 'read only',
};

const roleSelect = (name: string, id: string, selected: Role, owner: boolean): Html =>
  html`<select name="${name}" id="${id}">${ROLES.filter((r) => owner || r !== 'owner').map((r) => html`<option value="${r}"${r === selected ? html` selected` : ''}>${r}</option>`)}</select>`;

function memberRow(state: MembersState, m: MemberView): Html {
  const owner = state.me.role === 'owner';
  const editable = state.manage && (owner || m.role !== 'owner');
  const self = m.id === state.me.id;
  return html`<tr data-member-id="${m.id}">
<th scope="row">${m.name}${self ? html` <span class="hint">(you)</span>` : ''}</th>
<td>${m.email}</td>
<td>${editable ? html`<form method="post" action="/members/${m.id}/role" class="inline"><input type="hidden" name="_csrf" value="${state.csrf}"><label class="skip" for="role-${m.id}">Role of ${m.name}</label>${roleSelect('role', `role-${m.id}`, m.role, owner)} <button type="submit" class="secondary">Change</button></form>` : m.role}</td>
<td>${m.sign_in.join(', ') || html`<span class="hint">not yet</span>`}</td>
<td>${editable || self ? html`<form method="post" action="/members/${m.id}/remove" class="inline"><input type="hidden" name="_csrf" value="${state.csrf}"><button type="submit" class="secondary">${self ? 'Leave' : 'Remove'}</button></form>` : ''}</td>
</tr>`;
}

export function membersPage(state: MembersState): string {
  const body = !state.enterprise
    ? html`<h1>Members</h1><p class="notice">Teams (members, roles, invitations), single sign-on and the audit log come with the enterprise tools tier.</p>`
    : html`<h1>Members</h1>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
${
  state.created
    ? html`<section class="card" aria-labelledby="link-heading"><h2 id="link-heading">Invitation for ${state.created.email}</h2>
<p class="warning" role="status">${state.created.mailed ? html`We mailed the link to ${state.created.email}. You may also copy it and give it to them:` : html`<strong>We could not mail the link: copy it now</strong> and give it to them:`} it is shown this once, works once, and expires ${state.created.expires_at.slice(0, 16).replace('T', ' ')} UTC.</p>
<div class="secret"><input id="invite-link" data-testid="invite-link" type="text" readonly value="${state.created.url}"><button type="button" data-copy="invite-link">Copy</button></div></section>`
    : ''
}
${
  state.manage
    ? html`<section class="card" aria-labelledby="invite-heading"><h2 id="invite-heading">Invite a person</h2>
<form method="post" action="/members/invitations"><input type="hidden" name="_csrf" value="${state.csrf}">
<label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required>
<label for="invite-role">Role</label>${roleSelect('role', 'invite-role', 'developer', state.me.role === 'owner')}
<ul class="hint">${ROLES.map((r) => html`<li><strong>${r}</strong>: ${ROLE_HINTS[r]}</li>`)}</ul>
<button type="submit">Create invitation link</button></form></section>`
    : ''
}
<div class="table-wrap"><table><caption>Members</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Signs in with</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${state.members.map((m) => memberRow(state, m))}</tbody></table></div>
${
  state.invitations.length > 0
    ? html`<div class="table-wrap"><table><caption>Pending invitations</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th></tr></thead>
<tbody>${state.invitations.map((i) => html`<tr><td>${i.email}</td><td>${i.role}</td><td>${i.expires_at.slice(0, 16).replace('T', ' ')} UTC</td></tr>`)}</tbody></table></div>`
    : ''
}`;
  return renderPage({ title: 'Members', csrf: state.csrf, account: state.account, section: 'members', body });
}

export function acceptPage(state: {
  csrf: string;
  token: string;
  email: string;
  accountName: string;
  role: Role;
  sso: boolean;
  error?: string;
}): string {
  const body = html`<h1>Join ${state.accountName}</h1>
<p>You are invited as <strong>${state.role}</strong> with the email <strong>${state.email}</strong>.</p>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
${
  state.sso
    ? html`<p><a class="button" href="/sso/start?email=${encodeURIComponent(state.email)}">Sign in with SSO</a></p><p class="hint">Your organisation's single sign-on covers this email; you join on your first sign-in.</p>`
    : html`
<form method="post" action="/invitations/${state.token}"><input type="hidden" name="_csrf" value="${state.csrf}">
<label for="name">Your name</label><input id="name" name="name" type="text" required maxlength="${NAME_MAX_LENGTH}" autocomplete="name">
<label for="password">Choose a password</label><input id="password" name="password" type="password" required minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autocomplete="new-password">
<p class="hint">At least ${PASSWORD_MIN_LENGTH} characters.</p>
<button type="submit">Join</button></form>`
}`;
  return renderPage({ title: 'Join', csrf: state.csrf, account: null, narrow: true, body });
}
