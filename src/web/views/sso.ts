// Single sign-on pages: "Sign in with SSO" (the email decides the issuer), the proof an existing member
// gives before an SSO identity is linked to them, and the console's settings with each domain's proof.
import type { SsoView } from '../../sso/config.ts';
import type { PendingLink } from '../../sso/link-proof.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';

export function ssoStartPage(state: { csrf: string; email: string; error?: string | undefined }): string {
  const body = html`<h1>Sign in with SSO</h1>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
<form method="get" action="/sso/start" class="card">
<label for="sso-email">Work email</label>
<input id="sso-email" name="email" type="email" required autocomplete="email" value="${state.email}">
<button type="submit">Continue</button>
</form>
<p><a href="/signin">Sign in with a password</a></p>`;
  return renderPage({
    title: 'Sign in with SSO',
    csrf: state.csrf,
    account: null,
    section: 'signin',
    narrow: true,
    body,
  });
}

export interface SsoSettingsState {
  csrf: string;
  account: { name: string; email: string };
  enterprise: boolean;
  sso: SsoView | null;
  redirectUri: string;
  error?: string;
  notice?: string;
  values?: { issuer?: string; client_id?: string; domains?: string; require_sso?: boolean };
}

export function ssoSettingsPage(state: SsoSettingsState): string {
  const v = {
    issuer: state.sso?.issuer,
    client_id: state.sso?.client_id,
    domains: state.sso?.domains.map((d) => d.domain).join(', '),
    require_sso: state.sso?.require_sso,
    ...state.values,
  };
  const body = !state.enterprise
    ? html`<h1>Single sign-on</h1><p class="notice">Single sign-on comes with the enterprise tools tier.</p>`
    : html`<h1>Single sign-on</h1>
${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
<p>Register this redirect URI with your identity provider: <code data-testid="redirect-uri">${state.redirectUri}</code></p>
<form method="post" action="/sso" class="card"><input type="hidden" name="_csrf" value="${state.csrf}">
<label for="sso-issuer">Issuer URL</label><input id="sso-issuer" name="issuer" type="url" required value="${v.issuer ?? ''}" placeholder="https://login.example.com">
<label for="sso-client">Client id</label><input id="sso-client" name="client_id" type="text" required value="${v.client_id ?? ''}">
<label for="sso-secret">Client secret</label><input id="sso-secret" name="client_secret" type="password" required autocomplete="off">
<p class="hint">Stored encrypted and never shown again; enter it again with every change.</p>
<label for="sso-domains">Email domains (comma-separated)</label><input id="sso-domains" name="domains" type="text" required value="${v.domains ?? ''}" placeholder="example.com">
<label class="check"><input type="checkbox" name="require_sso" value="1"${v.require_sso ? html` checked` : ''}> Require SSO: no password sign-in for members of these domains (owners keep theirs)</label>
<button type="submit">Save</button></form>
${state.sso ? domainsCard(state.csrf, state.sso) : ''}
${state.sso ? html`<form method="post" action="/sso/delete"><input type="hidden" name="_csrf" value="${state.csrf}"><button type="submit" class="secondary">Remove single sign-on</button></form>` : ''}`;
  return renderPage({ title: 'Single sign-on', csrf: state.csrf, account: state.account, body });
}

/** Each domain's proof: the TXT record to publish, whether it was seen, and "Check now". */
function domainsCard(csrf: string, sso: SsoView) {
  return html`<h2>Domain proof</h2>
<p>A domain routes nobody to single sign-on until you prove it is yours: publish each record below in the domain's DNS, then check. We also look again now and then for a week.</p>
<table class="card" data-testid="sso-domains"><thead><tr><th>Domain</th><th>Status</th><th>TXT record name</th><th>Value</th><th></th></tr></thead><tbody>
${sso.domains.map(
  (
    d,
  ) => html`<tr data-domain="${d.domain}"><td>${d.domain}</td><td>${d.verified ? html`<span class="ok">verified</span>` : 'not verified yet'}</td>
<td><code>${d.txt_name}</code></td><td><code>${d.txt_value}</code></td>
<td>${d.verified ? '' : html`<form method="post" action="/sso/domains/verify"><input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="domain" value="${d.domain}"><button type="submit" class="secondary" aria-label="Check ${d.domain} now">Check now</button></form>`}</td></tr>`,
)}
</tbody></table>`;
}

export interface LinkProofState {
  csrf: string;
  pending: PendingLink;
  error?: string;
  /** Set when the link was just mailed. */
  sent?: boolean;
}

/** "Confirm it is you": an SSO sign-in found an existing member; the password or a mailed link proves it. */
export function ssoLinkPage(state: LinkProofState): string {
  const { pending } = state;
  const body = html`<h1>Confirm it is you</h1>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
${state.sent ? html`<p class="notice" role="status">We sent a link to ${pending.email}. Open it in this browser to finish signing in.</p>` : ''}
<p>${pending.email} already has a Shrinkray account. Before ${pending.issuer ?? 'your identity provider'} can sign you in to it, prove that it is yours, once.</p>
${
  pending.hasPassword
    ? html`<form method="post" action="/sso/link" class="card"><input type="hidden" name="_csrf" value="${state.csrf}">
<label for="link-password">Your Shrinkray password</label>
<input id="link-password" name="password" type="password" required autocomplete="current-password" autofocus>
<button type="submit">Confirm with my password</button></form>`
    : ''
}
<form method="post" action="/sso/link/mail" class="card"><input type="hidden" name="_csrf" value="${state.csrf}">
<p>${pending.hasPassword ? 'Or we' : 'We'} can email a single-use link to ${pending.email}.</p>
<button type="submit"${pending.hasPassword ? html` class="secondary"` : ''}>${state.sent || pending.mailed ? 'Email me a new link' : 'Email me a link'}</button></form>`;
  return renderPage({ title: 'Confirm it is you', csrf: state.csrf, account: null, narrow: true, body });
}

/** The mailed link's page: a button (mail scanners open links and must not use them), or why it cannot work here. */
export function ssoLinkConfirmPage(state: { csrf: string; token: string; otherBrowser: boolean }): string {
  const body = state.otherBrowser
    ? html`<h1>Open this link where you signed in</h1><p role="alert">This link works only in the browser where you signed in with single sign-on. Open it there, or start again from <a href="/sso/start">Sign in with SSO</a>.</p>`
    : html`<h1>Confirm single sign-on</h1>
<p>From now on your identity provider signs you in to this Shrinkray account.</p>
<form method="post" action="/sso/link/confirm" class="card"><input type="hidden" name="_csrf" value="${state.csrf}"><input type="hidden" name="token" value="${state.token}">
<button type="submit">Confirm and sign in</button></form>`;
  return renderPage({ title: 'Confirm single sign-on', csrf: state.csrf, account: null, narrow: true, body });
}
