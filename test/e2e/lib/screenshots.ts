// Full-page screenshots for a person to look at after a run (test/e2e/screenshots/, not committed).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

const DIR = fileURLToPath(new URL('../screenshots/', import.meta.url));

/**
 * The whole page, or with `fullPage: false` the window only: the API reference is tens of thousands of
 * pixels tall, and photographing all of it costs seconds per shot.
 */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  await page.screenshot({ path: join(DIR, `${name}.png`), fullPage: options.fullPage ?? true });
}
