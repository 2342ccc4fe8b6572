// The words of each mail the service sends. Each carries at most one secret, the link it exists for;
// every other link is a public page. Links are absolute on the configured public URL (mailConfig), never
// on a request's Host, so a forged Host cannot make a mail point elsewhere.
import { SERVICE_NAME } from './config.ts';
import type { Mail } from './message.ts';

/**
 * Text made safe inside HTML elements and quoted attributes. Mail is a service below the web views
 * (src/web/html.ts escapes their pages), so it escapes its few values itself.
 */
const escapeText = (text: string): string => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The same words as plain text and as simple HTML: paragraphs, one button-like link, a signature. */
function compose(to: string, subject: string, paragraphs: string[], action?: { label: string; url: string }): Mail {
  const text = [...paragraphs, ...(action ? [`${action.label}: ${action.url}`] : []), `-- ${SERVICE_NAME}`].join(
    '\n\n',
  );
  const button = action
    ? `<p><a href="${escapeText(action.url)}" style="display:inline-block;padding:.5em 1em;background:#2450a6;color:#fff;text-decoration:none;border-radius:4px">${escapeText(action.label)}</a></p>` +
      `<p style="font-size:.9em;color:#555">Or paste this address into your browser: ${escapeText(action.url)}</p>`
    : '';
  const body = [
    '<!doctype html><html><body style="font-family:sans-serif;line-height:1.5;max-width:36em">',
    ...paragraphs.map((p) => `<p>${escapeText(p)}</p>`),
    button,
    `<p style="color:#555">${escapeText(SERVICE_NAME)}</p>`,
    '</body></html>',
  ].join('\n');
  return { to, subject, text: `${text}\n`, html: body };
}

export const verificationMail = (to: string, link: string, hours: number): Mail =>
  compose(
    to,
    `Confirm your email address for ${SERVICE_NAME}`,
    [
      `Someone, probably you, created a ${SERVICE_NAME} account with this email address.`,
      `Confirm the address to finish: the link signs you in, works once, and expires in ${hours} hours.`,
      'If you did not sign up, ignore this mail: without the confirmation nobody can use the account.',
    ],
    { label: 'Confirm my email address', url: link },
  );

export const resetMail = (to: string, link: string, minutes: number): Mail =>
  compose(
    to,
    `Reset your ${SERVICE_NAME} password`,
    [
      `Someone, probably you, asked to reset the password of the ${SERVICE_NAME} account of this email address.`,
      `The link lets you choose a new one; it works once and expires in ${minutes} minutes. Setting a new password signs you out everywhere.`,
      'If you did not ask, ignore this mail: your password stays as it is.',
    ],
    { label: 'Choose a new password', url: link },
  );

/** To the owner of a registered address when someone signs up with it: public links only. */
export const signUpAttemptMail = (to: string, publicUrl: string): Mail =>
  compose(to, `Someone tried to sign up for ${SERVICE_NAME} with your address`, [
    `Someone tried to create a ${SERVICE_NAME} account with this email address, which already has one. Nothing was changed.`,
    `If it was you, sign in at ${publicUrl}/signin, or reset your password at ${publicUrl}/forgot-password if you have forgotten it.`,
    'If it was not you, ignore this mail.',
  ]);

export const invitationMail = (to: string, link: string, account: string, role: string, days: number): Mail =>
  compose(
    to,
    `You are invited to ${account} on ${SERVICE_NAME}`,
    [
      `You are invited to join the ${SERVICE_NAME} account "${account}" as ${role === 'admin' ? 'an' : 'a'} ${role}.`,
      `The link works once and expires in ${days} days.`,
      'If you do not know this account, ignore this mail.',
    ],
    { label: 'Accept the invitation', url: link },
  );

/** To a member whose address an SSO sign-in wants to link to an identity at the account's issuer. */
export const ssoLinkMail = (to: string, link: string, issuer: string, minutes: number): Mail =>
  compose(
    to,
    `Confirm single sign-on for your ${SERVICE_NAME} account`,
    [
      `Someone signed in with single sign-on (${issuer}) as this address and asked to use it for your ${SERVICE_NAME} account from now on.`,
      `If it was you, open the link in the same browser: it works once and expires in ${minutes} minutes.`,
      "If it was not you, ignore this mail and tell your account's owner: without the link nothing changes.",
    ],
    { label: 'Confirm single sign-on', url: link },
  );
