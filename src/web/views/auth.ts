// Sign-in and sign-up pages. Errors are announced (role="alert") and tied to their fields.
import { EMAIL_MAX_LENGTH, NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../auth/limits.ts';
import { html, type Html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { resendForm } from './account-mail.ts';

export type FieldErrors = Partial<Record<'name' | 'email' | 'password', string>>;

interface FormState {
  csrf: string;
  /** A message about the whole form. */
  error?: string;
  fields?: FieldErrors;
  values?: { name?: string; email?: string };
  next?: string;
  notice?: string;
  /** Offer to mail the confirmation link again to values.email (every unmatched sign-in: it may be a sign-up's). */
  resend?: boolean;
}

function input(
  id: 'name' | 'email' | 'password',
  label: string,
  type: string,
  state: FormState,
  extra: Html,
  hint?: string,
): Html {
  const error = state.fields?.[id];
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const value = id === 'password' ? '' : (state.values?.[id] ?? '');
  return html`<label for="${id}">${label}</label>
<input id="${id}" name="${id}" type="${type}" value="${value}" required ${extra}${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''}>
${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}${error ? html`<p class="field-error" id="${id}-error">${error}</p>` : ''}`;
}

const alert = (state: FormState): Html =>
  html`${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}`;

export function signInPage(state: FormState): string {
  const body = html`<h1>Sign in</h1>
${alert(state)}
${state.resend && state.values?.email ? resendForm(state.csrf, state.values.email) : ''}
<form method="post" action="/signin" class="card" novalidate>
<input type="hidden" name="_csrf" value="${state.csrf}">
${state.next ? html`<input type="hidden" name="next" value="${state.next}">` : ''}
${input('email', 'Email', 'email', state, html`autocomplete="username" maxlength="${EMAIL_MAX_LENGTH}" autofocus`)}
${input('password', 'Password', 'password', state, html`autocomplete="current-password" maxlength="${PASSWORD_MAX_LENGTH}"`)}
<button type="submit">Sign in</button>
</form>
<p><a href="/forgot-password">Forgot password?</a></p>
<p>Your organisation uses single sign-on? <a href="/sso/start">Sign in with SSO</a></p>
<p>New here? <a href="/signup">Create an account</a>: free tier keys for both APIs in a minute.</p>`;
  return renderPage({ title: 'Sign in', csrf: state.csrf, account: null, section: 'signin', narrow: true, body });
}

export function signUpPage(state: FormState): string {
  const body = html`<h1>Create your account</h1>
${alert(state)}
<form method="post" action="/signup" class="card" novalidate>
<input type="hidden" name="_csrf" value="${state.csrf}">
${input('name', 'Name', 'text', state, html`autocomplete="name" maxlength="${NAME_MAX_LENGTH}" autofocus`, "Your name or your team's.")}
${input('email', 'Email', 'email', state, html`autocomplete="email" maxlength="${EMAIL_MAX_LENGTH}"`)}
${input('password', 'Password', 'password', state, html`autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}"`, `At least ${PASSWORD_MIN_LENGTH} characters. A passphrase of a few words works well.`)}
<button type="submit">Create account</button>
</form>
<p>Already have an account? <a href="/signin">Sign in</a>.</p>`;
  return renderPage({
    title: 'Create your account',
    csrf: state.csrf,
    account: null,
    section: 'signup',
    narrow: true,
    body,
  });
}
