// Single sign-on pages: "Sign in with SSO" (the email decides the issuer) and the console's settings.
import type { SsoView } from '../../sso/config.ts';
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
    domains: state.sso?.domains.join(', '),
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
${state.sso ? html`<form method="post" action="/sso/delete"><input type="hidden" name="_csrf" value="${state.csrf}"><button type="submit" class="secondary">Remove single sign-on</button></form>` : ''}`;
  return renderPage({ title: 'Single sign-on', csrf: state.csrf, account: state.account, body });
}
