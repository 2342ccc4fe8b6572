// Single sign-on as a team member lives it, in headless Chromium against `npm run dev` and a real OpenID
// provider (oidc-provider, test/fixtures/oidc.ts) on loopback, both the run's shared ones: the operator makes an enterprise account,
// its admin key configures SSO for a domain and proves it (the TXT record published at the resolver fixture,
// then looked up), and a person of that domain signs in from the sign-in page
// through the provider's login form, arriving in the console signed in, made a developer just in time.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishTxt } from '../fixtures/doh-client.ts';
import { TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../fixtures/oidc-client.ts';
import { skipWithoutChromium } from './lib/chromium.ts';
import { screenshot } from './lib/screenshots.ts';
import { type DevService, sharedBrowser, sharedService } from './lib/service.ts';

describe.skipIf(skipWithoutChromium())('single sign-on in the browser', () => {
  let service: DevService;
  let browser: Browser;
  const domain = `corp-${randomBytes(4).toString('hex')}.example`;
  const email = `ada@${domain}`;
  const serverErrors: string[] = [];

  // The shared service may fetch from the provider's loopback origin despite the URL rules, and the provider
  // accepts the service's /sso/callback (test/fixtures/dev-service-setup.ts).
  beforeAll(async () => {
    service = await sharedService();
    browser = await sharedBrowser(service);
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('a member signs in through the provider and lands in the console, made just in time', async () => {
    const account = service.admin([
      'account',
      'create',
      '--email',
      `owner@${domain}`,
      '--name',
      'Corp',
      '--tools-tier',
      'enterprise',
    ]) as { id: string };
    const key = service.admin([
      'key',
      'create',
      '--account',
      account.id,
      '--scopes',
      'manage',
      '--name',
      'sso setup',
    ]) as { key: string };
    const put = await fetch(`${service.base}/api/v1/sso`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${key.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        issuer: service.oidcIssuer,
        client_id: TEST_CLIENT_ID,
        client_secret: TEST_CLIENT_SECRET,
        domains: [domain],
        require_sso: true,
      }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const [claim] = ((await put.json()) as { data: { domains: { txt_name: string; txt_value: string }[] } }).data
      .domains;
    await publishTxt(service.dnsResolver, claim!.txt_name, [claim!.txt_value]);

    const page: Page = await (await browser.newContext()).newPage();
    page.on('response', (r) => {
      if (r.status() >= 500) serverErrors.push(`${r.status()} ${r.url()}`);
    });
    // Proved with the admin key too (the console's "Check now" does the same: test/worker/sso-proof.test.ts).
    const verified = await fetch(`${service.base}/api/v1/sso/domains/${domain}/verify`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key.key}` },
    });
    expect(verified.status, await verified.clone().text()).toBe(200);
    expect(((await verified.json()) as { data: { verified: boolean } }).data.verified).toBe(true);
    await page.goto(`${service.base}/signin`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.getByLabel('Work email').fill(email);
    await page.getByRole('button', { name: 'Continue' }).click();
    // The provider's own login form, on its own origin.
    await page.waitForURL((url) => url.origin === service.oidcIssuer);
    await screenshot(page, 'sso-01-provider-login');
    await page.locator('input[name="login"]').fill(email);
    await page.locator('input[name="password"]').fill('anything');
    await page.locator('button[type="submit"]').first().click();
    // Back at the console, signed in.
    await page.waitForURL((url) => url.origin === service.base && url.pathname === '/');
    await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'visible' });
    await page.goto(`${service.base}/members`);
    const row = (await page.locator('tr', { hasText: email }).textContent()) ?? '';
    expect(row).toContain('developer');
    expect(row).toContain('sso');
    await screenshot(page, 'sso-02-members');
    expect(serverErrors).toEqual([]);
  });
});
