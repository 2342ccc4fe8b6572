// A new visitor's whole first path at 1280 and 390 px (lib/first-visit.ts), in headless Chromium against
// the run's shared `npm run dev` (lib/service.ts): a fresh context (and account) per width.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe } from 'vitest';
import { skipWithoutChromium } from './lib/chromium.ts';
import { firstVisit } from './lib/first-visit.ts';
import { type DevService, sharedBrowser, sharedService } from './lib/service.ts';

describe.skipIf(skipWithoutChromium())('first visits', () => {
  let service: DevService;
  let browser: Browser;

  beforeAll(async () => {
    service = await sharedService();
    browser = await sharedBrowser(service);
  });

  afterAll(async () => {
    await browser?.close();
  });

  for (const width of [1280, 390]) firstVisit(width, () => ({ browser, base: service.base, mail: service.mail }));
});
