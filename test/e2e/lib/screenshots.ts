// Full-page screenshots for a person to look at after a run (test/e2e/screenshots/, not committed).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

const DIR = fileURLToPath(new URL('../screenshots/', import.meta.url));

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  await page.screenshot({ path: join(DIR, `${name}.png`), fullPage: true });
}
