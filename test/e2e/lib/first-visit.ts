// The new visitor's path, as steps at one window width: the landing page, sign-up, the first
// key and its curl lines, "Try it" with the shipped sample (and an image it warns about before any
// upload), the usage page, and the API reference. Every screen is audited (lib/audit.ts) and
// photographed into test/e2e/screenshots/ as first-visit-<width>-<nn>-<step>.png.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { audit, watchConsole } from './audit.ts';
import { confirmByMail } from './mail.ts';
import { screenshot } from './screenshots.ts';
import { orderedSteps } from './steps.ts';

const SAMPLE = new URL('../../../src/web/assets/sample.jpg', import.meta.url);
const PHONE_MAX_HEADER_PX = 100;

/** A PNG too big for one compression's memory at full size (decoded whole), yet a small file: flat colour. */
const bigPng = (): Promise<Buffer> =>
  sharp({ create: { width: 2400, height: 1600, channels: 3, background: '#3a6ea5' } })
    .png()
    .toBuffer();

export function firstVisit(width: number, env: () => { browser: Browser; base: string; mail: string }): void {
  describe(`a new visitor's first ten minutes at ${width} px`, () => {
    const phone = width < 600;
    let context: BrowserContext;
    let page: Page | undefined;
    const problems: string[] = [];
    const step = orderedSteps(() => page);
    const email = `first-${width}-${randomBytes(5).toString('hex')}@example.com`;
    let apiKey = '';
    let shot = 0;

    const p = (): Page => {
      if (!page) throw new Error('no page: the setup failed');
      return page;
    };
    const url = (path: string): string => `${env().base}${path}`;

    /** The checks of every screen, then its picture. */
    async function check(name: string, fullPage = true): Promise<void> {
      const found = await audit(p(), width);
      await screenshot(p(), `first-visit-${width}-${String(++shot).padStart(2, '0')}-${name}`, { fullPage });
      expect(found.overflowPx, `${name}: page wider than the ${width} px window`).toBeLessThanOrEqual(0);
      expect(found.smallText, `${name}: text below 11 px`).toEqual([]);
      expect(problems, `${name}: console errors`).toEqual([]);
    }

    beforeAll(async () => {
      context = await env().browser.newContext({
        viewport: { width, height: phone ? 844 : 900 },
        isMobile: phone,
        hasTouch: phone,
      });
      context.setDefaultTimeout(20_000);
      page = await context.newPage();
      watchConsole(page, problems);
    });

    afterAll(async () => {
      await context?.close();
    });

    step('the landing page says what the service does, shows the live example and the tiers', async () => {
      const res = await p().goto(url('/'));
      expect(res?.status()).toBe(200);
      await p()
        .getByRole('heading', { level: 1, name: 'Smaller images and handy web tools, over one API key' })
        .waitFor();
      await p().getByRole('heading', { name: 'Image API' }).waitFor();
      await p().getByRole('heading', { name: 'Tools API' }).waitFor();
      expect(await p().getByTestId('tiers').locator('tbody tr').count()).toBe(5);
      const images = p().locator('#sample img');
      await expect
        .poll(() =>
          images.evaluateAll((els) =>
            els.every((el) => (el as unknown as { naturalWidth: number }).naturalWidth === 960),
          ),
        )
        .toBe(true);
      await p().locator('#sample-range').fill('20');
      if (phone) {
        const header = await p().locator('header.site').boundingBox();
        expect(header?.height, 'header height at phone width').toBeLessThanOrEqual(PHONE_MAX_HEADER_PX);
      }
      await check('landing');
    });

    step('"Create account" signs up; the mailed link lands on "Create your first key"', async () => {
      await p().getByRole('link', { name: 'Create account' }).first().click();
      await p().getByRole('heading', { level: 1, name: 'Create your account' }).waitFor();
      await p().getByLabel('Name').fill(`First Visitor ${width}`);
      await p().getByLabel('Email').fill(email);
      await p()
        .getByLabel('Password')
        .fill(`Pw-${randomBytes(12).toString('base64url')}`);
      await check('signup');
      await p().getByRole('button', { name: 'Create account' }).click();
      await p().getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
      await confirmByMail(p(), env().mail, email);
      expect(new URL(p().url()).pathname).toBe('/keys');
      await check('first-key');
    });

    step('the new key comes with curl lines that have it filled in', async () => {
      await p().getByRole('button', { name: 'Create key' }).click();
      apiKey = await p().getByTestId('new-key').inputValue();
      expect(apiKey).toMatch(/^sr_live_[0-9A-Za-z]{32}$/);
      const lines = p().getByTestId('curl-line');
      expect(await lines.count()).toBe(3);
      const texts = await lines.allTextContents();
      expect(texts[0]).toContain('/api/v1/compress');
      expect(texts[1]).toContain('/api/v1/account');
      expect(texts[2]).toContain('/api/v1/tools');
      for (const t of texts) expect(t).toContain(apiKey);
      await lines.first().scrollIntoViewIfNeeded();
      const row = p().locator('tr[data-key-id]').first();
      // At phone width the row is a card: its status and its Revoke link are on screen, not cut off.
      for (const cell of [row.getByText('Active', { exact: true }), row.getByRole('link', { name: /^Revoke/ })]) {
        await cell.scrollIntoViewIfNeeded();
        const box = await cell.boundingBox();
        expect(box && box.x >= 0 && box.x + box.width <= width, 'Status and Revoke inside the window').toBe(true);
      }
      await check('key-created');
    });

    step('Try it warns before uploading an image the service would refuse', async () => {
      await p().getByRole('navigation').getByRole('link', { name: 'Try it' }).click();
      await p().getByRole('heading', { level: 1, name: 'Try the compressor' }).waitFor();
      const uploads: string[] = [];
      p().on('request', (r) => void (r.url().includes('/api/v1/console/compress') && uploads.push(r.url())));
      await p()
        .getByLabel('Image', { exact: true })
        .setInputFiles({ name: 'wide-poster.png', mimeType: 'image/png', buffer: await bigPng() });
      const warning = p().getByTestId('try-warning');
      await warning.waitFor();
      expect(await warning.textContent()).toMatch(
        /2400 × 1600 px this PNG needs about \d+ MB, more than the 100 MB .* Set Maximum width to (\d+) or less/,
      );
      const suggested = Number(/Maximum width to (\d+)/.exec((await warning.textContent()) ?? '')?.[1]);
      await p().getByRole('button', { name: 'Compress' }).click();
      await expect.poll(async () => (await p().locator('#try-error').textContent()) ?? '').toMatch(/^Not uploaded: /);
      await check('try-warning');
      expect(uploads).toEqual([]);
      await p().getByLabel('Maximum width').fill(String(suggested));
      await warning.waitFor({ state: 'hidden' });
      await p().getByLabel('Maximum width').fill('');
    });

    step('Try it compresses the sample; the slider compares it, also at 100 %', async () => {
      const sample = await readFile(SAMPLE);
      await p()
        .getByLabel('Image', { exact: true })
        .setInputFiles({ name: 'sample.jpg', mimeType: 'image/jpeg', buffer: sample });
      await expect
        .poll(async () => (await p().getByTestId('image-facts').textContent()) ?? '')
        .toContain('960 × 640 px');
      expect(await p().getByTestId('try-warning').isHidden()).toBe(true);
      await p().getByLabel('Quality').fill('60');
      await p().getByRole('button', { name: 'Compress' }).click();
      const result = p().getByTestId('result');
      await result.waitFor({ timeout: 60_000 });
      expect(await p().getByTestId('savings').textContent()).toMatch(/\d % smaller/);
      await p().locator('#try-compare-range').fill('70');
      await check('try-result');
      await p().getByLabel('Actual size (100 %)').check();
      const frame = p().locator('#try-compare .ba-frame');
      const img = await p().locator('#try-compare-after').boundingBox();
      expect(img?.width, 'shown at its 960 px').toBeCloseTo(960, 0);
      // On a phone the 960 px picture scrolls inside its frame; the page itself stays put (check()).
      if (phone)
        expect(
          await frame.evaluate(
            (el) =>
              (el as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth >
              (el as unknown as { clientWidth: number }).clientWidth,
          ),
        ).toBe(true);
      await check('try-actual-size');
    });

    step('the usage page shows the compression in a chart whose labels are readable', async () => {
      await p().getByRole('navigation').getByRole('link', { name: 'Usage' }).click();
      await p().getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
      await expect
        .poll(
          async () => {
            await p().reload();
            return Number((await p().getByTestId('total-compressions').textContent())?.replace(/\D/g, ''));
          },
          { timeout: 15_000, interval: 500 },
        )
        .toBeGreaterThanOrEqual(1);
      const chart = p()
        .locator(phone ? '.chart-narrow svg' : '.chart-wide svg')
        .first();
      expect(await chart.isVisible()).toBe(true);
      await check('usage');
    });

    step('the API reference fits: contents folded on a phone, paths beside their badges on a desktop', async () => {
      await p().getByRole('navigation').getByRole('link', { name: 'API reference' }).click();
      await p().waitForURL((u) => u.pathname === '/docs');
      const toc = p().locator('#docs-toc');
      expect(await toc.evaluate((el) => (el as unknown as { open: boolean }).open)).toBe(!phone);
      if (!phone) {
        // No path's text starts left of its badge's right edge: it never wraps under the badge.
        const underBadge = await p().evaluate<
          string[]
        >(`[...document.querySelectorAll('.api-toc a .method')].flatMap((badge) => {
          const right = badge.getBoundingClientRect().right;
          const code = badge.parentElement.querySelector('code');
          return [...code.getClientRects()].some((r) => r.left < right - 0.5) ? [code.textContent] : [];
        })`);
        expect(underBadge).toEqual([]);
      }
      await check('docs', false);
    });
  });
}
