// The API reference at 1280 px in Chromium: every page's tables keep their words whole. A name in the Name
// column never breaks (a nested name may wrap at its dots), and no word of another cell (a type, a media
// type, a description) is split while the table has room; long values wrap only at their own separators.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipWithoutChromium } from './lib/chromium.ts';
import { type DevService, sharedBrowser, sharedService } from './lib/service.ts';

/** Words longer than this may break in cells other than names: a token that long has no room in any layout. */
const LONGEST_UNBREAKABLE = 30;
/**
 * Pages read side by side: each page's check is Chromium's work (a range per word), so tabs overlap one
 * page's loading with another's measuring (one tab: 41 s for the 50 pages at a load of 2).
 */
const TABS = 3;

interface Split {
  page: string;
  column: string;
  word: string;
  cell: string;
}

/**
 * Runs in the page (a string: these files are typed for Node, not the DOM), with every <details> open (a
 * cell's header list, as a reader opens it): every word of the reference's table cells drawn on more than
 * one line.
 */
const SPLIT_WORDS = `(() => {
  for (const details of document.querySelectorAll('details')) details.open = true;
  const found = [];
  for (const table of document.querySelectorAll('table.api-table')) {
    const headings = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim());
    for (const row of table.querySelectorAll('tbody tr')) {
      [...row.children].forEach((cell, index) => {
        const column = headings[index] ?? String(index);
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (const match of node.textContent.matchAll(/[A-Za-z0-9_]+/g)) {
            if (column !== 'Name' && match[0].length > ${LONGEST_UNBREAKABLE}) continue;
            const range = document.createRange();
            range.setStart(node, match.index);
            range.setEnd(node, match.index + match[0].length);
            const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
            if (tops.size > 1) found.push({ column, word: match[0], cell: cell.textContent.trim().slice(0, 80) });
          }
        }
      });
    }
  }
  return found;
})()`;

describe.skipIf(skipWithoutChromium())('the API reference at 1280 px', () => {
  let service: DevService;
  let browser: Browser;
  let tabs: Page[];

  beforeAll(async () => {
    service = await sharedService();
    browser = await sharedBrowser(service);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    tabs = await Promise.all(Array.from({ length: TABS }, () => context.newPage()));
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('splits no word of a table cell, and no name at all, on any page', async () => {
    const [first] = tabs;
    await first!.goto(`${service.base}/docs`);
    const hrefs = await first!
      .locator('main a[href^="/docs/"]')
      .evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    const pages = [...new Set(hrefs.map((href) => href.split('#')[0]!))];
    expect(pages.length).toBeGreaterThan(30);
    const splits: Split[] = [];
    let names = 0;
    const queue = ['/docs', ...pages];
    await Promise.all(
      tabs.map(async (page) => {
        for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
          await page.goto(`${service.base}${path}`);
          names += await page.locator('table.api-table tbody th[scope="row"]').count();
          for (const split of await page.evaluate<Omit<Split, 'page'>[]>(SPLIT_WORDS))
            splits.push({ page: path, ...split });
        }
      }),
    );
    expect(names).toBeGreaterThan(100);
    expect(splits).toEqual([]);
  });
});
