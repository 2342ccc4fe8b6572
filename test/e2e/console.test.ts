// The web console as an account holder uses it, in headless Chromium against `npm run dev` (the run's
// shared one, lib/service.ts): sign up, create a key, call both APIs with it, watch the usage move,
// compress in the browser, revoke, sign out. A new visitor's first path is first-visit-*.test.ts.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { skipWithoutChromium } from './lib/chromium.ts';
import { gradientJpeg, gradientPng } from './lib/images.ts';
import { confirmByMail } from './lib/mail.ts';
import { screenshot } from './lib/screenshots.ts';
import { type DevService, sharedBrowser, sharedService } from './lib/service.ts';
import { compressFromNode, flowPage, orderedSteps } from './lib/steps.ts';

const KEY_PATTERN = /^sr_live_[0-9A-Za-z]{32}$/;
const KEY_NAME = 'e2e build server';
const LANDING = 'Smaller images and handy web tools, over one API key';
/** A phone's window (an iPhone 12 to 15's, in CSS pixels). */
const PHONE = { width: 390, height: 844 };
/** Tabs that load pages side by side where each page is checked alone (`next` links). */
const TABS = 4;

interface Totals {
  requests: number;
  compressions: number;
}

/** "1,234" (or with another grouping separator) as 1234; anything else fails the test. */
function count(text: string | null): number {
  const digits = (text ?? '').trim().replace(/[,.\s\u00a0\u202f]/g, '');
  expect(digits, `a plain integer, got ${JSON.stringify(text)}`).toMatch(/^\d+$/);
  return Number(digits);
}

