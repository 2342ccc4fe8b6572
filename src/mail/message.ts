// One mail as the relay receives it (RFC 5322 and MIME): a plain-text part and an HTML part of the same
// words, in base64 so no line is too long and no byte is 8-bit, and a subject that is ASCII or an encoded word.
import { SERVICE_NAME } from './config.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** UTF-8 text as base64 (MIME parts, encoded words, AUTH). */
export const toBase64 = (text: string): string => {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
};

/** Base64 in lines of 76 characters, as MIME wants. */
const wrapped = (text: string): string => toBase64(text).replace(/.{76}/g, '$&\r\n');

/** A header value: as it is when it is printable ASCII, else an RFC 2047 encoded word. Never a line break. */
function headerText(value: string): string {
  const flat = value.replace(/[\r\n]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(flat) ? flat : `=?UTF-8?B?${toBase64(flat)}?=`;
}

const randomHex = (bytes: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');

export function mimeMessage(mail: Mail, from: string, now: Date): string {
  const boundary = `sr-${randomHex(12)}`;
  const domain = from.slice(from.lastIndexOf('@') + 1);
  return [
    `From: ${SERVICE_NAME} <${from}>`,
    `To: <${mail.to}>`,
    `Subject: ${headerText(mail.subject)}`,
    `Date: ${now.toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${randomHex(16)}@${domain}>`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    wrapped(mail.text),
    `--${boundary}`,
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    wrapped(mail.html),
    `--${boundary}--`,
    '',
  ].join('\r\n');
}
