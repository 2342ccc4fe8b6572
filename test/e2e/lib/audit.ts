// Checks every screen of the new-visitor walk must pass, at any width: nothing wider than the window
// (no sideways scrolling), and no visible text drawn below 11 px, SVG text included at the size it is
// drawn (its font-size times the scale of its viewBox). Console errors are collected by `watchConsole`.
import type { Page } from 'playwright-core';

export const MIN_TEXT_PX = 11;

/** Runs in the page: each visible element with its own text, and the size that text is drawn at. */
const SMALL_TEXT = `(() => {
  const min = ${MIN_TEXT_PX};
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (['SCRIPT', 'STYLE', 'TITLE', 'DESC', 'OPTION', 'NOSCRIPT'].includes(el.tagName.toUpperCase())) continue;
    const own = [...el.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim() !== '').map((n) => n.textContent.trim()).join(' ');
    if (!own) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || el.getClientRects().length === 0 || el.closest('[hidden], .skip')) continue;
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) continue;
    let px = parseFloat(style.fontSize);
    if (el instanceof SVGElement && el.getScreenCTM) px *= el.getScreenCTM().a;
    if (px < min - 0.05) out.push(el.tagName.toLowerCase() + ' "' + own.slice(0, 40) + '" at ' + px.toFixed(1) + ' px');
  }
  return out;
})()`;

export interface Audit {
  overflowPx: number;
  smallText: string[];
}

/**
 * `width` is the window's: a mobile browser zooms out to fit a page that is too wide, so innerWidth
 * itself grows with the overflow and cannot be the yardstick.
 */
export async function audit(page: Page, width: number): Promise<Audit> {
  const overflowPx = (await page.evaluate<number>('document.documentElement.scrollWidth')) - width;
  const smallText = await page.evaluate<string[]>(SMALL_TEXT);
  return { overflowPx, smallText };
}

/** Collects console errors and uncaught exceptions of every page of the context into `into`. */
export function watchConsole(page: Page, into: string[]): void {
  page.on('console', (msg) => {
    if (msg.type() === 'error') into.push(`${page.url()}: console.error: ${msg.text()}`);
  });
  page.on('pageerror', (error) => into.push(`${page.url()}: ${error.message}`));
}
