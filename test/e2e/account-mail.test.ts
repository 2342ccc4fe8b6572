// Accounts a person can keep, in headless Chromium against `npm run dev` and the maildev it starts (the
// run's shared one, test/e2e/lib/service.ts): sign up
// and be signed in only by the mailed link, make a key; ask for a password reset for a known and an unknown
// email and read the same page; set a new password from the mailed link, sign in with it and not with the
// old one; and find the used link dead (410).
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { skipWithoutChromium } from './lib/chromium.ts';
import { confirmByMail, mailedLink } from './lib/mail.ts';
import { screenshot } from './lib/screenshots.ts';
import { type DevService, sharedBrowser, sharedService } from './lib/service.ts';
import { flowPage, orderedSteps } from './lib/steps.ts';

describe.skipIf(skipWithoutChromium())('account mail in the browser', () => {
  let service: DevService;
  let browser: Browser;
  let page: Page | undefined;
  const step = orderedSteps(() => page);
  const serverErrors: string[] = [];
  const email = `keep-${randomBytes(6).toString('hex')}@example.com`;
  const unknown = `nobody-${randomBytes(6).toString('hex')}@example.com`;
  const oldPassword = `Old-${randomBytes(12).toString('base64url')}`;
  const newPassword = `New-${randomBytes(12).toString('base64url')}`;
  let resetLink = '';

  const { p, url, heading } = flowPage(
    () => page,
    () => service.base,
  );

  async function signIn(password: string): Promise<void> {
    await p().goto(url('/signin'));
    await p().getByLabel('Email').fill(email);
    await p().getByLabel('Password').fill(password);
    await p().getByRole('button', { name: 'Sign in' }).click();
  }

  async function signOut(): Promise<void> {
    await p().getByRole('navigation').getByRole('button', { name: 'Sign out' }).click();
    await p().waitForURL(url('/'));
  }

  /** What /forgot-password answers for `address`, with the address itself taken out. */
  async function forgot(address: string): Promise<string> {
    await p().goto(url('/signin'));
    await p().getByRole('link', { name: 'Forgot password?' }).click();
    await heading('Forgot your password?').waitFor();
    await p().getByLabel('Email').fill(address);
    await p().getByRole('button', { name: 'Mail me a link' }).click();
    await heading('Check your email').waitFor();
    return ((await p().locator('main').textContent()) ?? '').replaceAll(address, 'ADDRESS');
  }

  beforeAll(async () => {
    service = await sharedService();
    browser = await sharedBrowser(service);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(20_000);
    page = await context.newPage();
    page.on('response', (res) => {
      if (res.status() >= 500) serverErrors.push(`${res.status()} ${res.request().method()} ${res.url()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  step('sign-up says "check your email" and signs nobody in', async () => {
    await p().goto(url('/signup'));
    await p().getByLabel('Name').fill('Keeper');
    await p().getByLabel('Email').fill(email);
    await p().getByLabel('Password').fill(oldPassword);
    await p().getByRole('button', { name: 'Create account' }).click();
    await heading('Check your email').waitFor();
    await screenshot(p(), 'mail-01-check-email');
    await p().goto(url('/keys'));
    await heading('Sign in').waitFor();
  });

  step("the mail's link confirms the address and signs in; a key can be made", async () => {
    await confirmByMail(p(), service.mail, email, oldPassword);
    await p().getByLabel('Key name').fill('kept');
    await p().getByRole('button', { name: 'Create key' }).click();
    expect(await p().getByTestId('new-key').inputValue()).toMatch(/^sr_live_[0-9A-Za-z]{32}$/);
    await signOut();
  });

  step('"Forgot password?" answers the same page for a known and an unknown email', async () => {
    const known = await forgot(email);
    await screenshot(p(), 'mail-02-reset-sent');
    expect(await forgot(unknown)).toBe(known);
    // The confirmation first, then the reset link; the unknown address got nothing.
    resetLink = await mailedLink(service.mail, email, '/reset-password', 2);
    const res = await fetch(`${service.mail}/api/email?to.address=${encodeURIComponent(unknown)}`);
    expect(await res.json()).toEqual([]);
  });

  step('the mailed link sets a new password: it signs in, the old one does not', async () => {
    await p().goto(resetLink);
    await heading('Choose a new password').waitFor();
    await p().getByLabel('New password').fill(newPassword);
    await p().getByRole('button', { name: 'Set the new password' }).click();
    await heading('Sign in').waitFor();
    await p().getByText('Your password is changed').waitFor();
    await signIn(newPassword);
    await heading('Usage').waitFor();
    await signOut();
    await signIn(oldPassword);
    await p().getByRole('alert').waitFor();
    await heading('Sign in').waitFor();
  });

  step('the used link is dead: 410, with a way to a new one', async () => {
    const res = await p().goto(resetLink);
    expect(res?.status()).toBe(410);
    await heading('This link no longer works').waitFor();
    await p().getByRole('link', { name: 'Ask for a new link' }).waitFor();
    await screenshot(p(), 'mail-03-link-gone');
    expect(serverErrors).toEqual([]);
  });
});