describe.skipIf(skipWithoutChromium())('web console', () => {
  let service: DevService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page | undefined;
  const step = orderedSteps(() => page);
  // Checked at the end: an uncaught script error or a 5xx anywhere in the flow fails it, even on a
  // page that otherwise looked right.
  const scriptErrors: string[] = [];
  const serverErrors: string[] = [];

  const email = `e2e-${randomBytes(6).toString('hex')}@example.com`;
  const password = `Pw-${randomBytes(12).toString('base64url')}`;
  let apiKey = '';
  let jpeg: Buffer;
  let png: Buffer;

  const { p, url, heading } = flowPage(
    () => page,
    () => service.base,
  );

  /** Collects `tab`'s script errors and 5xx answers, which the last step checks. */
  function watch(tab: Page): void {
    tab.on('pageerror', (error) => scriptErrors.push(`${tab.url()}: ${error.message}`));
    tab.on('response', (res) => {
      if (res.status() >= 500) serverErrors.push(`${res.status()} ${res.request().method()} ${res.url()}`);
    });
  }

  /**
   * `check` on every item, in TABS tabs of the page's session and window size at once (the page itself and
   * new ones, watched like it): each item is still checked alone in a tab, and the loads overlap.
   */
  async function inTabs<T>(items: readonly T[], check: (tab: Page, item: T) => Promise<void>): Promise<void> {
    const tabs = [p()];
    try {
      for (let i = 1; i < TABS; i++) {
        const tab = await context.newPage();
        watch(tab);
        const size = p().viewportSize();
        if (size) await tab.setViewportSize(size);
        tabs.push(tab);
      }
      const queue = [...items];
      await Promise.all(
        tabs.map(async (tab) => {
          for (let item = queue.shift(); item !== undefined; item = queue.shift()) await check(tab, item);
        }),
      );
    } finally {
      for (const tab of tabs.slice(1)) await tab.close();
    }
  }

  /** Loads a page, failing at once (not at the next locator's timeout) when it is not there. */
  async function visit(path: string, tab: Page = p()): Promise<void> {
    const res = await tab.goto(url(path));
    expect(res?.status(), `GET ${path} (ended at ${tab.url()})`).toBe(200);
  }

  async function usageTotals(): Promise<Totals> {
    await visit('/');
    await heading('Usage').waitFor();
    return {
      requests: count(await p().getByTestId('total-requests').textContent()),
      compressions: count(await p().getByTestId('total-compressions').textContent()),
    };
  }

  /** Reloads the usage page until `done` holds: metering may land a moment after the response. */
  async function usageUntil(done: (t: Totals) => boolean): Promise<Totals> {
    let last: Totals = { requests: -1, compressions: -1 };
    await expect.poll(async () => done((last = await usageTotals())), { timeout: 15_000, interval: 500 }).toBe(true);
    return last;
  }

  async function signIn(withPassword: string): Promise<void> {
    await visit('/signin');
    await heading('Sign in').waitFor();
    await p().getByLabel('Email').fill(email);
    await p().getByLabel('Password').fill(withPassword);
    await p().getByRole('button', { name: 'Sign in' }).click();
  }

  /** A signed-out visit to `/keys` is redirected to a sign-in page (which may carry the way back). */
  async function expectKeysNeedSignIn(): Promise<void> {
    const res = await p().goto(url('/keys'));
    expect(res?.request().redirectedFrom(), 'a redirect from /keys').not.toBeNull();
    await heading('Sign in').waitFor();
    await p().getByLabel('Password').waitFor();
  }

  beforeAll(async () => {
    service = await sharedService();
    browser = await sharedBrowser(service);
    [jpeg, png] = await Promise.all([gradientJpeg(), gradientPng()]);
    context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(20_000);
    page = await context.newPage();
    watch(page);
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
  });

  step('signed out, / is the landing page; sign-in links to sign-up', async () => {
    await visit('/');
    await heading(LANDING).waitFor();
    const nav = p().getByRole('navigation');
    await nav.getByRole('link', { name: 'Sign in' }).waitFor();
    await nav.getByRole('link', { name: 'Create account' }).waitFor();
    await nav.getByRole('link', { name: 'Sign in' }).click();
    await heading('Sign in').waitFor();
    await screenshot(p(), '01-signin');
    await p().getByRole('link', { name: 'Create an account' }).click();
    await heading('Create your account').waitFor();
    expect(new URL(p().url()).pathname).toBe('/signup');
  });

  step('sign up, confirm by the mailed link: lands on the first key; the dashboard shows zero usage', async () => {
    await p().getByLabel('Name').fill('E2E Tester');
    await p().getByLabel('Email').fill(email);
    await p().getByLabel('Password').fill(password);
    await screenshot(p(), '02-signup');
    await p().getByRole('button', { name: 'Create account' }).click();
    await heading('Check your email').waitFor();
    await confirmByMail(p(), service.mail, email, password);
    expect(new URL(p().url()).pathname).toBe('/keys');
    const nav = p().getByRole('navigation');
    const links = [
      ['Usage', '/'],
      ['API keys', '/keys'],
      ['Webhooks', '/webhooks'],
      ['Try it', '/try'],
      ['API reference', '/docs'],
    ] as const;
    for (const [name, href] of links) {
      expect(await nav.getByRole('link', { name, exact: true }).getAttribute('href'), name).toBe(href);
    }
    await nav.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await usageTotals()).toEqual({ requests: 0, compressions: 0 });
    // No chart of nothing: a sentence says what will appear.
    await p().getByTestId('chart-empty').waitFor();
    await screenshot(p(), '03-dashboard');
  });

  step('create a key with both scopes; it is shown once', async () => {
    await p().getByRole('navigation').getByRole('link', { name: 'API keys' }).click();
    await heading('API keys').waitFor();
    await p().getByLabel('Key name').fill(KEY_NAME);
    await p().getByLabel('Image API').check();
    await p().getByLabel('Tools API').check();
    await p().getByRole('button', { name: 'Create key' }).click();
    const shown = p().getByTestId('new-key');
    await shown.waitFor();
    apiKey = await shown.inputValue();
    expect(apiKey).toMatch(KEY_PATTERN);
    await p().getByRole('button', { name: 'Copy', exact: true }).waitFor();
    const row = p().locator('tr[data-key-id]', { hasText: KEY_NAME });
    expect(await row.count()).toBe(1);
    await row.getByText('Active', { exact: true }).waitFor();
    await screenshot(p(), '04-key-created');
    // Shown once: a fresh load of the page lists the key but no longer reveals it.
    await visit('/keys');
    await heading('API keys').waitFor();
    expect(await p().getByTestId('new-key').count()).toBe(0);
    expect(await p().content()).not.toContain(apiKey);
  });

  step('the key works on both APIs, from Node', async () => {
    const compressed = await compressFromNode(service.base, apiKey, jpeg, 'image/jpeg', 'gradient.jpg');
    const body = new Uint8Array(await compressed.arrayBuffer());
    expect(compressed.status, new TextDecoder().decode(body.slice(0, 300))).toBe(200);
    expect(compressed.headers.get('content-type')).toMatch(/^image\/(jpeg|png|webp)/);
    expect(body.byteLength).toBeGreaterThan(0);

    const tools = await fetch(url('/api/v1/tools'), { headers: { 'x-api-key': apiKey } });
    expect(tools.status).toBe(200);
    expect(tools.headers.get('content-type')).toMatch(/^application\/json/);
    await tools.json();
  });

  step('the usage page counts the API calls', async () => {
    const after = await usageUntil((t) => t.requests >= 1 && t.compressions >= 1);
    // Exactly the two calls just made: one Tools API request, one compression.
    expect(after).toEqual({ requests: 1, compressions: 1 });
    await screenshot(p(), '05-usage-after-api');
  });

  step('try it: compress to a 320 px JPEG in the browser and download it', async () => {
    const before = await usageTotals();
    await p().getByRole('navigation').getByRole('link', { name: 'Try it' }).click();
    await heading('Try the compressor').waitFor();
    await p()
      .getByLabel('Image', { exact: true })
      .setInputFiles({ name: 'gradient.png', mimeType: 'image/png', buffer: png });
    await p().getByLabel('Format').selectOption('jpeg');
    await p().getByLabel('Quality').fill('60');
    // A width out of range is refused before anything is uploaded, with the reason.
    const uploads: string[] = [];
    const onRequest = (req: { url(): string }) => {
      if (new URL(req.url()).pathname === '/api/v1/console/compress') uploads.push(req.url());
    };
    p().on('request', onRequest);
    await p().getByLabel('Width', { exact: true }).fill('100000');
    await p().getByRole('button', { name: 'Compress' }).click();
    await expect
      .poll(async () => (await p().locator('#try-error').textContent()) ?? '')
      .toMatch(/^Not uploaded: .*width/i);
    expect(uploads).toEqual([]);
    p().off('request', onRequest);
    await p().getByLabel('Width', { exact: true }).fill('320');
    await p().getByRole('button', { name: 'Compress' }).click();

    const result = p().getByTestId('result');
    await result.waitFor({ timeout: 60_000 });
    const bytesOf = async (testId: string): Promise<number> =>
      Number(await p().getByTestId(testId).getAttribute('data-bytes'));
    expect(await bytesOf('original-size')).toBe(png.byteLength);
    const compressedBytes = await bytesOf('compressed-size');
    expect(compressedBytes).toBeGreaterThan(0);
    expect(await p().getByTestId('savings').textContent()).toMatch(/\d\s*%/);
    // Both pictures decoded, not just present as elements (a structural cast: the Node tsconfig has no DOM types).
    const images = result.locator('#try-compare img');
    expect(await images.count()).toBe(2);
    const painted = () =>
      images.evaluateAll((els) =>
        els.every((el) => {
          const img = el as unknown as { complete: boolean; naturalWidth: number };
          return img.complete && img.naturalWidth > 0;
        }),
      );
    await expect.poll(painted).toBe(true);
    await screenshot(p(), '06-try-result');

    const [download] = await Promise.all([
      p().waitForEvent('download'),
      p().getByRole('link', { name: 'Download' }).click(),
    ]);
    // The downloaded bytes, streamed from the shared browser (a connected one has no local path).
    // Named as the output is: the upload's stem with the format's extension.
    expect(download.suggestedFilename()).toBe('gradient.jpg');
    const file = Buffer.concat(await (await download.createReadStream()).toArray());
    expect([...file.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect(file.byteLength).toBe(compressedBytes);
    const meta = await sharp(file).metadata();
    expect([meta.format, meta.width]).toEqual(['jpeg', 320]);

    const after = await usageUntil((t) => t.compressions > before.compressions);
    expect(after.compressions).toBeGreaterThan(before.compressions);
    await screenshot(p(), '07-usage-after-try');
  });

  step('try it: fit=cover needs a height before uploading; the crop is drawn on the upright original', async () => {
    await visit('/try');
    await heading('Try the compressor').waitFor();
    // Stored 640×480 and turned a quarter by EXIF: upright (as the page shows it) 480×640.
    const turned = await sharp(jpeg).withMetadata({ orientation: 6 }).jpeg({ quality: 90 }).toBuffer();
    await p()
      .getByLabel('Image', { exact: true })
      .setInputFiles({ name: 'turned.jpg', mimeType: 'image/jpeg', buffer: turned });
    const uploads: string[] = [];
    const onRequest = (req: { url(): string }) => {
      if (new URL(req.url()).pathname === '/api/v1/console/compress') uploads.push(req.url());
    };
    p().on('request', onRequest);
    // Gravity places a crop: off until a fit that crops is chosen.
    expect(await p().getByLabel('Gravity', { exact: true }).isDisabled()).toBe(true);
    await p().getByLabel('Fit', { exact: true }).selectOption('cover');
    expect(await p().getByLabel('Gravity', { exact: true }).isDisabled()).toBe(false);
    await p().getByLabel('Width', { exact: true }).fill('100');
    await p().getByLabel('Height', { exact: true }).fill('');
    await p().getByRole('button', { name: 'Compress' }).click();
    await expect
      .poll(async () => (await p().locator('#try-error').textContent()) ?? '')
      .toMatch(/^Not uploaded: Fit=cover needs both width and height/);
    expect(uploads).toEqual([]);
    p().off('request', onRequest);

    await p().getByLabel('Height', { exact: true }).fill('100');
    await p().getByLabel('Gravity', { exact: true }).selectOption('top');
    const [answer] = await Promise.all([
      p().waitForResponse((res) => new URL(res.url()).pathname === '/api/v1/console/compress'),
      p().getByRole('button', { name: 'Compress' }).click(),
    ]);
    expect(answer.status()).toBe(200);
    // The top square of the upright picture, in its pixels (give or take a row: the picture is resized to
    // 100×133 whole rows, so the kept 100 map back to 481 of the 640).
    const [x, y, w, h] = (answer.headers()['x-crop-box'] ?? '').split(',').map(Number);
    expect([x, y, w]).toEqual([0, 0, 480]);
    expect(Math.abs((h ?? 0) - 480)).toBeLessThanOrEqual(1);
    await p().getByTestId('result').waitFor({ timeout: 60_000 });
    expect(await p().getByTestId('compressed-size').textContent()).toContain('100 × 100 px');
    const figure = p().locator('#try-crop');
    await figure.waitFor();
    expect(await figure.textContent()).toContain(`480 × ${h} px at 0, 0 (gravity top)`);
    const image = p().locator('#try-crop-before');
    await expect.poll(() => image.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(480);
    const [picture, box] = await Promise.all([image.boundingBox(), p().getByTestId('crop-box').boundingBox()]);
    if (!picture || !box) throw new Error('the original or its crop box is not shown');
    // Shown upright (taller than wide), the box over its whole width and its top three quarters.
    expect(picture.height / picture.width).toBeCloseTo(640 / 480, 1);
    expect(Math.abs(box.x - picture.x)).toBeLessThanOrEqual(2);
    expect(Math.abs(box.y - picture.y)).toBeLessThanOrEqual(2);
    expect(Math.abs(box.width - picture.width)).toBeLessThanOrEqual(2);
    expect(Math.abs(box.height - (picture.height * (h ?? 0)) / 640)).toBeLessThanOrEqual(2);
    await screenshot(p(), '06b-try-crop');
  });

  step('try it: a HEIC this browser cannot draw is named in place of the original, beside the result', async () => {
    await visit('/try');
    await heading('Try the compressor').waitFor();
    // 192×128, 10.5 KB (test/fixtures/heic/README.md); Chromium draws no HEIC, Safari would.
    const heic = readFileSync(new URL('../fixtures/heic/plain.heic', import.meta.url));
    await p()
      .getByLabel('Image', { exact: true })
      .setInputFiles({ name: 'plain.heic', mimeType: 'image/heic', buffer: heic });
    await expect.poll(async () => (await p().getByTestId('image-facts').textContent()) ?? '').toMatch(/cannot show/);
    await p().getByLabel('Format').selectOption('jpeg');
    await p().getByRole('button', { name: 'Compress' }).click();
    const result = p().getByTestId('result');
    await result.waitFor({ timeout: 60_000 });
    const note = p().getByTestId('original-unshown');
    await note.waitFor({ timeout: 5_000 });
    const text = (await note.textContent()) ?? '';
    expect(text).toContain('plain.heic');
    expect(text).toContain('10.3 KB');
    expect(text).toMatch(/cannot show HEIC/);
    // No broken picture: every picture shown in the result is drawn, the JPEG made from the HEIC among them.
    const shown = result.locator('img:visible');
    expect(await shown.count()).toBeGreaterThan(0);
    const widths = await shown.evaluateAll((els) =>
      els.map((el) => (el as unknown as { naturalWidth: number }).naturalWidth),
    );
    expect(widths).toEqual([192]);
    await screenshot(p(), '06c-try-heic');
  });

  step('revoke the key, after confirming; the API then refuses it', async () => {
    await visit('/keys');
    await heading('API keys').waitFor();
    const row = p().locator('tr[data-key-id]', { hasText: KEY_NAME });
    await row.getByRole('link', { name: `Revoke ${KEY_NAME}` }).click();
    await heading(/^Revoke/).waitFor();
    await screenshot(p(), '08-revoke-confirm');
    await p().getByRole('button', { name: 'Revoke key' }).click();
    await heading('API keys').waitFor();
    expect(new URL(p().url()).pathname).toBe('/keys');
    await row.getByText('Revoked', { exact: true }).waitFor();
    expect(await row.getByRole('link', { name: /^Revoke/ }).count()).toBe(0);
    await screenshot(p(), '09-key-revoked');

    const tools = await fetch(url('/api/v1/tools'), { headers: { 'x-api-key': apiKey } });
    expect(tools.status).toBe(401);
  });

  step('the API reference opens from the navigation', async () => {
    const docs = p().waitForResponse((res) => new URL(res.url()).pathname === '/docs');
    await p().getByRole('navigation').getByRole('link', { name: 'API reference' }).click();
    expect((await docs).status()).toBe(200);
    await p().waitForURL((u) => u.pathname === '/docs');
    expect(new URL(p().url()).pathname).toBe('/docs');
    await screenshot(p(), '10-docs', { fullPage: false });
  });

  step('sign out returns to the landing page and closes the session', async () => {
    await visit('/');
    await p().getByRole('navigation').getByRole('button', { name: 'Sign out' }).click();
    await heading(LANDING).waitFor();
    expect(new URL(p().url()).pathname).toBe('/');
    await screenshot(p(), '11-signed-out');
    await expectKeysNeedSignIn();
  });

  step('a wrong password gets a friendly error and no session', async () => {
    await signIn(`${password}-wrong`);
    const alert = p().getByRole('alert');
    await alert.waitFor();
    expect((await alert.textContent())?.trim()).not.toBe('');
    await heading('Sign in').waitFor();
    await screenshot(p(), '12-wrong-password');
    await expectKeysNeedSignIn();
  });

  step('signing up again with the same email reads like a new sign-up, and signs nobody in', async () => {
    await visit('/signup');
    await p().getByLabel('Name').fill('E2E Again');
    await p().getByLabel('Email').fill(email);
    await p().getByLabel('Password').fill(`${password}-2`);
    await p().getByRole('button', { name: 'Create account' }).click();
    await heading('Check your email').waitFor();
    await screenshot(p(), '13-signup-duplicate');
    await expectKeysNeedSignIn();
  });

  step('the right password signs in again', async () => {
    await signIn(password);
    await heading('Usage').waitFor();
  });

  step('at 1280 px every console page starts at the same left edge', async () => {
    const edges: Record<string, number> = {};
    for (const path of ['/', '/keys', '/audit', '/try', '/webhooks', '/members']) {
      await visit(path);
      edges[path] = Math.round((await p().locator('main h1').first().boundingBox())?.x ?? -1);
    }
    expect(new Set(Object.values(edges)).size, JSON.stringify(edges)).toBe(1);
  });

  step('on a phone-sized screen the pages fit the width', async () => {
    await p().setViewportSize({ width: PHONE.width, height: PHONE.height });
    for (const [path, name] of [
      ['/', '14-usage-phone'],
      ['/keys', '15-keys-phone'],
      ['/try', '16-try-phone'],
      ['/docs', '17-docs-phone'],
    ] as const) {
      await visit(path);
      const overflow = await p().evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, path).toBeLessThanOrEqual(0);
      // Nor is anything cut off inside a card: a stacked table's cell (the key's "Made by" email) wraps.
      const clipped = await p().evaluate<string[]>(
        `[...document.querySelectorAll('table.stack td, table.stack th')].filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => (c.dataset.label || c.tagName) + ': ' + c.textContent.trim().slice(0, 40))`,
      );
      expect(clipped, path).toEqual([]);
      await screenshot(p(), name, { fullPage: path !== '/docs' });
    }
  });

  step('on a phone every navigation link is reached through the Menu button, by pointer or keyboard', async () => {
    await visit('/');
    const nav = p().locator('#site-nav');
    const menu = p().getByRole('button', { name: 'Menu' });
    const targets = await nav
      .locator('a')
      .evaluateAll((els) => els.map((a) => [a.textContent ?? '', a.getAttribute('href') ?? ''] as const));
    expect(targets.map(([name]) => name)).toEqual([
      'Usage',
      'API keys',
      'Webhooks',
      'Image URLs',
      'Members',
      'Account',
      'Audit log',
      'Try it',
      'API reference',
    ]);
    const onScreen = async (locator: ReturnType<Page['locator']>) => {
      const box = await locator.boundingBox();
      return (
        !!box && box.x >= 0 && box.y >= 0 && box.x + box.width <= PHONE.width && box.y + box.height <= PHONE.height
      );
    };
    for (const [i, [name, href]] of targets.entries()) {
      // Folded on every page, behind a button that says whether it is open.
      expect(await nav.isVisible(), `${name}: folded`).toBe(false);
      expect(await onScreen(menu), 'Menu on screen').toBe(true);
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      if (i === 0) {
        // By keyboard: Enter opens, Tab reaches the first link, Escape folds and gives focus back.
        await menu.focus();
        await p().keyboard.press('Enter');
        expect(await menu.getAttribute('aria-expanded')).toBe('true');
        await p().keyboard.press('Tab');
        expect(await p().evaluate<string>('document.activeElement.textContent')).toBe(name);
        await p().keyboard.press('Escape');
        expect(await menu.getAttribute('aria-expanded')).toBe('false');
        expect(await p().evaluate<string>('document.activeElement.id')).toBe('menu-button');
      }
      await menu.click();
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      const link = p().getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
      expect(await onScreen(link), `${name} on screen`).toBe(true);
      expect(await onScreen(p().getByRole('button', { name: 'Sign out' })), 'Sign out on screen').toBe(true);
      await link.click();
      await p().waitForURL((u) => u.pathname === href);
      expect(await p().locator('main').count(), href).toBe(1);
      const overflow = await p().evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, href).toBeLessThanOrEqual(0);
    }
    await p().setViewportSize({ width: 1280, height: 900 });
  });

  /** Every top-level navigation `act` makes (redirects included), once at least `count` have started. */
  async function navigationsOf(count: number, act: () => Promise<unknown>, tab: Page = p()): Promise<string[]> {
    const navigations: string[] = [];
    const record = (request: Request): void => {
      if (request.isNavigationRequest()) navigations.push(request.url());
    };
    tab.on('request', record);
    try {
      await act();
      await expect.poll(() => navigations.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(count);
    } finally {
      tab.off('request', record);
    }
    return navigations;
  }

  step('a link to /signin?next=/%09/evil.example ends on this site, signed in or not', async () => {
    // Browsers drop a tab from a URL, so a Location of "/\t/evil.example" would be //evil.example to them.
    const origin = new URL(service.base).origin;
    const elsewhere = (urls: string[]): string[] => urls.filter((u) => new URL(u).origin !== origin);
    // Signed in, /signin redirects at once: the link itself must not leave the site.
    const followed = await navigationsOf(2, () =>
      p()
        .goto(url('/signin?next=/%09/evil.example'))
        .catch(() => null),
    );
    expect(elsewhere(followed)).toEqual([]);
    await heading('Usage').waitFor();
    expect(new URL(p().url()).origin).toBe(origin);

    // Signed out, the sign-in form's answer must not leave it either (the CSP's form-action is a second
    // guard in browsers that enforce it on redirects, as Chromium does).
    await p().getByRole('navigation').getByRole('button', { name: 'Sign out' }).click();
    await heading(LANDING).waitFor();
    await visit('/signin?next=/%09/evil.example');
    await p().getByLabel('Email').fill(email);
    await p().getByLabel('Password').fill(password);
    const posted = await navigationsOf(2, () => p().getByRole('button', { name: 'Sign in' }).click());
    expect(elsewhere(posted)).toEqual([]);
    await heading('Usage').waitFor();
    expect(new URL(p().url()).origin).toBe(origin);
    expect(new URL(p().url()).pathname).toBe('/');
  });

  step('a next with dot segments or backslashes ends on this site, signed in or not', async () => {
    // Each resolves to //evil.test (a host of its own) unless the service refuses it.
    const spellings = [
      '/.//evil.test',
      '/..//evil.test',
      '/%2e%2e//evil.test',
      '/a/../..//evil.test',
      '/%2e//evil.test',
      '/\\evil.test',
      '/\\\\evil.test',
      '/%5cevil.test',
      '/.\\/evil.test',
      '/.\\\\/evil.test',
      '/a/..\\..\\/evil.test',
      '/.\t//evil.test',
      '/\t/.//evil.test',
      '/.\n//evil.test',
      '/\r\n..//evil.test',
    ];
    const origin = new URL(service.base).origin;
    const elsewhere = (urls: string[]): string[] => urls.filter((u) => new URL(u).origin !== origin);
    // Signed in (as the step before left it), /signin redirects at once.
    await inTabs(spellings, async (tab, next) => {
      const followed = await navigationsOf(
        2,
        () => tab.goto(url(`/signin?next=${encodeURIComponent(next)}`)).catch(() => null),
        tab,
      );
      expect(elsewhere(followed), JSON.stringify(next)).toEqual([]);
      expect(new URL(tab.url()).origin, JSON.stringify(next)).toBe(origin);
    });
    // Signed out, through the form (which carries `next` on when it is accepted): one dotted and one
    // backslashed spelling. The form's answer takes the same rule as the redirect above, whose Location
    // Chromium followed for every spelling, and console-auth.test.ts posts every spelling to the form.
    for (const next of ['/..//evil.test', '/.\\/evil.test']) {
      await visit('/');
      await p().getByRole('navigation').getByRole('button', { name: 'Sign out' }).click();
      await heading(LANDING).waitFor();
      await visit(`/signin?next=${encodeURIComponent(next)}`);
      await p().getByLabel('Email').fill(email);
      await p().getByLabel('Password').fill(password);
      const posted = await navigationsOf(2, () => p().getByRole('button', { name: 'Sign in' }).click());
      expect(elsewhere(posted), JSON.stringify(next)).toEqual([]);
      await p().waitForLoadState();
      expect(new URL(p().url()).origin, JSON.stringify(next)).toBe(origin);
    }
  });

  step('no script errors and no 5xx responses along the way', async () => {
    expect(scriptErrors).toEqual([]);
    expect(serverErrors).toEqual([]);
  });
});
