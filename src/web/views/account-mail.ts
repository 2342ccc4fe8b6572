// The pages around account mail: "check your email", the confirmation link's page, "forgot password", the
// reset link's page, and the page of a link that was used or has expired (410).
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../auth/limits.ts';
import { html, type Html } from '../html.ts';
import { renderPage } from '../layout.ts';

const page = (title: string, csrf: string, body: Html): string =>
  renderPage({ title, csrf, account: null, narrow: true, body });

/** The one button that asks for a confirmation link again, for the email given. */
export const resendForm = (csrf: string, email: string, label = 'Send the link again'): Html =>
  html`<form method="post" action="/verify-email/resend" class="inline">
<input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="email" value="${email}">
<button type="submit" class="secondary">${label}</button></form>`;

/**
 * What became of a confirmation mail: sent to the relay, failed there (try again), or this server has no
 * mail at all (the same for every address, so saying it tells nothing about which have accounts).
 */
export type ConfirmationMail = 'sent' | 'failed' | 'off';

/** After sign-up and after "send again": the same words whether or not the email already had an account. */
export function checkEmailPage(state: {
  csrf: string;
  email: string;
  mail: ConfirmationMail;
  hours: number;
  error?: string;
}): string {
  if (state.mail === 'off') {
    const body = html`<h1>This server cannot send mail</h1>
<div class="alert" role="alert">No link was sent to <strong>${state.email}</strong>: mail is not set up on this server, so the address cannot be confirmed yet.</div>
<p>If you run this server, set <code>PUBLIC_URL</code> and the <code>SMTP_HOST</code>, <code>SMTP_PORT</code>, <code>SMTP_USERNAME</code>, <code>SMTP_PASSWORD</code> and <code>MAIL_FROM</code> variables (see the self-hosting guide, <code>docs/self-hosting.md</code>), then sign up again. Otherwise, ask whoever runs it.</p>
<p><a href="/signin">Back to sign in</a></p>`;
    return page('This server cannot send mail', state.csrf, body);
  }
  const failed =
    state.mail === 'failed'
      ? 'We could not send the mail just now. Please use "Send the link again" in a minute.'
      : undefined;
  const error = state.error ?? failed;
  const status =
    state.mail === 'sent'
      ? html`We sent a link to <strong>${state.email}</strong>. Open it to confirm your address and sign in; it works for ${state.hours} hours.`
      : html`The link for <strong>${state.email}</strong> is not on its way yet. Once it arrives, open it to confirm your address and sign in; it works for ${state.hours} hours.`;
  const body = html`<h1>Check your email</h1>
${error ? html`<div class="alert" role="alert">${error}</div>` : ''}
<p role="status">${status}</p>
<p>No mail after a few minutes? Look in your spam folder, or:</p>
${resendForm(state.csrf, state.email)}
<p><a href="/signin">Back to sign in</a></p>`;
  return page('Check your email', state.csrf, body);
}

/**
 * The confirmation link's page: a button, so a mail scanner that opens links uses nothing up; a sign-up's
 * link also asks for the password chosen at sign-up (a stranger may have signed up with this address).
 */
export function confirmEmailPage(state: { csrf: string; token: string; askPassword: boolean; error?: string }): string {
  const described = state.error ? html` aria-describedby="confirm-error" aria-invalid="true"` : '';
  const body = html`<h1>Confirm your email address</h1>
${state.error ? html`<div class="alert" role="alert" id="confirm-error">${state.error}</div>` : ''}
<form method="post" action="/verify-email" class="card">
<input type="hidden" name="_csrf" value="${state.csrf}"><input type="hidden" name="token" value="${state.token}">
${
  state.askPassword
    ? html`<p>Enter the password you chose when you signed up: it confirms the address, makes your account and signs you in.</p>
<label for="confirm-password">Password</label>
<input id="confirm-password" name="password" type="password" autocomplete="current-password" required maxlength="${PASSWORD_MAX_LENGTH}"${described}>`
    : html`<p>One click confirms the address and signs you in.</p>`
}
<button type="submit">Confirm and sign in</button>
</form>`;
  return page('Confirm your email address', state.csrf, body);
}

