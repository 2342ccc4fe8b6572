// The new visitor's path, as steps at one window width: the landing page, sign-up, the first
// key and its curl lines, "Try it" (which asks the service before uploading: a large PNG it accepts, a
// larger one it warns about and the service refuses) with the shipped sample, the usage page, and the API reference. Every screen is audited (lib/audit.ts) and
// photographed into test/e2e/screenshots/ as first-visit-<width>-<nn>-<step>.png.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { audit, watchConsole } from './audit.ts';
import { skipWithoutChromium } from './chromium.ts';
import { confirmByMail } from './mail.ts';
import { screenshot } from './screenshots.ts';
import { type DevService, sharedBrowser, sharedService } from './service.ts';
import { compressFromNode, flowPage, orderedSteps } from './steps.ts';

const SAMPLE = new URL('../../../src/web/assets/sample.jpg', import.meta.url);
const PHONE_MAX_HEADER_PX = 100;

/** A flat-colour PNG (a small file) of this size. */
const flatPng = (width: number, height: number): Promise<Buffer> =>
  sharp({ create: { width, height, channels: 3, background: '#3a6ea5' } })
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

    const { p, url } = flowPage(
      () => page,
      () => env().base,
    );
    /** Follows a link of the main navigation, unfolding it first on a phone (behind its "Menu" button). */
    async function navigate(name: string): Promise<void> {
      if (phone) await p().getByRole('button', { name: 'Menu' }).click();
      await p().getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
    }
    /** Whether the element is wholly inside the window as it is scrolled now. */
    const onScreen = async (locator: ReturnType<Page['locator']>): Promise<boolean> => {
      const box = await locator.boundingBox();
      const view = p().viewportSize();
      return (
        !!box &&
        !!view &&
        box.x >= 0 &&
        box.y >= 0 &&
        box.x + box.width <= view.width &&
        box.y + box.height <= view.height
      );
    };

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
      // The samples are compressed by the service when first asked for: on a fresh server that is the
      // engine's first instance, which takes more than expect.poll's one second on a busy machine.
      await expect
        .poll(
          () =>
            images.evaluateAll((els) =>
              els.every((el) => (el as unknown as { naturalWidth: number }).naturalWidth === 960),
            ),
          { timeout: 15_000 },
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
      const password = `Pw-${randomBytes(12).toString('base64url')}`;
      await p().getByLabel('Password').fill(password);
      await check('signup');
      await p().getByRole('button', { name: 'Create account' }).click();
      await p().getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
      await confirmByMail(p(), env().mail, email, password);
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

    step('Try it asks the service before uploading: it warns only of what the service refuses', async () => {
      await navigate('Try it');
      await p().getByRole('heading', { level: 1, name: 'Try the compressor' }).waitFor();
      const uploads: string[] = [];
      p().on(
        'request',
        (r) => void (new URL(r.url()).pathname === '/api/v1/console/compress' && uploads.push(r.url())),
      );
      const planned = () =>
        p().waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/console/compress/plan' && r.status() === 200);
      const warning = p().getByTestId('try-warning');
      const image = p().getByLabel('Image', { exact: true });

      // 2400 × 1600 as a JPEG fits the memory budget easily: no warning, and the service compresses it
      // (at the desktop width: what the phone's run adds is the layout, which the next step's result shows).
      const poster = await flatPng(2400, 1600);
      const posterPlan = planned();
      await image.setInputFiles({ name: 'wide-poster.png', mimeType: 'image/png', buffer: poster });
      expect((await (await posterPlan).json()).data.verdict).toBe('accepted');
      expect(await warning.isHidden()).toBe(true);
      const posterUploads = phone ? 0 : 1;
      if (!phone) {
        await p().getByRole('button', { name: 'Compress' }).click();
        await p().getByTestId('result').waitFor({ timeout: 60_000 });
        expect(await p().getByTestId('compressed-size').textContent()).toContain('2400 × 1600 px');
      }
      expect(uploads).toHaveLength(posterUploads);

      // 12000 × 8000 as a PNG does not fit (as a JPEG it would, streamed in rows): the page says so in
      // the service's words and uploads nothing.
      await p().getByLabel('Format', { exact: true }).selectOption('png');
      const mural = await flatPng(12000, 8000);
      const muralPlan = planned();
      await image.setInputFiles({ name: 'mural.png', mimeType: 'image/png', buffer: mural });
      await muralPlan;
      await warning.waitFor();
      const said = (await warning.textContent()) ?? '';
      expect(said).toMatch(
        /^At 12000×8000 this 12000×8000 PNG needs about \d+ MB, more than the 100 MB .* fits with width=(\d+) or less\.$/,
      );
      await p().getByRole('button', { name: 'Compress' }).click();
      await expect.poll(async () => (await p().locator('#try-error').textContent()) ?? '').toMatch(/^Not uploaded: /);
      await check('try-warning');
      expect(uploads).toHaveLength(posterUploads);
      // And the service really refuses it, with the same words.
      const refused = await compressFromNode(env().base, apiKey, mural, 'image/png', 'mural.png', { format: 'png' });
      expect(refused.status).toBe(422);
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('image_too_large');
      expect(said.toLowerCase()).toBe(`${error.message}.`.toLowerCase());
      const suggested = Number(/width=(\d+)/.exec(said)?.[1]);
      const fitted = planned();
      await p().getByLabel('Width', { exact: true }).fill(String(suggested));
      expect((await (await fitted).json()).data.verdict).toBe('accepted');
      await warning.waitFor({ state: 'hidden' });
      await p().getByLabel('Width', { exact: true }).fill('');
      await p().getByLabel('Format', { exact: true }).selectOption('jpeg');
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
      // The result opens at its top, with the download button and the slider on the same screen.
      await expect
        .poll(() =>
          p()
            .locator('#try-compare-after')
            .evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth),
        )
        .toBeGreaterThan(0);
      expect(await onScreen(p().getByRole('link', { name: 'Download' })), 'Download on screen').toBe(true);
      expect(await onScreen(p().locator('#try-compare-range')), 'slider on screen').toBe(true);
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
      await navigate('Usage');
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

    step('the API reference is an index of pages; on a desktop its paths sit beside their badges', async () => {
      await navigate('API reference');
      await p().waitForURL((u) => u.pathname === '/docs');
      await p().getByRole('heading', { level: 1, name: 'Shrinkray API' }).waitFor();
      if (!phone) {
        // No path's text starts left of its badge's right edge: it never wraps under the badge.
        const underBadge = await p().evaluate<
          string[]
        >(`[...document.querySelectorAll('.api-index a .method')].flatMap((badge) => {
          const right = badge.getBoundingClientRect().right;
          const code = badge.parentElement.querySelector('code');
          return [...code.getClientRects()].some((r) => r.left < right - 0.5) ? [code.textContent] : [];
        })`);
        expect(underBadge).toEqual([]);
      }
      await check('docs', false);
      await p().getByRole('link', { name: 'POST /api/v1/compress', exact: true }).click();
      await p().getByRole('heading', { level: 1, name: 'POST /api/v1/compress' }).waitFor();
      await check('docs-compress', false);
    });
  });
}

/**
 * The path at one width as a test file's whole body, against the run's shared service and Chromium (a
 * fresh context and account): one file per width, so the widths run side by side.
 */
export function firstVisitFile(width: number): void {
  describe.skipIf(skipWithoutChromium())('first visit', () => {
    let service: DevService;
    let browser: Browser;

    beforeAll(async () => {
      service = await sharedService();
      browser = await sharedBrowser(service);
    });

    afterAll(async () => {
      await browser?.close();
    });

    firstVisit(width, () => ({ browser, base: service.base, mail: service.mail }));
  });
}
