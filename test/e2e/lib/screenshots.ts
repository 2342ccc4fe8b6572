// Full-page screenshots for a person to look at after a run (test/e2e/screenshots/, not committed), taken
// only when SHRINKRAY_SCREENSHOTS is set: nothing reads them otherwise, and Chromium drawing and encoding
// every page whole was the largest part of its CPU in `npm test` (a failed step's shot is always taken).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

const DIR = fileURLToPath(new URL('../screenshots/', import.meta.url));

/**
 * The whole page, or with `fullPage: false` the window only: the API reference is tens of thousands of
 * pixels tall, and photographing all of it costs seconds per shot.
 */
export async function screenshot(
  page: Page,
  name: string,
  options: { fullPage?: boolean; always?: boolean } = {},
): Promise<void> {
  if (!options.always && !process.env.SHRINKRAY_SCREENSHOTS) return;
  mkdirSync(DIR, { recursive: true });
  await page.screenshot({ path: join(DIR, `${name}.png`), fullPage: options.fullPage ?? true });
}