interface EmailFormState {
  csrf: string;
  error?: string;
  fieldError?: string;
  email?: string;
}

export function forgotPasswordPage(state: EmailFormState): string {
  const described = state.fieldError ? html` aria-describedby="email-error" aria-invalid="true"` : '';
  const body = html`<h1>Forgot your password?</h1>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
<form method="post" action="/forgot-password" class="card" novalidate>
<input type="hidden" name="_csrf" value="${state.csrf}">
<p>Enter the email address of your account: we will mail you a link to choose a new password.</p>
<label for="email">Email</label>
<input id="email" name="email" type="email" value="${state.email ?? ''}" required autocomplete="username" maxlength="${EMAIL_MAX_LENGTH}" autofocus${described}>
${state.fieldError ? html`<p class="field-error" id="email-error">${state.fieldError}</p>` : ''}
<button type="submit">Mail me a link</button>
</form>
<p><a href="/signin">Back to sign in</a></p>`;
  return page('Forgot your password?', state.csrf, body);
}

/** After "forgot password": the same words, known email or not. */
export function resetSentPage(state: { csrf: string; email: string; minutes: number }): string {
  const body = html`<h1>Check your email</h1>
<p role="status">If <strong>${state.email}</strong> is the address of an account, we have mailed it a link to choose a new password. The link works for ${state.minutes} minutes, once.</p>
<p>No mail after a few minutes? Look in your spam folder, or <a href="/forgot-password">ask again</a>.</p>
<p><a href="/signin">Back to sign in</a></p>`;
  return page('Check your email', state.csrf, body);
}

export function resetPasswordPage(state: { csrf: string; token: string; error?: string; fieldError?: string }): string {
  const described = state.fieldError
    ? html` aria-describedby="password-hint password-error" aria-invalid="true"`
    : html` aria-describedby="password-hint"`;
  const body = html`<h1>Choose a new password</h1>
${state.error ? html`<div class="alert" role="alert">${state.error}</div>` : ''}
<form method="post" action="/reset-password" class="card" novalidate>
<input type="hidden" name="_csrf" value="${state.csrf}"><input type="hidden" name="token" value="${state.token}">
<label for="password">New password</label>
<input id="password" name="password" type="password" required autocomplete="new-password" minlength="${PASSWORD_MIN_LENGTH}" maxlength="${PASSWORD_MAX_LENGTH}" autofocus${described}>
<p class="hint" id="password-hint">At least ${PASSWORD_MIN_LENGTH} characters. Setting it signs you out everywhere.</p>
${state.fieldError ? html`<p class="field-error" id="password-error">${state.fieldError}</p>` : ''}
<button type="submit">Set the new password</button>
</form>`;
  return page('Choose a new password', state.csrf, body);
}

/** A used or expired link (410): what to do next, with a way to a new link. */
export function linkGonePage(state: { csrf: string; purpose: 'verify' | 'reset' }): string {
  const body =
    state.purpose === 'reset'
      ? html`<h1>This link no longer works</h1>
<p role="alert">The password reset link was used already or has expired.</p>
<p><a href="/forgot-password">Ask for a new link</a></p>`
      : html`<h1>This link no longer works</h1>
<p role="alert">The confirmation link was used already or has expired. If you confirmed your address, <a href="/signin">sign in</a>. Otherwise, ask for a new link:</p>
<form method="post" action="/verify-email/resend" class="card" novalidate>
<input type="hidden" name="_csrf" value="${state.csrf}">
<label for="email">Email</label>
<input id="email" name="email" type="email" required autocomplete="username" maxlength="${EMAIL_MAX_LENGTH}">
<button type="submit">Send a new link</button>
</form>`;
  return page('This link no longer works', state.csrf, body);
}
