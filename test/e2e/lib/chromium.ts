// Debian's Chromium driven by playwright-core, which downloads no browser of its own. Without one the
// suite skips on a developer's machine but fails under SHRINKRAY_E2E=required (CI), so a missing
// browser can never pass unnoticed.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserServer } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
const INSTALL_HINT = 'install it (as root) with: apt-get update && apt-get install -y chromium';

// The background-networking flags stop Chromium's calls to Google services, which a closed network
// answers with a flood of errors and retries.
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const chromiumPresent = (): boolean => existsSync(CHROMIUM_PATH);

/** Whether to skip the browser tests; throws when they are required and cannot run. */
export function skipWithoutChromium(): boolean {
  if (chromiumPresent()) return false;
  if (process.env.SHRINKRAY_E2E === 'required') {
    throw new Error(`SHRINKRAY_E2E=required but there is no Chromium at ${CHROMIUM_PATH}; ${INSTALL_HINT}`);
  }
  console.warn(`e2e tests skipped: no Chromium at ${CHROMIUM_PATH}; ${INSTALL_HINT}`);
  return true;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS });
}

/** One Chromium for the whole run (test/fixtures/dev-service-setup.ts); files reach it with `connectChromium`. */
export function launchChromiumServer(): Promise<BrowserServer> {
  return chromium.launchServer({ executablePath: CHROMIUM_PATH, args: ARGS });
}

/** The shared Chromium; `close()` on the answer only disconnects this file. */
export function connectChromium(wsEndpoint: string): Promise<Browser> {
  return chromium.connect(wsEndpoint);
}
