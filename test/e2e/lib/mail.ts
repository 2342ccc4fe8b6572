// The mail `npm run dev` sent, read from its maildev's REST API (`service.mail`), as a person reads their
// inbox: the newest mail to an address, and the one link in it.
import { expect } from 'vitest';
import type { Page } from 'playwright-core';

interface Received {
  subject: string;
  text: string;
}

/** Waits (15 s at most) until `to` has `count` mails, and returns them oldest first. */
export async function mailsTo(mail: string, to: string, count = 1): Promise<Received[]> {
  let mails: Received[] = [];
  await expect
    .poll(
      async () => {
        const res = await fetch(`${mail}/api/email?to.address=${encodeURIComponent(to)}`);
        mails = (await res.json()) as Received[];
        return mails.length;
      },
      { timeout: 15_000, interval: 200 },
    )
    .toBeGreaterThanOrEqual(count);
  return mails;
}

/** The link to `path` (`/verify-email`, `/reset-password`) in the newest of `count` mails to `to`. */
export async function mailedLink(mail: string, to: string, path: string, count = 1): Promise<string> {
  const mails = await mailsTo(mail, to, count);
  const text = mails[mails.length - 1]?.text ?? '';
  const link = new RegExp(`https?://[^\\s/]+${path}\\?token=[\\w-]{43}`).exec(text)?.[0];
  expect(link, `a ${path} link in: ${text}`).toBeDefined();
  return link as string;
}

/** Opens the newest confirmation mail's link and confirms: the person is signed in on "Create your first key". */
export async function confirmByMail(page: Page, mail: string, to: string, password: string): Promise<void> {
  await page.goto(await mailedLink(mail, to, '/verify-email'));
  // A sign-up's link asks for the password chosen at sign-up.
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Confirm and sign in' }).click();
  await page.getByRole('heading', { level: 2, name: 'Create your first key' }).waitFor();
}
