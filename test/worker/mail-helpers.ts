// The mail a person received, read from maildev's REST API (test/fixtures/maildev-setup.ts), as a test
// reads its inbox: by recipient, waiting a moment for a mail sent after the response.
import { inject } from 'vitest';

export const MAIL_API = inject('mailApi');

export interface ReceivedMail {
  id: string;
  subject: string;
  text: string;
  html: string;
  from: { address: string; name: string }[];
  to: { address: string }[];
  headers: Record<string, string>;
}

/** Every mail to `address`, oldest first. */
export async function inbox(address: string): Promise<ReceivedMail[]> {
  const res = await fetch(`${MAIL_API}/email?to.address=${encodeURIComponent(address)}`);
  if (!res.ok) throw new Error(`maildev answered ${res.status}`);
  return (await res.json()) as ReceivedMail[];
}

/** Waits until `address` has `count` mails (a second at most) and returns them. */
export async function mailsTo(address: string, count = 1): Promise<ReceivedMail[]> {
  const deadline = Date.now() + 1000;
  for (;;) {
    const mails = await inbox(address);
    if (mails.length >= count || Date.now() > deadline) return mails;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The one link of a mail's text that starts with `path` on the tests' origin. */
export function linkIn(mail: ReceivedMail, path: string): string {
  const match = new RegExp(`https://api\\.shrinkray\\.test${path.replace(/[?]/g, '\\?')}[^\\s]*`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in: ${mail.text}`);
  return match[0];
}
