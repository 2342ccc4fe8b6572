// The members page (list, invite form, what became of an invitation's mail, "send again", role changes,
// removal) and the page an invitation link opens (name and password, or SSO).
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, NAME_MAX_LENGTH } from '../../auth/limits.ts';
import { operatorLinkCommand, type InvitationDelivery } from '../../teams/invitation-mail.ts';
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
  /** An invitation just mailed (again: by "send again"), and what became of the mail. */
  sent?: { invitation: InvitationView; mail: InvitationDelivery; again: boolean };
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

const utc = (iso: string): string => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

/** What became of an invitation's mail. The link itself is never shown: it proves the invitee's mailbox. */
function sentNotice(sent: NonNullable<MembersState['sent']>): Html {
  const { invitation, mail, again } = sent;
  const what = again ? 'a new invitation link' : 'the invitation link';
  const words =
    mail === 'sent'
      ? html`We mailed ${what} to ${invitation.email}. It works once and expires ${utc(invitation.expires_at)}${again ? '; the link mailed before no longer works' : ''}.`
      : mail === 'not_sent'
        ? html`<strong>We could not mail ${what} to ${invitation.email} just now.</strong> Use "Send again" below in a minute.`
        : html`<strong>Mail is not configured on this service</strong>, so the invitation for ${invitation.email} cannot be mailed. An operator who vouches for the address can print its link: <code>${operatorLinkCommand(invitation.id)}</code>.`;
  return html`<section class="card" aria-labelledby="sent-heading"><h2 id="sent-heading">Invitation for ${invitation.email}</h2>
<p class="${mail === 'sent' ? 'notice' : 'warning'}" role="status">${words}</p></section>`;
}

export function membersPage(state: MembersState): string {
  const body = !state.enterprise
    ? html`<h1>Members</h1><p class="notice">Teams (members, roles, invitations), single sign-on and the audit log come with the enterprise tools tier.</p>`
    : html`<h1>Members</h1>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
${state.sent ? sentNotice(state.sent) : ''}
${
  state.manage
    ? html`<section class="card" aria-labelledby="invite-heading"><h2 id="invite-heading">Invite a person</h2>
<form method="post" action="/members/invitations"><input type="hidden" name="_csrf" value="${state.csrf}">
<label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required>
<label for="invite-role">Role</label>${roleSelect('role', 'invite-role', 'developer', state.me.role === 'owner')}
<ul class="hint">${ROLES.map((r) => html`<li><strong>${r}</strong>: ${ROLE_HINTS[r]}</li>`)}</ul>
<button type="submit">Send invitation</button></form></section>`
    : ''
}
<div class="table-wrap"><table><caption>Members</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Signs in with</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
<tbody>${state.members.map((m) => memberRow(state, m))}</tbody></table></div>
${
  state.invitations.length > 0
    ? html`<div class="table-wrap"><table><caption>Pending invitations</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th>${state.manage ? html`<th scope="col"><span class="skip">Actions</span></th>` : ''}</tr></thead>
<tbody>${state.invitations.map((i) => html`<tr data-invitation-id="${i.id}"><td>${i.email}</td><td>${i.role}</td><td>${utc(i.expires_at)}</td>${state.manage ? html`<td><form method="post" action="/members/invitations/${i.id}/send" class="inline"><input type="hidden" name="_csrf" value="${state.csrf}"><button type="submit" class="secondary">Send again</button></form></td>` : ''}</tr>`)}</tbody></table></div>`
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
