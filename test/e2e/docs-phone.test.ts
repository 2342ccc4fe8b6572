// The API reference on a phone in Chromium: /docs is an index and a page per operation and schema, each a
// few screens at most, with no page or table wider than the screen. A file of its own so that it runs beside
// the console's flow (console.test.ts), whose pages it does not need: one file of all of it was the suite's
// longest by far.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipWithoutChromium } from './lib/chromium.ts';
import { type DevService, sharedBrowser, sharedService } from './lib/service.ts';

/** A phone's window (an iPhone 12 to 15's, in CSS pixels). */
const PHONE = { width: 390, height: 844 };
/**
 * The most screens of PHONE height any page of the API reference may take. POST /compress, the longest,
 * took 7.3 once its format values (jpg, media types, keep) and the 408 of a slow upload were described,
 * and 10.3 (8,722 px) once the transformations, format=json's ImageInfo, GIF input and the X-Frames,
 * X-Crop-Box, X-Gravity, X-Gain-Map and X-Encoder-Quality headers were, and 12.2 (10,301 px) once trim,
 * blur, sharpen, anim, gravity=face and AVIF and HEIC input were: each is a row a caller needs.
 */
const DOCS_MAX_SCREENS = 13;
/** Pages read side by side: loading one overlaps measuring another. */
const TABS = 4;

describe.skipIf(skipWithoutChromium())('the API reference on a phone', () => {
  let service: DevService;
  let browser: Browser;
  let tabs: Page[];
  const problems: string[] = [];

  beforeAll(async () => {
    service = await sharedService();
    browser = await sharedBrowser(service);
    const context = await browser.newContext({ viewport: PHONE });
    tabs = await Promise.all(Array.from({ length: TABS }, () => context.newPage()));
    for (const tab of tabs) {
      tab.on('pageerror', (error) => problems.push(`script error on ${tab.url()}: ${error.message}`));
      tab.on('response', (res) => {
        if (res.status() >= 500) problems.push(`${res.status()} ${res.url()}`);
      });
    }
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('is an index and a page per operation and schema, each a few screens at most, no table wider than the screen', async () => {
    const [first] = tabs;
    expect((await first!.goto(`${service.base}/docs`))?.status()).toBe(200);
    const links = await first!
      .locator('main a[href^="/docs/"]')
      .evaluateAll((els) => els.map((a) => a.getAttribute('href') ?? ''));
    const pages = ['/docs', ...new Set(links)];
    expect(pages.length).toBeGreaterThan(40);
    const heights: [string, number][] = [];
    const queue = [...pages];
    await Promise.all(
      tabs.map(async (tab) => {
        for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
          const res = await tab.goto(`${service.base}${path}`);
          expect(res?.status(), path).toBe(200);
          const found = await tab.evaluate<{ height: number; overflow: number; wideTables: string[] }>(`(() => ({
            height: document.documentElement.scrollHeight,
            overflow: document.documentElement.scrollWidth - window.innerWidth,
            wideTables: [...document.querySelectorAll('table')].flatMap((t) => {
              const r = t.getBoundingClientRect();
              return r.left < 0 || r.right > window.innerWidth ? [(t.caption ? t.caption.textContent : 'table') + ': ' + Math.round(r.width) + ' px'] : [];
            }),
          }))()`);
          heights.push([path, found.height]);
          expect(found.overflow, path).toBeLessThanOrEqual(0);
          expect(found.wideTables, path).toEqual([]);
        }
      }),
    );
    heights.sort((a, b) => b[1] - a[1]);
    console.log(
      `tallest /docs pages at ${PHONE.width} px: ${heights
        .slice(0, 5)
        .map(([path, h]) => `${path} ${h} px`)
        .join(', ')}`,
    );
    for (const [path, height] of heights) expect(height, path).toBeLessThanOrEqual(DOCS_MAX_SCREENS * PHONE.height);
    expect(problems).toEqual([]);
  });
});
