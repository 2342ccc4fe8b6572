// Debian's Chromium driven by playwright-core, which downloads no browser of its own. Without one the
// suite skips on a developer's machine but fails under SHRINKRAY_E2E=required (CI), so a missing
// browser can never pass unnoticed.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserServer } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
/**
 * Debian's headless shell (package chromium-headless-shell, built from the same chromium source): the tests'
 * browser when it is installed. It draws the same pages without the full browser's window machinery, which
 * was the largest part of Chromium's CPU in `npm test`: the console and API-reference files took 26–29 s
 * of CPU with it against 39–43 s with the full browser, back to back (2026-11-29, load 7–10).
 */
export const HEADLESS_SHELL_PATH = '/usr/lib/chromium/chromium-headless-shell';
const INSTALL_HINT = 'install it (as root) with: apt-get update && apt-get install -y chromium chromium-headless-shell';

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

export const chromiumPresent = (): boolean => existsSync(HEADLESS_SHELL_PATH) || existsSync(CHROMIUM_PATH);
/** The tests' browser: the headless shell where installed, else the full browser. */
const testBrowserPath = (): string => (existsSync(HEADLESS_SHELL_PATH) ? HEADLESS_SHELL_PATH : CHROMIUM_PATH);

/** Whether to skip the browser tests; throws when they are required and cannot run. */
export function skipWithoutChromium(): boolean {
  if (chromiumPresent()) return false;
  if (process.env.SHRINKRAY_E2E === 'required') {
    throw new Error(`SHRINKRAY_E2E=required but there is no Chromium at ${CHROMIUM_PATH}; ${INSTALL_HINT}`);
  }
  console.warn(`e2e tests skipped: no Chromium at ${CHROMIUM_PATH}; ${INSTALL_HINT}`);
  return true;
}

/** The full browser, for the benches' screenshots (test/bench/lib/png-inputs.ts): what a visitor's draws. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS });
}

/** One Chromium for the whole run (test/fixtures/dev-service-setup.ts); files reach it with `connectChromium`. */
export function launchChromiumServer(): Promise<BrowserServer> {
  return chromium.launchServer({ executablePath: testBrowserPath(), args: ARGS });
}

/** The shared Chromium; `close()` on the answer only disconnects this file. */
export function connectChromium(wsEndpoint: string): Promise<Browser> {
  return chromium.connect(wsEndpoint);
}
